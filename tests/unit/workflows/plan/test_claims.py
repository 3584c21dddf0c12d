"""A task the task implementer says is done counts only when a recorded edit backs it: the hook ledger has a
fixloop agent's write of a file the batch changed, one of the task's own files when it names some. Runs
outside Claude Code (no session, no hooks) are not checked."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from helpers_runs import FakeClock
from helpers_touches import agent_writes
from workflows.plan.plan_helpers import (
    AGENT,
    PLAN,
    TASK_FILES,
    answer,
    checked,
    events,
    next_action,
    outcomes,
    plan_project,
    record,
    start,
    state,
)

from fixloop.store import layout, ledger
from fixloop.workflows import driver

SESSION = "session-plan-1"


@pytest.fixture
def project(git_project: Path, fake_clock: FakeClock) -> Path:
    plan_project(git_project)
    return git_project


def run_dir(root: Path, run_id: str) -> Path:
    return Path(layout.run_dir(root, run_id))


def say(root: Path, run_id: str, document: dict[str, Any]) -> None:
    """The implementer, called for the open dispatch, ends with `document` (the ledger lines of the hooks),
    which is then recorded."""
    text = json.dumps(document)
    step = state(root, run_id)["flow"]["dispatch"]["id"]
    common = {"agent_type": f"fixloop:{AGENT}", "agent": AGENT}
    ledger.append(
        run_dir(root, run_id), {"kind": "call", **common, "step": step, "tool_use_id": f"call-{step}"}
    )
    digest = hashlib.sha256(text.encode()).hexdigest()
    ledger.append(run_dir(root, run_id), {"kind": "stop", **common, "message_sha256": digest})
    result = record(root, run_id, AGENT, text)
    assert result["valid"], result


def claim(
    root: Path, run_id: str, tasks: Iterable[int], *, edited: Iterable[int] = (), bash: Iterable[int] = ()
) -> None:
    """The implementer writes the files of `edited` through its Write tool (recorded by the hooks) and those
    of `bash` without it (a shell command: no ledger line), then says every task of `tasks` is done."""
    for task_id in edited:
        agent_writes(
            root, run_dir(root, run_id), TASK_FILES[task_id], f"print('task {task_id}')\n", agent=AGENT
        )
    for task_id in bash:
        target = root / TASK_FILES[task_id]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"print('task {task_id}')\n")
    say(root, run_id, answer(list(tasks)))


def unverified_warnings(root: Path, run_id: str) -> list[tuple[Any, ...]]:
    return [
        (event["batch"], event["task_ids"], event["message"])
        for event in events(root, run_id, "WARNING")
        if event["code"] == "TASK_UNVERIFIED"
    ]


def test_a_done_without_a_recorded_edit_of_its_file_is_unverified_and_not_checked_off(project: Path) -> None:
    run_id = start(project, session=SESSION)
    next_action(project, run_id)
    claim(project, run_id, [1, 2, 3], edited=[1, 2])  # src/app.py (task 3) is not touched
    retry = next_action(project, run_id)
    assert retry["label"] == "carry out plan batch 1 of 3 (attempt 2)"
    why = (
        "the implementer said done, but none of its files (src/app.py) was changed by a recorded edit "
        "(TASK_UNVERIFIED)"
    )
    assert f"- task 3 failed: {why}\n" in driver.task(project, run_id, AGENT)
    assert checked(project) == [False] * 7
    claim(project, run_id, [1, 2, 3])  # the same claim again, still without an edit of src/app.py
    stop = next_action(project, run_id)

    assert (stop["action"], stop["status"], stop["reason"]) == ("stop", "failed", "PLAN_BATCH_FAILED")
    assert stop["error"]["message"].startswith(
        f"Batch 1 of 3 (tasks 1, 2, 3) is not done after 2 attempt(s) of the task implementer: task 3 is not "
        f"verified ({why})."
    )
    # tasks 1 and 2 were written through the Write tool in attempt 1: they stay proven
    assert outcomes(project, run_id) == {
        "1": "done", "2": "done", "3": "unverified", "4": "not_run", "5": "not_run", "6": "not_run",
        "7": "not_run",
    }  # fmt: skip
    assert state(project, run_id)["plan"]["outcomes"]["3"] == {
        "status": "unverified",
        "reason": why,
        "code": "TASK_UNVERIFIED",
        "files": ["src/app.py"],
        "batch": 1,
        "attempts": 2,
    }
    assert checked(project) == [True, True] + [False] * 5
    lines = stop["message"].splitlines()
    assert (
        "Task claims not verified: 3 (the task implementer said done, but no recorded edit changed their "
        "files): not done, not checked off."
    ) in lines
    message = (
        "Batch 1: the task implementer said 3 done, but no recorded edit of their files changed them; not "
        "counted as done, not checked off."
    )
    assert unverified_warnings(project, run_id) == [(1, [3], message), (1, [3], message)]


def test_a_batch_done_only_by_a_shell_command_has_no_task_done(project: Path) -> None:
    run_id = start(project, session=SESSION)
    next_action(project, run_id)
    for _ in range(2):
        claim(project, run_id, [1, 2, 3], bash=[1, 2, 3])
        action = next_action(project, run_id)
    assert (action["status"], action["reason"]) == ("failed", "PLAN_BATCH_FAILED")
    assert list(outcomes(project, run_id).values())[:3] == ["unverified"] * 3
    reason = state(project, run_id)["plan"]["outcomes"]["1"]["reason"]
    assert reason == (
        "the implementer said done, but no file of the batch was changed by a recorded edit (TASK_UNVERIFIED)"
    )
    assert checked(project) == [False] * 7
    assert "Task claims not verified: 1, 2, 3 " in action["message"]


def test_recorded_edits_make_the_batch_green(project: Path) -> None:
    run_id = start(project, session=SESSION)
    next_action(project, run_id)
    claim(project, run_id, [1, 2, 3], edited=[1, 2, 3])
    assert next_action(project, run_id)["label"] == "carry out plan batch 2 of 3"
    assert checked(project) == [True] * 3 + [False] * 4
    assert unverified_warnings(project, run_id) == []
    data = state(project, run_id)["flow"]["phases"]["3"]["data"]
    assert data["edited"] is None  # reset for the next batch
    assert (run_dir(project, run_id) / "touches" / "plan-batch-1" / "window.json").is_file()


def test_a_task_naming_no_file_is_backed_by_any_recorded_edit_of_the_batch(project: Path) -> None:
    plan = "# Plan: tidy\n\n- [ ] Tidy the modules\n- [ ] Create src/one.py\n  files: src/one.py\n"
    (project / PLAN).write_text(plan)
    run_id = start(project, session=SESSION)
    next_action(project, run_id)
    agent_writes(project, run_dir(project, run_id), "src/one.py", "print(1)\n", agent=AGENT)
    document = {
        "status": "success",
        "agent": AGENT,
        "tasks": [
            {"task_id": 1, "status": "done", "files": []},
            {"task_id": 2, "status": "done", "files": ["src/one.py"]},
        ],
        "files_modified": ["src/one.py"],
    }
    say(project, run_id, document)
    action = next_action(project, run_id)
    assert action["label"] == "review round 1"
    assert outcomes(project, run_id) == {"1": "done", "2": "done"}


def test_outside_claude_code_claims_are_not_checked(project: Path) -> None:
    run_id = start(project)  # no session: answers recorded by hand, no hooks
    next_action(project, run_id)
    claim(project, run_id, [1, 2, 3], bash=[1, 2, 3])
    assert next_action(project, run_id)["label"] == "carry out plan batch 2 of 3"
    assert checked(project) == [True] * 3 + [False] * 4
    assert unverified_warnings(project, run_id) == []


def test_work_a_stopped_run_left_in_place_backs_the_claims_of_the_run_that_resumes_it(project: Path) -> None:
    first = start(project, session=SESSION)
    next_action(project, first)
    (project / "BROKEN").write_text("x\n")  # the checks fail: the batch stays red
    for attempt in range(2):
        claim(project, first, [1, 2, 3], edited=[1, 2, 3] if attempt == 0 else [])
        stop = next_action(project, first)
    assert (stop["status"], list(outcomes(project, first).values())[:3]) == ("failed", ["unverified"] * 3)
    (project / "BROKEN").unlink()  # the user fixes what failed
    run_id = start(project, session=SESSION)
    next_action(project, run_id)
    claim(project, run_id, [1, 2, 3])  # the work is already there: nothing to edit
    assert next_action(project, run_id)["label"] == "carry out plan batch 2 of 3"
    assert checked(project) == [True] * 3 + [False] * 4
    assert unverified_warnings(project, run_id) == []
