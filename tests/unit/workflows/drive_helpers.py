"""A review run driven to its end through `fixloop next|record|answer`, every agent answered by a function,
and a fresh project for tests that make one per hypothesis example."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers_runs import git
from workflows.flow_helpers import invoke, issues_in_task, record

from fixloop.workflows import driver

VERIFIER = "review-verifier"
FIXER = "review-fixer"

# (agent, the issues its task hands it: verifier and fixer only) -> its answer, a document or raw text
Answerer = Callable[[str, list[dict[str, Any]] | None], Any]


@dataclass
class Step:
    command: str  # "next", "answer", or "record AGENT"
    code: int
    output: Any


def drive(root: Path, run_id: str, answer: Answerer, max_steps: int = 12) -> list[Step]:
    """Take the run's next steps until it stops (or a command fails, or `max_steps` `next`s ran)."""
    steps: list[Step] = []
    for _ in range(max_steps):
        code, action = invoke("next", run_id)
        steps.append(Step("next", code, action))
        if code != 0 or action["action"] == "stop":
            break
        if action["action"] == "ask_user":
            code, answered = invoke("answer", run_id, "--default")
            steps.append(Step("answer", code, answered))
            continue
        for call in action["calls"]:
            agent = call["subagent_type"].split(":", 1)[1]
            handed = issues_in_task(driver.task(root, run_id, agent)) if agent in (VERIFIER, FIXER) else None
            code, recorded = record(run_id, agent, answer(agent, handed))
            steps.append(Step(f"record {agent}", code, recorded))
    return steps


def verifier_answer(issues: list[dict[str, Any]], evidence: Callable[[str], str]) -> dict[str, Any]:
    """Every issue handed is correct, its evidence as `evidence(issue id)` says."""
    return {
        "status": "success",
        "agent": VERIFIER,
        "verification_result": {
            "accuracy_check": [
                {
                    "issue_id": issue["id"],
                    "accuracy_status": "CORRECT",
                    "evidence": evidence(issue["id"]),
                    "deletion_required": False,
                }
                for issue in issues
            ],
            "rule_compliance_check": [],
            "quality_assessment": {"overall_score": 90, "quality_level": "EXCELLENT"},
        },
    }


def fixer_answer(
    issues: list[dict[str, Any]], status: str = "succeeded", reason: Callable[[str], str] | None = None
) -> dict[str, Any]:
    """Every issue handed fixed (or failed, with `reason(issue id)`), in the files the issues name."""
    files = sorted({issue["file"] for issue in issues})
    return {
        "status": "success" if status == "succeeded" else "failed",
        "agent": FIXER,
        "results": [
            {
                "issue_id": issue["id"],
                "status": status,
                "reason": None if reason is None else reason(issue["id"]),
                "files": [issue["file"]] if status == "succeeded" else [],
            }
            for issue in issues
        ],
        "files_modified": files if status == "succeeded" else [],
    }


@contextmanager
def fresh_project(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A git project like the `git_project` fixture's, made anew (for one hypothesis example)."""
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "project"
        (root / "src").mkdir(parents=True)
        git(root, "init", "-q", "-b", "main")
        (root / "README.md").write_text("# demo\n")
        (root / "src" / "app.py").write_text("print('hi')\n")
        (root / ".gitignore").write_text("*.log\n")
        git(root, "add", ".")
        git(root, "commit", "-q", "-m", "init")
        monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root.resolve()))
        monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(Path(temp) / "data"))
        previous = os.getcwd()
        os.chdir(root)
        try:
            yield root.resolve()
        finally:
            os.chdir(previous)
