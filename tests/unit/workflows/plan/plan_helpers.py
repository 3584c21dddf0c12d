"""Helpers for the execute-plan tests: a git project with a seven-task plan and a check that fails while a
file named BROKEN exists, execute-plan runs on it, and the task implementer's answers."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from helpers_review import configure
from helpers_runs import git, read_events

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.runs import creation, lifecycle
from fixloop.workflows import driver, intake

PYTHON = shlex.quote(sys.executable)
# The project's one check: it fails while BROKEN exists, and says so.
CHECK = "import pathlib, sys\nif pathlib.Path('BROKEN').exists():\n    sys.exit('BROKEN exists')\n"
TEST_COMMAND = f"{PYTHON} check.py"
PLAN = "docs/plan.md"
AGENT = "task-implementer"
PLAN_TEXT = """# Plan: greetings

Notes are plain bullets:

- every module prints one line.

## Phase 1: modules

- [ ] Create the module src/one.py
  files: src/one.py
  test: python src/one.py
- [ ] Create the module src/two.py
  files: src/two.py
- [ ] Change src/app.py to say hello
  files: src/app.py

## Phase 2: more modules

- [ ] Create src/four.py
  files: src/four.py
- [ ] Create src/five.py
  files: src/five.py
- [ ] Create src/six.py
  files: src/six.py

## Phase 3: docs

- [ ] Write docs/usage.md
  files: docs/usage.md
  depends: 4
"""
TASK_FILES = {
    1: "src/one.py",
    2: "src/two.py",
    3: "src/app.py",
    4: "src/four.py",
    5: "src/five.py",
    6: "src/six.py",
    7: "docs/usage.md",
}


def plan_project(root: Path, plan: str = PLAN_TEXT, **config: Any) -> None:
    """The project's check (check.py) and plan (docs/plan.md), committed; the check approved."""
    (root / "check.py").write_text(CHECK)
    (root / "docs").mkdir(exist_ok=True)
    (root / PLAN).write_text(plan)
    configure(root, test_command=TEST_COMMAND, use_verifier=False, **config)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "plan")


def start(
    root: Path, plan: str = PLAN, *, phase: str | None = None, dry_run: bool = False, session: str = ""
) -> str:
    """Start an execute-plan run; with a Claude Code `session`, its claims are checked against the ledger."""
    started = creation.start_run(
        "execute-plan",
        root=root,
        phase=phase,
        dry_run=dry_run,
        inputs={"plan": plan},
        claude_session_id=session,
    )
    run_id: str = started["state"]["run_id"]
    return run_id


def next_action(root: Path, run_id: str) -> dict[str, Any]:
    return driver.next_action(root, run_id)


def record(root: Path, run_id: str, agent: str, answer: Any) -> dict[str, Any]:
    """Record `answer` (a document, or raw text) as the final message of `agent`."""
    folder = root / ".claude" / "fixloop" / "answers"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{len(list(folder.iterdir())):04d}.json"
    path.write_text(answer if isinstance(answer, str) else json.dumps(answer))
    return intake.record_answer(root, run_id, str(path.relative_to(root)), agent, None)


def state(root: Path, run_id: str) -> dict[str, Any]:
    return lifecycle.load_run(root, run_id)


def events(root: Path, run_id: str, kind: str | None = None) -> list[dict[str, Any]]:
    found = read_events(state(root, run_id)["logging"]["log_files"]["jsonl"])
    return [event for event in found if kind is None or event["type"] == kind]


def agents_of(action: dict[str, Any]) -> list[str]:
    return [call["subagent_type"].split(":", 1)[1] for call in action.get("calls") or []]


def answer(
    tasks: Iterable[int], failed: dict[int, str] | None = None, files: dict[int, list[str]] | None = None
) -> dict[str, Any]:
    """The implementer's answer: each task done (with its file) unless `failed` gives its reason."""
    failed = failed or {}
    outcomes = []
    for task_id in tasks:
        changed = (files or {}).get(task_id, [TASK_FILES[task_id]])
        if task_id in failed:
            outcomes.append({"task_id": task_id, "status": "failed", "reason": failed[task_id]})
        else:
            outcomes.append({"task_id": task_id, "status": "done", "files": changed})
    modified = sorted({path for item in outcomes for path in item.get("files", [])})
    return {"status": "success", "agent": AGENT, "tasks": outcomes, "files_modified": modified}


def implement(root: Path, run_id: str, tasks: Iterable[int], *, broken: bool = False) -> dict[str, Any]:
    """Do the tasks as an implementer would (write each task's file; with `broken`, also BROKEN) and
    record the answer; the record's result."""
    ids = list(tasks)
    for task_id in ids:
        target = root / TASK_FILES[task_id]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"print('task {task_id}')\n")
    if broken:
        (root / "BROKEN").write_text("x\n")
    result = record(root, run_id, AGENT, answer(ids))
    assert result["valid"], result
    return result


def clean_review(root: Path, run_id: str) -> None:
    """Every reviewer answers without findings."""
    for agent in REVIEWER_AGENTS:
        result = record(root, run_id, agent, {"status": "success", "agent": agent, "issues": []})
        assert result["valid"], result


def checked(root: Path, plan: str = PLAN) -> list[bool]:
    """Whether each task item of the plan file is checked, in order."""
    return [
        line.lstrip().startswith("- [x]") for line in (root / plan).read_text().splitlines() if "- [" in line
    ]


def outcomes(root: Path, run_id: str) -> dict[str, str]:
    return {key: value["status"] for key, value in state(root, run_id)["plan"]["outcomes"].items()}
