"""Helpers for the engine tests driven through the review workflow: a project whose checks pass, review runs
on it, the `fixloop next|record|answer|task` commands, and the files a run keeps on disk."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers_review import configure, issue, reviewer_doc
from helpers_runs import git, read_events, sha256_tree

from fixloop.cli import cli
from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.runs import creation, lifecycle
from fixloop.store import layout

REPO = Path(__file__).resolve().parents[3]
ENGINE = REPO / "scripts" / "fixloop"
PYTHON = shlex.quote(sys.executable)
CHECK_PASSES = f"{PYTHON} -c pass"
CHECK_FAILS = f"{PYTHON} -c 'raise SystemExit(3)'"
PASSING_CHECKS = {
    "test_command": CHECK_PASSES,
    "lint_command": CHECK_PASSES,
    "typecheck_command": CHECK_PASSES,
}
CHANGED_APP = "print('hello')\n"
FIXED_APP = "import logging\n\nlogging.info('hello')\n"

CR = "code-reviewer"
# A finding the fixer may fix, and one it may not (it needs a decision).
FIXABLE = issue("CR-1", 1, "Prints instead of logging")
NOT_FIXABLE = issue("CR-2", 1, "The module has no docstring", category="docs", auto_fixable=False)


def review_project(root: Path, *, change: bool = True, **config: Any) -> None:
    """Commit the project's fixloop config (checks that pass, then `config`) and, with `change`, change
    src/app.py: the one change to review."""
    configure(root, **{**PASSING_CHECKS, **config})
    git(root, "add", ".claude/fixloop.json")
    git(root, "commit", "-q", "-m", "fixloop config")
    if change:
        (root / "src" / "app.py").write_text(CHANGED_APP)


def start(root: Path, *, session: str = "", dry_run: bool = False, interactive: bool = False) -> str:
    """Start a review run of the uncommitted changes (git base HEAD); its run id."""
    started = creation.start_run(
        "review",
        root=root,
        git_base="",
        claude_session_id=session,
        dry_run=dry_run,
        interactive=interactive,
    )
    run_id: str = started["state"]["run_id"]
    return run_id


# ---- the commands ------------------------------------------------------------------------------------


def invoke_text(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.output


def invoke(*args: str, stdin: str | None = None) -> tuple[int, Any]:
    """Run `fixloop ARGS` in this process: (exit code, the JSON document it printed)."""
    code, output = invoke_text(*args, stdin=stdin)
    try:
        return code, json.loads(output)
    except json.JSONDecodeError:
        pytest.fail(f"not JSON (exit {code}): {output!r}")


def next_action(run_id: str) -> dict[str, Any]:
    code, action = invoke("next", run_id)
    assert code == 0, action
    result: dict[str, Any] = action
    return result


def record(run_id: str, agent: str, answer: Any) -> tuple[int, dict[str, Any]]:
    """`fixloop record RUN --agent AGENT -` with `answer` (a document, or raw text) on standard input."""
    text = answer if isinstance(answer, str) else json.dumps(answer)
    code, document = invoke("record", run_id, "--agent", agent, "-", stdin=text)
    return code, document


def record_valid(run_id: str, agent: str, answer: Mapping[str, Any]) -> dict[str, Any]:
    code, document = record(run_id, agent, answer)
    assert (code, document["valid"]) == (0, True), document
    return document


def review_round(run_id: str, found: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
    """Every reviewer answers: the findings `found` lists for it, else none."""
    for agent in REVIEWER_AGENTS:
        record_valid(run_id, agent, reviewer_doc(agent, found.get(agent, [])))


def error_of(code: int, document: Any) -> tuple[int, str]:
    """(exit code, error code) of a refused command."""
    return code, str(document["error"]["code"])


# ---- what a run keeps on disk --------------------------------------------------------------------------


def state(root: Path, run_id: str) -> dict[str, Any]:
    return lifecycle.load_run(root, run_id)


def log_path(root: Path, run_id: str) -> Path:
    return Path(state(root, run_id)["logging"]["log_files"]["jsonl"])


def events(root: Path, run_id: str, kind: str | None = None) -> list[dict[str, Any]]:
    found = read_events(log_path(root, run_id))
    return [event for event in found if kind is None or event["type"] == kind]


def fields(event: Mapping[str, Any]) -> dict[str, Any]:
    """An event's own fields (without ts, level, type and session_id)."""
    return {key: value for key, value in event.items() if key not in ("ts", "level", "type", "session_id")}


def run_files(root: Path, run_id: str) -> dict[str, str]:
    """sha256 of every file of the run: its state, ledger, tasks and both logs."""
    return sha256_tree(Path(layout.run_dir(root, run_id)), log_path(root, run_id).parent)


def task_file(root: Path, run_id: str, agent: str) -> Path:
    return Path(layout.run_dir(root, run_id)) / "tasks" / f"{agent}.md"


def agents_of(action: Mapping[str, Any]) -> list[str]:
    return [call["subagent_type"].split(":", 1)[1] for call in action.get("calls") or []]


def prompt(run_id: str, step: int, label: str, agent: str) -> str:
    """The short prompt of one call of a dispatch."""
    return f'fixloop run {run_id}, step {step}: {label}. No task given? Run "{ENGINE}" task {run_id} {agent}'


def issues_in_task(text: str) -> list[dict[str, Any]]:
    """The issues a verifier's or fixer's task hands it (the JSON list after `Issues:`)."""
    issues, _end = json.JSONDecoder().raw_decode(text.split("\nIssues:\n", 1)[1])
    return list(issues)
