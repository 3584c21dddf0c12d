"""execute-plan on the engine, on a real git project with a seven-task plan: batches, verification, checking
tasks off, stopping at a batch that stays red, resuming, plan errors and a dry run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers_runs import FakeClock
from workflows.bugfix_helpers import tree_digest
from workflows.plan.plan_helpers import (
    AGENT,
    PLAN,
    TEST_COMMAND,
    agents_of,
    answer,
    checked,
    clean_review,
    events,
    implement,
    next_action,
    outcomes,
    plan_project,
    record,
    start,
    state,
)

from fixloop.workflows import driver

HEADLINE = 'Plan docs/plan.md ("Plan: greetings")'


@pytest.fixture
def project(git_project: Path, fake_clock: FakeClock) -> Path:
    plan_project(git_project)
    return git_project


def phase_results(root: Path, run_id: str) -> list[tuple[str, str]]:
    return [(item["phase"], item["status"]) for item in state(root, run_id)["phase_results"]]


def batch_of(action: dict[str, object]) -> tuple[list[str], object, str]:
    calls = action["calls"]
    assert isinstance(calls, list)
    return agents_of(action), action["label"], calls[0]["description"]


def run_to_red(root: Path) -> tuple[str, dict[str, Any]]:
    """Batch 1 green; batch 2 leaves BROKEN behind on both attempts: the run stops."""
    run_id = start(root)
    next_action(root, run_id)
    implement(root, run_id, [1, 2, 3])
    assert batch_of(next_action(root, run_id))[2] == "Plan batch 2/3: tasks 4, 5, 6"
    implement(root, run_id, [4, 5, 6], broken=True)
    retry = next_action(root, run_id)
    assert batch_of(retry) == (
        [AGENT],
        "carry out plan batch 2 of 3 (attempt 2)",
        "Plan batch 2/3: tasks 4, 5, 6",
    )
    task = driver.task(root, run_id, AGENT)
    assert "## The previous attempt\nAttempt 1 did not make this batch green:\n" in task
    assert f"- tests failed: `{TEST_COMMAND}` (exit code 1)\n  | BROKEN exists\n" in task
    implement(root, run_id, [4, 5, 6])  # BROKEN is still there
    return run_id, next_action(root, run_id)


def test_seven_tasks_in_three_batches(project: Path) -> None:
    run_id = start(project)
    first = next_action(project, run_id)
    assert batch_of(first) == ([AGENT], "carry out plan batch 1 of 3", "Plan batch 1/3: tasks 1, 2, 3")
    task = driver.task(project, run_id, AGENT)
    assert task.startswith(
        'Carry out batch 1 of 3 of the plan `docs/plan.md` ("Plan: greetings"): tasks 1, 2, 3, in this order.'
    )
    assert "### Task 1: Create the module src/one.py\nSection: Phase 1: modules\nFiles: src/one.py\n" in task
    assert "Test: python src/one.py" in task and f"- tests: `{TEST_COMMAND}`" in task
    assert "the task-implementer contract" in task and "The previous attempt" not in task

    implement(project, run_id, [1, 2, 3])
    assert checked(project) == [False] * 7  # checked off once the checks passed, in the next step
    assert batch_of(next_action(project, run_id))[1:] == (
        "carry out plan batch 2 of 3",
        "Plan batch 2/3: tasks 4, 5, 6",
    )
    assert checked(project) == [True] * 3 + [False] * 4
    implement(project, run_id, [4, 5, 6])
    assert batch_of(next_action(project, run_id))[1:] == (
        "carry out plan batch 3 of 3",
        "Plan batch 3/3: task 7",
    )
    assert "Depends on: 4 (done)" in driver.task(project, run_id, AGENT)
    implement(project, run_id, [7])

    review = next_action(project, run_id)
    assert review["label"] == "review round 1"
    assert state(project, run_id)["changed_files"] == [
        "docs/usage.md", "src/app.py", "src/five.py", "src/four.py", "src/one.py", "src/six.py", "src/two.py",
    ]  # fmt: skip
    clean_review(project, run_id)
    stop = next_action(project, run_id)
    assert (stop["action"], stop["status"]) == ("stop", "success")
    assert stop["summary"] == {
        "errors_fixed": 0,
        "files_changed": 7,
        "review_issues_fixed": 0,
        "user_interactions": 0,
        "plan": PLAN,
        "tasks": {"done": [1, 2, 3, 4, 5, 6, 7]},
    }
    lines = stop["message"].splitlines()
    assert lines[3:6] == [
        f"{HEADLINE}: 7 of 7 task(s) done.",
        "- [x] 1. Create the module src/one.py (done, batch 1)",
        "- [x] 2. Create the module src/two.py (done, batch 1)",
    ]
    assert lines[10] == "- [x] 7. Write docs/usage.md (done, batch 3)"
    assert checked(project) == [True] * 7
    assert phase_results(project, run_id) == [(f"phase_{n}", "success") for n in range(6)]
    assert events(project, run_id, "SESSION_END")[0]["summary"] == stop["summary"]
    steps = [(e["step"], e["status"]) for e in events(project, run_id, "STEP_END")]
    assert steps == [("plan_batch_1", "success"), ("plan_batch_2", "success"), ("plan_batch_3", "success")]
    warned = [(e["code"], e["task_id"], e["line"]) for e in events(project, run_id, "WARNING")]
    assert warned[0] == ("PLAN_FILE_TO_CREATE", 1, 9) and len(warned) == 6


def test_a_batch_that_stays_red_stops_the_run_with_a_report(project: Path) -> None:
    run_id, stop = run_to_red(project)
    assert (stop["action"], stop["status"], stop["reason"]) == ("stop", "failed", "PLAN_BATCH_FAILED")
    assert stop["error"] == {
        "code": "PLAN_BATCH_FAILED",
        "message": "Batch 2 of 3 (tasks 4, 5, 6) is not done after 2 attempt(s) of the task implementer: "
        f"the checks failed (tests: `{TEST_COMMAND}`). Its changes are still in place. Fix what fails, then "
        "run /fixloop:execute-plan docs/plan.md again: it resumes at task 4.",
    }
    assert checked(project) == [True] * 3 + [False] * 4
    assert outcomes(project, run_id) == {
        "1": "done", "2": "done", "3": "done", "4": "unverified", "5": "unverified", "6": "unverified",
        "7": "not_run",
    }  # fmt: skip
    assert stop["summary"]["tasks"] == {"done": [1, 2, 3], "unverified": [4, 5, 6], "not_run": [7]}
    lines = stop["message"].splitlines()
    assert f"{HEADLINE}: 3 of 7 task(s) done; 3 unverified, 1 not run." in lines
    assert (
        "- [ ] 4. Create src/four.py (unverified, batch 2: the checks failed after its batch: tests)" in lines
    )
    assert "- [ ] 7. Write docs/usage.md (not run)" in lines
    assert phase_results(project, run_id) == [
        ("phase_0", "success"), ("phase_1", "success"), ("phase_2", "success"), ("phase_3", "failed"),
    ]  # fmt: skip
    error = events(project, run_id, "ERROR")[0]
    assert (error["code"], error["batch"], error["tasks"], error["resume_at"]) == (
        "PLAN_BATCH_FAILED",
        2,
        [4, 5, 6],
        4,
    )
    attempts = state(project, run_id)["flow"]["phases"]["3"]["data"]["attempts"]
    assert [(item["batch"], item["attempt"], item["verification"]["failed"]) for item in attempts] == [
        (1, 1, []), (2, 1, ["tests"]), (2, 2, ["tests"]),
    ]  # fmt: skip


def test_a_run_started_again_resumes_at_the_first_unfinished_task(project: Path) -> None:
    first, _ = run_to_red(project)
    (project / "BROKEN").unlink()  # the user fixes what failed
    run_id = start(project)
    assert batch_of(next_action(project, run_id))[1:] == (
        "carry out plan batch 1 of 2",
        "Plan batch 1/2: tasks 4, 5, 6",
    )
    batches = events(project, run_id, "ANALYSIS_RESULT")[0]["result"]
    assert batches == {"batches": [[4, 5, 6], [7]], "tasks": 4, "resume_at": 4, "already_done": 3}
    implement(project, run_id, [4, 5, 6])
    assert next_action(project, run_id)["label"] == "carry out plan batch 2 of 2"
    implement(project, run_id, [7])
    assert next_action(project, run_id)["label"] == "review round 1"
    # the review also covers what the stopped run changed and left in place (BROKEN is gone)
    assert state(project, run_id)["changed_files"] == [
        "docs/usage.md", "src/app.py", "src/five.py", "src/four.py", "src/one.py", "src/six.py", "src/two.py",
    ]  # fmt: skip
    (resumed,) = [e for e in events(project, run_id, "DATA_COLLECTED") if e["data_type"] == "resumed_changes"]
    # (tasks 4-6 wrote what the stopped run had written: this run changed docs/usage.md only)
    earlier = ["src/app.py", "src/five.py", "src/four.py", "src/one.py", "src/six.py", "src/two.py"]
    assert resumed["summary"] == {"run_ids": [first], "files": earlier}
    clean_review(project, run_id)
    stop = next_action(project, run_id)
    assert stop["status"] == "success"
    assert stop["summary"]["tasks"] == {"done": [4, 5, 6, 7], "already_done": [1, 2, 3]}
    assert f"{HEADLINE}: 7 of 7 task(s) done." in stop["message"].splitlines()
    assert "- [x] 1. Create the module src/one.py (already done)" in stop["message"].splitlines()
    assert checked(project) == [True] * 7


def test_one_retry_can_make_a_batch_green(project: Path) -> None:
    run_id = start(project)
    next_action(project, run_id)
    failed = record(project, run_id, AGENT, answer([1, 2, 3], failed={2: "src/two.py needs a name"}))
    assert failed["valid"]
    retry = next_action(project, run_id)
    assert retry["label"] == "carry out plan batch 1 of 3 (attempt 2)"
    assert "- task 2 failed: src/two.py needs a name\n" in driver.task(project, run_id, AGENT)
    implement(project, run_id, [1, 2, 3])
    assert next_action(project, run_id)["label"] == "carry out plan batch 2 of 3"
    assert checked(project) == [True] * 3 + [False] * 4
    item = state(project, run_id)["plan"]["outcomes"]["2"]
    assert item == {"status": "done", "batch": 1, "attempts": 2, "files": ["src/two.py"]}


def test_a_failed_task_after_the_retry_is_reported_and_the_others_checked_off(project: Path) -> None:
    run_id = start(project)
    next_action(project, run_id)
    for _ in range(2):
        record(project, run_id, AGENT, answer([1, 2, 3], failed={2: "needs a decision"}))
        action = next_action(project, run_id)
    assert action["status"] == "failed"
    assert "task 2 failed (needs a decision)" in action["error"]["message"]
    assert action["error"]["message"].endswith("again: it resumes at task 2.")
    assert checked(project) == [True, False, True] + [False] * 4
    assert outcomes(project, run_id)["2"] == "failed"


def test_the_checks_run_after_a_batch_that_changed_and_names_no_file(git_project: Path) -> None:
    plan_project(git_project, "# Plan: checks\n\n- [ ] Confirm the greeting stays as it is\n")
    (git_project / "BROKEN").write_text("x\n")
    run_id = start(git_project)
    for _ in range(2):
        next_action(git_project, run_id)
        document = {"status": "success", "agent": AGENT, "tasks": [{"task_id": 1, "status": "done"}]}
        assert record(git_project, run_id, AGENT, document)["valid"]
    stop = next_action(git_project, run_id)
    assert (stop["status"], stop["reason"]) == ("failed", "PLAN_BATCH_FAILED")
    assert f"the checks failed (tests: `{TEST_COMMAND}`)" in stop["error"]["message"]
    assert checked(git_project) == [False]


def test_an_answer_about_other_tasks_is_refused(project: Path) -> None:
    run_id = start(project)
    next_action(project, run_id)
    document = answer([1, 2, 4], files={4: ["src/four.py"]})
    refused = record(project, run_id, AGENT, document)
    assert (refused["valid"], refused["retry"], refused["error"]["code"]) == (False, True, "TASKS_MISMATCH")
    assert [item["message"] for item in refused["error"]["violations"]] == [
        "no outcome for task 3",
        "task 4 is not in this batch",
    ]
    assert refused["error"]["hint"] == "Give exactly one entry in tasks for each task of the batch (1, 2, 3)."


def test_an_implementer_that_cannot_work_stops_the_run_at_once(project: Path) -> None:
    run_id = start(project)
    next_action(project, run_id)
    error = {"code": "NO_ACCESS", "message": "cannot write files", "recoverable": False}
    record(project, run_id, AGENT, {"status": "failed", "agent": AGENT, "error": error})
    stop = next_action(project, run_id)
    assert stop["status"] == "failed"
    assert stop["error"]["message"].startswith(
        "Batch 1 of 3 (tasks 1, 2, 3) is not done after 1 attempt(s) of the task implementer: the "
        "implementer could not work (cannot write files)."
    )
    assert state(project, run_id)["plan"]["outcomes"]["1"] == {
        "status": "failed",
        "reason": "the implementer could not work (cannot write files)",
        "batch": 1,
        "attempts": 1,
    }
    assert checked(project) == [False] * 7


# ---- the plan itself -----------------------------------------------------------------------------------


def stopped_with(root: Path, run_id: str) -> dict[str, object]:
    stop = next_action(root, run_id)
    assert (stop["action"], stop["status"]) == ("stop", "failed")
    error = stop["error"]
    assert isinstance(error, dict)
    return error


def test_a_missing_or_unnamed_plan(project: Path) -> None:
    error = stopped_with(project, start(project, "docs/nope.md"))
    assert error == {"code": "PLAN_NOT_FOUND", "message": f"No plan file at {project / 'docs' / 'nope.md'}."}
    error = stopped_with(project, start(project, ""))
    assert error == {
        "code": "PLAN_NOT_FOUND",
        "message": "Name the plan file to carry out: /fixloop:execute-plan PLAN_PATH.",
    }
    assert stopped_with(project, start(project, "../plan.md"))["code"] == "PLAN_OUTSIDE_PROJECT"
    run_id = start(project, "'docs/plan.md'")  # quotes around one path are the shell's, not the name's
    assert agents_of(next_action(project, run_id)) == [AGENT]


def test_a_plan_that_cannot_be_read_names_each_line(project: Path) -> None:
    (project / "docs" / "bad.md").write_text("# Bad\n\n- [ ]\n- [ ] Add a\n  depends: 9\n")
    run_id = start(project, "docs/bad.md")
    error = stopped_with(project, run_id)
    assert error == {
        "code": "PLAN_INVALID",
        "message": "The plan docs/bad.md cannot be read: line 3: task has no text; line 5: depends on task "
        "9, which does not exist.",
    }
    logged = events(project, run_id, "ERROR")[0]
    assert (logged["line"], logged["source"]) == (3, "docs/bad.md")
    assert logged["problems"] == [
        {"line": 3, "message": "task has no text"},
        {"line": 5, "message": "depends on task 9, which does not exist"},
    ]
    assert phase_results(project, run_id) == [("phase_0", "failed")]


def test_a_plan_the_project_cannot_carry_out_fails_validation(project: Path) -> None:
    (project / "docs" / "bad.md").write_text(
        "# Bad\n\n- [ ] Fix the parser\n  files: src/parser.py\n- [ ] TODO\n- [ ] Fix the parser\n"
    )
    run_id = start(project, "docs/bad.md")
    error = stopped_with(project, run_id)
    assert error == {
        "code": "PLAN_INVALID",
        "message": "The plan docs/bad.md cannot be carried out as written: line 3: task 1 names "
        'src/parser.py, which does not exist; line 5: task 2 says nothing to do: "TODO".',
    }
    warning = events(project, run_id, "WARNING")[0]
    assert (warning["code"], warning["line"]) == ("PLAN_TASK_DUPLICATE", 6)
    assert warning["message"] == "task 3 repeats task 1 (line 3): Fix the parser"
    assert phase_results(project, run_id) == [("phase_0", "success"), ("phase_1", "failed")]


def test_a_plan_already_done_ends_at_once(project: Path) -> None:
    (project / "docs" / "done.md").write_text("- [x] Add a\n- [x] Add b\n")
    run_id = start(project, "docs/done.md")
    stop = next_action(project, run_id)
    assert (stop["status"], stop["reason"]) == ("success", "plan_complete")
    assert "Plan docs/done.md: all 2 task(s) are already done." in stop["message"].splitlines()
    assert stop["summary"]["tasks"] == {"already_done": [1, 2]}
    assert phase_results(project, run_id) == [("phase_0", "success")] + [
        (f"phase_{n}", "skipped") for n in range(1, 6)
    ]


def test_a_dry_run_changes_no_file(project: Path) -> None:
    before = tree_digest(project)
    run_id = start(project, dry_run=True)
    stop = next_action(project, run_id)
    assert (stop["action"], stop["status"]) == ("stop", "dry_run_complete")
    assert tree_digest(project) == before
    assert checked(project) == [False] * 7
    assert (
        "Dry run: nothing was changed. The plan would run in 3 batch(es): batch 1: tasks 1, 2, 3; batch 2: "
        "tasks 4, 5, 6; batch 3: task 7."
    ) in stop["message"].splitlines()
    assert phase_results(project, run_id) == [
        ("phase_0", "success"), ("phase_1", "success"), ("phase_2", "success"), ("phase_3", "skipped"),
        ("phase_4", "skipped"), ("phase_5", "success"),
    ]  # fmt: skip
    assert not events(project, run_id, "AGENT_CALL")


# ---- runs of later phases --------------------------------------------------------------------------------


def test_the_review_alone_takes_the_files_of_the_last_run_that_carried_out_the_plan(project: Path) -> None:
    missing = stopped_with(project, start(project, phase="4,5"))
    assert missing["code"] == "PREREQUISITE_MISSING"
    first = start(project)
    next_action(project, first)
    implement(project, first, [1, 2, 3])
    next_action(project, first)
    implement(project, first, [4, 5, 6])
    next_action(project, first)
    implement(project, first, [7])
    next_action(project, first)
    clean_review(project, first)
    assert next_action(project, first)["status"] == "success"

    run_id = start(project, phase="4,5")
    assert next_action(project, run_id)["label"] == "review round 1"
    assert state(project, run_id)["changed_files"] == state(project, first)["changed_files"]
    resumed = [e for e in events(project, run_id, "DATA_COLLECTED") if e["data_type"] == "resumed_phase"]
    assert resumed[0]["summary"] == {"phase": "phase_3", "run_id": first, "source": "earlier_run"}
    clean_review(project, run_id)
    stop = next_action(project, run_id)
    assert stop["status"] == "success"
    assert "This run did not carry out the plan: the statuses are the plan file's." in stop["message"]


def test_phase_3_alone_reads_and_batches_the_plan_itself(project: Path) -> None:
    run_id = start(project, phase="3")
    assert batch_of(next_action(project, run_id))[1] == "carry out plan batch 1 of 3"
