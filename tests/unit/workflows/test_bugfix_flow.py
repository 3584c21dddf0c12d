"""The bugfix workflow on the engine, phase by phase, on a real git project whose pytest test fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_runs import FakeClock
from workflows.bugfix_helpers import (
    FAILING,
    GREEN_BEFORE_FIX,
    NEW_TEST,
    NEW_TEST_NAME,
    PYTEST,
    RED_TEST,
    agents_of,
    analyst,
    clean_review,
    design,
    events,
    implementer_fix,
    implementer_test,
    next_action,
    record,
    root_cause,
    start,
    state,
    through_design,
    tree_digest,
    write_calc_project,
)

from fixloop.workflows import driver

NEW_ID = f"{NEW_TEST}::{NEW_TEST_NAME}"


@pytest.fixture
def project(git_project: Path, fake_clock: FakeClock) -> Path:
    write_calc_project(git_project)
    return git_project


def prove_red(root: Path, run_id: str) -> dict[str, object]:
    (root / NEW_TEST).write_text(RED_TEST)
    answer = record(root, run_id, "implementer", implementer_test())
    assert (answer["valid"], answer["retry"]) == (True, False), answer
    return answer


def test_red_then_green_end_to_end(project: Path) -> None:
    run_id = start(project)
    action = through_design(project, run_id)
    assert (agents_of(action), action["label"]) == (["implementer"], "implement the fix (test first)")
    task = driver.task(project, run_id, "implementer")
    assert "the implementer contract" in task and f"- {FAILING}" in task and "calc.py" in task

    answer = prove_red(project, run_id)
    assert answer["continue"].startswith(f"Red proven: {NEW_ID} fails before the fix (assert 8 == 2).")
    (project / "calc.py").write_text("def divide(a, b):\n    return a / b\n")
    answer = record(project, run_id, "implementer", implementer_fix("calc.py"))
    assert (answer["valid"], answer.get("continue")) == (True, None), answer

    action = next_action(project, run_id)
    assert action["label"] == "review round 1"
    clean_review(project, run_id)
    stop = next_action(project, run_id)
    assert (stop["action"], stop["status"]) == ("stop", "success")
    assert stop["summary"]["errors_fixed"] == 1 and stop["summary"]["files_changed"] == 2

    run = state(project, run_id)
    assert [(item["phase"], item["status"]) for item in run["phase_results"]] == [
        (f"phase_{number}", "success") for number in range(6)
    ]
    implemented = run["flow"]["phases"]["4"]["data"]
    assert implemented["files_changed"] == ["calc.py", NEW_TEST]
    assert implemented["errors_fixed"] == 1
    assert implemented["red"]["run"]["command"] == f"{PYTEST} {NEW_ID}"
    assert implemented["green"]["tests"] == [NEW_ID, FAILING]
    assert run["changed_files"] == ["calc.py", NEW_TEST]
    plan = run["flow"]["phases"]["3"]["data"]["document"]
    assert plan == f"docs/bugfix/2025-12-06-{run_id}.md"
    text = (project / plan).read_text()
    sections = (
        "## Root cause",
        "`calc.py:2`",
        "- calc.py:2 returns a * b",
        "- `calc.py`: Return a / b.",
        f"`{NEW_ID}`",
        "- Division by zero now raises.",
        "- Use operator.truediv: rejected because Same change, less plain.",
    )
    for expected in sections:
        assert expected in text, expected

    collected = [event["summary"] for event in events(project, run_id, "DATA_COLLECTED")]
    tests_runs = [item for item in collected if item.get("purpose")]
    assert [(item["purpose"], item["status"], item["source"]) for item in tests_runs] == [
        ("collect", "test_failed", "auto_run"),
        ("red", "test_failed", "auto_run"),
        ("green", "test_passed", "auto_run"),
    ]
    assert tests_runs[0]["exit_code"] == 1 and tests_runs[0]["lines"] > 5
    starts = events(project, run_id, "STEP_START")
    assert [(item["phase"], item["step"]) for item in starts] == [
        ("phase_0", "tests_collect"), ("phase_4", "tests_red"), ("phase_4", "tests_green"),
    ]  # fmt: skip
    assert [item["status"] for item in events(project, run_id, "STEP_END")] == ["success"] * 3
    (analysis,) = events(project, run_id, "ANALYSIS_RESULT")
    assert analysis["result"] == {"errors_found": 1, "categories": {"assertion": 1}, "files_affected": []}
    (decision,) = events(project, run_id, "CONFIDENCE_DECISION")
    assert decision["factors"] == {"clarity": 90, "specificity": 90, "context": 80, "reproducibility": 100}
    assert (decision["confidence_score"], decision["decision"], decision["measured"]) == (
        90,
        "auto_continue",
        ["reproducibility"],
    )
    assert decision["threshold"] == {"auto_continue": 60, "ask_user": 40, "stop": 0}


def test_a_test_that_passes_before_the_fix_is_refused(project: Path) -> None:
    run_id = start(project)
    through_design(project, run_id)
    (project / NEW_TEST).write_text(GREEN_BEFORE_FIX)
    answer = record(project, run_id, "implementer", implementer_test())
    assert (answer["valid"], answer["retry"], answer["error"]["code"]) == (
        False,
        True,
        "TEST_PASSES_BEFORE_FIX",
    )
    assert (
        answer["error"]["message"]
        == f"The test {NEW_ID} passes before the fix: it does not reproduce the failure."
    )
    assert "must fail now" in answer["hint"]
    assert "red" not in state(project, run_id)["flow"]["phases"]["4"]["data"]

    # A fix before a test that fails is refused too.
    answer = record(project, run_id, "implementer", implementer_fix())
    assert (answer["valid"], answer["error"]["code"]) == (False, "RED_NOT_PROVEN")

    # The agent stops without a red test: it is called again for the test stage.
    again = next_action(project, run_id)
    assert (agents_of(again), again["label"]) == (["implementer"], "implement the fix (test first)")
    assert state(project, run_id)["flow"]["phases"]["4"]["data"]["dispatches"] == {"implementer": 2}


def test_the_implementer_is_called_again_for_the_fix_after_red(project: Path) -> None:
    run_id = start(project)
    through_design(project, run_id)
    prove_red(project, run_id)
    # Still failing: refused, naming the tests, and the agent may try again although red was accepted.
    answer = record(project, run_id, "implementer", implementer_fix())
    assert (answer["valid"], answer["retry"], answer["error"]["code"]) == (False, True, "STILL_FAILING")
    assert answer["error"]["failing"] == [NEW_ID, FAILING]
    assert answer["error"]["message"] == (
        f"2 test(s) do not pass after the fix: {NEW_ID} (failed), {FAILING} (failed)."
    )
    # It stops anyway: dispatched again, for the fix stage only.
    again = next_action(project, run_id)
    assert again["label"] == "implement the fix (fix)"
    task = driver.task(project, run_id, "implementer")
    assert task.startswith(f"The test {NEW_ID} fails before the fix, as the engine confirmed (red).")
    (project / "calc.py").write_text("def divide(a, b):\n    return a / b\n")
    assert record(project, run_id, "implementer", implementer_fix())["valid"]
    assert next_action(project, run_id)["label"] == "review round 1"


def test_no_green_after_three_implementer_calls_fails_the_phase(project: Path) -> None:
    run_id = start(project)
    through_design(project, run_id)
    for _ in range(2):
        record(project, run_id, "implementer", "no JSON here")
        assert agents_of(next_action(project, run_id)) == ["implementer"]
    record(project, run_id, "implementer", "no JSON here")
    stop = next_action(project, run_id)
    assert (stop["action"], stop["status"], stop["error"]["code"]) == (
        "stop",
        "failed",
        "IMPLEMENTATION_FAILED",
    )
    assert stop["error"]["message"] == "The fix was not implemented: no green after 3 implementer calls."
    (error,) = [
        event for event in events(project, run_id, "ERROR") if event["code"] == "IMPLEMENTATION_FAILED"
    ]
    assert error["recoverable"] is False


def test_confidence_too_low_stops_before_any_change(project: Path) -> None:
    run_id = start(project)
    next_action(project, run_id)
    record(project, run_id, "failure-analyst", analyst())
    next_action(project, run_id)
    # reproducibility 100 (measured), specificity capped at 40 (no such file): (10 + 40 + 10 + 100) / 4 = 40
    # would ask; with clarity 5 the mean 38.75 rounds to 39: stop.
    record(project, run_id, "root-cause-analyst", root_cause(5, 90, 10, file="src/nowhere.py"))
    stop = next_action(project, run_id)
    assert (stop["status"], stop["error"]["code"]) == ("failed", "CONFIDENCE_TOO_LOW")
    (decision,) = events(project, run_id, "CONFIDENCE_DECISION")
    assert (decision["confidence_score"], decision["decision"]) == (39, "stop")
    assert decision["factors"]["specificity"] == 40 and decision["reported"]["specificity"] == 90
    (error,) = events(project, run_id, "ERROR")
    assert (error["code"], error["recoverable"], error["phase"]) == ("CONFIDENCE_TOO_LOW", False, "phase_1")
    assert [item["phase"] for item in state(project, run_id)["phase_results"]] == ["phase_0", "phase_1"]
    assert not (project / "docs").exists()


@pytest.mark.parametrize(("on_low", "expected"), [("stop", "failed"), ("continue", "fix-designer")])
def test_ask_user_unattended_takes_the_configured_default(project: Path, on_low: str, expected: str) -> None:
    run_id = start(project, on_low_confidence=on_low)
    next_action(project, run_id)
    record(project, run_id, "failure-analyst", analyst())
    next_action(project, run_id)
    record(project, run_id, "root-cause-analyst", root_cause(30, 30, 30))  # (30*3 + 100) / 4 = 47.5 -> 48
    action = next_action(project, run_id)
    outcome = action.get("status") if action["action"] == "stop" else agents_of(action)[0]
    assert outcome == expected
    (asked,) = events(project, run_id, "USER_INTERACTION")
    assert (asked["context"], asked["user_response"], asked["default"]) == ("low_confidence", on_low, True)
    (decision,) = events(project, run_id, "CONFIDENCE_DECISION")
    assert (decision["confidence_score"], decision["decision"]) == (48, "ask_user")


@pytest.mark.parametrize(("choice", "status"), [("continue", None), ("stop", "user_cancelled")])
def test_ask_user_pauses_when_questions_are_asked(project: Path, choice: str, status: str | None) -> None:
    run_id = start(project, questions="ask")
    next_action(project, run_id)
    record(project, run_id, "failure-analyst", analyst())
    next_action(project, run_id)
    record(project, run_id, "root-cause-analyst", root_cause(30, 30, 30))
    asked = next_action(project, run_id)
    assert (asked["action"], asked["context"], asked["default"]) == ("ask_user", "low_confidence", "stop")
    assert [option["label"] for option in asked["options"]] == ["continue", "stop"]
    assert next_action(project, run_id) == asked  # it waits
    driver.answer(project, run_id, choice, False)
    after = next_action(project, run_id)
    if status is None:
        assert agents_of(after) == ["fix-designer"]
    else:
        assert (after["action"], after["status"], after["reason"]) == ("stop", status, "low_confidence_stop")


def test_a_dry_run_changes_no_file(project: Path) -> None:
    (project / "notes.txt").write_text("the user's own work\n")
    run_id = start(project, dry_run=True)
    before = tree_digest(project)
    through_design(project, run_id)
    stop = next_action(project, run_id)
    assert (stop["action"], stop["status"]) == ("stop", "dry_run_complete")
    assert tree_digest(project) == before
    assert [(item["phase"], item["status"]) for item in state(project, run_id)["phase_results"]] == [
        ("phase_0", "success"),
        ("phase_1", "success"),
        ("phase_2", "success"),
        ("phase_3", "skipped"),
        ("phase_4", "skipped"),
        ("phase_5", "skipped"),
    ]


def test_later_phases_resume_from_the_latest_earlier_run(project: Path, fake_clock: FakeClock) -> None:
    first = start(project, phase="0,1,2")
    assert next_action(project, first) is not None and through_design(project, first)["status"] == "success"
    fake_clock.advance(60)
    other_stack = start(project, stack="frontend", phase="0,1,2")
    for agent, answer in (
        ("failure-analyst", analyst(category="render")),
        ("root-cause-analyst", root_cause()),
        ("fix-designer", design()),
    ):
        assert agents_of(next_action(project, other_stack)) == [agent]
        assert record(project, other_stack, agent, answer)["valid"]
    assert next_action(project, other_stack)["status"] == "success"
    fake_clock.advance(60)
    run_id = start(project, phase="3,4")
    action = next_action(project, run_id)
    assert agents_of(action) == ["implementer"]
    run = state(project, run_id)
    assert run["flow"]["resumed"]["2"]["run_id"] == first != other_stack
    resumed = [item["summary"] for item in events(project, run_id, "DATA_COLLECTED")]
    assert {"phase": "phase_2", "run_id": first, "source": "earlier_run"} in resumed
    assert (project / run["flow"]["phases"]["3"]["data"]["document"]).is_file()
    prove_red(project, run_id)
    (project / "calc.py").write_text("def divide(a, b):\n    return a / b\n")
    assert record(project, run_id, "implementer", implementer_fix())["valid"]
    stop = next_action(project, run_id)
    assert (stop["status"], stop["summary"]["errors_fixed"]) == ("success", 1)


def test_a_later_phase_without_an_earlier_run_names_what_to_run_first(project: Path) -> None:
    run_id = start(project, phase="4")
    stop = next_action(project, run_id)
    assert (stop["status"], stop["error"]["code"]) == ("failed", "PREREQUISITE_MISSING")
    assert stop["error"]["message"] == (
        "Phase 4 needs the fix design of phase 2: this run did not complete it and no earlier bugfix run of "
        "stack backend in this project did. Run phase 2 first (--phase=0,1,2)."
    )


def test_no_failure_and_no_description_ends_the_run(git_project: Path, fake_clock: FakeClock) -> None:
    write_calc_project(git_project, buggy=False)
    run_id = start(git_project)
    stop = next_action(git_project, run_id)
    assert (stop["action"], stop["status"], stop["reason"]) == ("stop", "success", "no_failure_found")
    (warning,) = events(git_project, run_id, "WARNING")
    assert (warning["code"], warning["phase"]) == ("NO_FAILURE_FOUND", "phase_0")
    assert {item["status"] for item in state(git_project, run_id)["phase_results"]} == {"skipped"}


def test_without_a_test_command_the_description_goes_on(git_project: Path, fake_clock: FakeClock) -> None:
    write_calc_project(git_project)
    run_id = start(
        git_project,
        test_command=None,
        detect_commands=False,
        description="divide(6, 3) returns 18 in test_divide",
    )
    action = next_action(git_project, run_id)
    assert agents_of(action) == ["failure-analyst"]
    assert "divide(6, 3) returns 18 in test_divide" in driver.task(git_project, run_id, "failure-analyst")
    warnings = [warning["code"] for warning in events(git_project, run_id, "WARNING")]
    assert warnings == ["NO_VERIFICATION_CONFIGURED", "TESTS_NOT_CONFIGURED"]
    record(git_project, run_id, "failure-analyst", analyst("divide returns 18"))
    next_action(git_project, run_id)
    record(git_project, run_id, "root-cause-analyst", root_cause())
    assert agents_of(next_action(git_project, run_id)) == ["fix-designer"]
    (decision,) = events(git_project, run_id, "CONFIDENCE_DECISION")
    # nothing reproduced, but the description names a test: 40
    assert decision["factors"]["reproducibility"] == 40
    record(git_project, run_id, "fix-designer", design())
    stop = next_action(git_project, run_id)
    assert (stop["status"], stop["error"]["code"]) == ("failed", "TESTS_NOT_CONFIGURED")


def test_a_category_of_another_stack_is_refused(project: Path) -> None:
    run_id = start(project)
    next_action(project, run_id)
    answer = record(project, run_id, "failure-analyst", analyst(category="selector"))
    assert (answer["valid"], answer["retry"], answer["error"]["code"]) == (
        False,
        True,
        "CATEGORY_NOT_FOR_STACK",
    )
    assert answer["error"]["violations"] == [
        {"path": "$.failures[0].category", "message": "'selector' is not a backend category"}
    ]
    assert "assertion, exception, data-or-fixture, contract, config" in answer["hint"]


@pytest.mark.parametrize("recoverable", [False, True])
def test_an_agent_that_fails_is_called_again_only_when_it_may_succeed(
    project: Path, recoverable: bool
) -> None:
    run_id = start(project)
    next_action(project, run_id)
    error = {"code": "TIMEOUT", "message": "ran out of time", "recoverable": recoverable}
    answer = record(
        project, run_id, "failure-analyst", {"status": "failed", "agent": "failure-analyst", "error": error}
    )
    assert (answer["valid"], answer["agent_status"]) == (True, "failed")
    action = next_action(project, run_id)
    if recoverable:
        assert (agents_of(action), action["step"]) == (["failure-analyst"], 2)
        return
    assert (action["status"], action["error"]["code"]) == ("failed", "AGENT_FAILED")
    assert action["error"]["message"] == "failure-analyst could not do its task: ran out of time"
