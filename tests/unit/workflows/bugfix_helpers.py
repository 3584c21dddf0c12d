"""Helpers for the workflow engine tests: a tiny pytest project with a bug, runs on it, agent answers."""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from helpers_runs import git, read_events

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.runs import creation, lifecycle, trust
from fixloop.workflows import driver, intake

# The project's tests, run the way a user would configure them (no caches or bytecode written).
PYTEST = f"{shlex.quote(sys.executable)} -B -m pytest -p no:cacheprovider -p no:hypothesispytest"
FAILING = "tests/test_calc.py::test_divide"
CALC_BUGGY = "def divide(a, b):\n    return a * b\n"
CALC_FIXED = "def divide(a, b):\n    return a / b\n"
NEW_TEST = "tests/test_divide_by_two.py"
NEW_TEST_NAME = "test_divide_by_two"
RED_TEST = "from calc import divide\n\n\ndef test_divide_by_two():\n    assert divide(4, 2) == 2\n"
GREEN_BEFORE_FIX = "from calc import divide\n\n\ndef test_divide_by_two():\n    assert divide(2, 1) == 2\n"


def write_calc_project(root: Path, buggy: bool = True) -> None:
    """calc.py (with the bug unless `buggy` is False) and its test, committed."""
    (root / "calc.py").write_text(CALC_BUGGY if buggy else CALC_FIXED)
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_calc.py").write_text(
        "from calc import divide\n\n\ndef test_divide():\n    assert divide(6, 3) == 2\n"
    )
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "calc")


def start(
    root: Path,
    *,
    stack: str = "backend",
    phase: str | None = None,
    dry_run: bool = False,
    description: str = "",
    **config: Any,
) -> str:
    """Start a bugfix run with `config` (test_command defaults to the project's pytest)."""
    settings = {"test_command": PYTEST, "use_verifier": False, **config}
    path = root / ".claude" / "fixloop.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({key: value for key, value in settings.items() if value is not None}))
    if settings.get("test_command"):
        trust.approve(root, {"tests": settings["test_command"]})  # the user approved the project's tests
    started = creation.start_run(
        "bugfix",
        root=root,
        stack=stack,
        phase=phase,
        dry_run=dry_run,
        free_text=description,
        claude_session_id="",
    )
    run_id: str = started["state"]["run_id"]
    return run_id


def record(root: Path, run_id: str, agent: str, answer: Any) -> dict[str, Any]:
    """Record `answer` (a document, or raw text) as the final message of `agent`."""
    folder = root / ".claude" / "answers"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{len(list(folder.iterdir())):04d}.json"
    path.write_text(answer if isinstance(answer, str) else json.dumps(answer))
    return intake.record_answer(root, run_id, str(path.relative_to(root)), agent, None)


def next_action(root: Path, run_id: str) -> dict[str, Any]:
    return driver.next_action(root, run_id)


def state(root: Path, run_id: str) -> dict[str, Any]:
    return lifecycle.load_run(root, run_id)


def events(root: Path, run_id: str, kind: str | None = None) -> list[dict[str, Any]]:
    path = state(root, run_id)["logging"]["log_files"]["jsonl"]
    found = read_events(path)
    return [event for event in found if kind is None or event["type"] == kind]


def tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every project file outside .git and .claude (the engine's own directory)."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not {".git", ".claude"} & set(path.relative_to(root).parts)
    }


def agents_of(action: dict[str, Any]) -> list[str]:
    return [call["subagent_type"].split(":", 1)[1] for call in action.get("calls") or []]


# ---- agent answers -----------------------------------------------------------------------------------


def analyst(test_id: str = FAILING, category: str = "assertion") -> dict[str, Any]:
    return {
        "status": "success",
        "agent": "failure-analyst",
        "failures": [{"test_id": test_id, "category": category, "summary": "divide returns a product"}],
    }


def root_cause(
    clarity: int = 90, specificity: int = 90, context: int = 80, file: str | None = "calc.py"
) -> dict[str, Any]:
    return {
        "status": "success",
        "agent": "root-cause-analyst",
        "root_cause": {
            "summary": "divide multiplies its arguments.",
            "file": file,
            "line": 2,
            "evidence": ["calc.py:2 returns a * b"],
        },
        "factors": {"clarity": clarity, "specificity": specificity, "context": context},
    }


def design() -> dict[str, Any]:
    return {
        "status": "success",
        "agent": "fix-designer",
        "summary": "Divide instead of multiplying.",
        "changes": [{"file": "calc.py", "change": "Return a / b."}],
        "test": {"file": NEW_TEST, "name": NEW_TEST_NAME},
        "risks": ["Division by zero now raises."],
        "alternatives": [
            {"approach": "Use operator.truediv", "rejected_because": "Same change, less plain."}
        ],
    }


def implementer_test(file: str = NEW_TEST, name: str = NEW_TEST_NAME) -> dict[str, Any]:
    return {
        "status": "success",
        "agent": "implementer",
        "stage": "test",
        "test": {"file": file, "name": name},
    }


def implementer_fix(*files: str) -> dict[str, Any]:
    return {
        "status": "success",
        "agent": "implementer",
        "stage": "fix",
        "files_modified": list(files or ["calc.py"]),
    }


def clean_review(root: Path, run_id: str) -> None:
    """Every reviewer answers without findings."""
    for agent in REVIEWER_AGENTS:
        answer = record(root, run_id, agent, {"status": "success", "agent": agent, "issues": []})
        assert answer["valid"], answer


def through_design(root: Path, run_id: str) -> dict[str, Any]:
    """Answer phases 0-2 well; the action after the designer's answer."""
    assert agents_of(next_action(root, run_id)) == ["failure-analyst"]
    assert record(root, run_id, "failure-analyst", analyst())["valid"]
    assert agents_of(next_action(root, run_id)) == ["root-cause-analyst"]
    assert record(root, run_id, "root-cause-analyst", root_cause())["valid"]
    assert agents_of(next_action(root, run_id)) == ["fix-designer"]
    assert record(root, run_id, "fix-designer", design())["valid"]
    return next_action(root, run_id)
