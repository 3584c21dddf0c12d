"""fix-ci phase 3: the engine reproduces the failures in the code locally, with the configured commands, and
says what it could not reproduce; flaky and infrastructure failures are never fixed."""

from __future__ import annotations

from pathlib import Path

from helpers_runs import git
from workflows.bugfix_helpers import (
    NEW_TEST,
    NEW_TEST_NAME,
    PYTEST,
    RED_TEST,
    agents_of,
    clean_review,
    events,
    next_action,
    record,
    state,
    tree_digest,
    write_calc_project,
)
from workflows.ci.ci_helpers import (
    FAILING,
    LINT,
    NOISY_LOG,
    add_unused_import,
    analyst,
    entry,
    implementer_fix,
    pytest_and_ruff_log,
    start,
    through_classify,
)

from fixloop.workflows import driver


def reproduced(root: Path, run_id: str) -> dict[str, object]:
    data: dict[str, object] = state(root, run_id)["flow"]["phases"]["3"]["data"]
    return data


def warnings(root: Path, run_id: str) -> list[tuple[str, str]]:
    return [(event["code"], event["message"]) for event in events(root, run_id, "WARNING")]


def test_a_failing_test_is_run_alone_and_reproduced(project: Path) -> None:
    run_id = start(project, log_file=str(NOISY_LOG))
    action = through_classify(project, run_id)
    assert (agents_of(action), action["label"]) == (["implementer"], "implement the fix (fix)")
    data = reproduced(project, run_id)
    test = {"file": "tests/test_calc.py", "name": "test_divide", "line": None}
    assert data["plan"] == {"tests": [test], "checks": [], "how": {"F1": {"test": test}}}
    assert data["verdicts"] == [{"id": "F1", "test": test, "reproduced": True, "reason": None}]
    run = data["run"]["tests"]  # type: ignore[index]
    assert (run["command"], run["status"], run["first_failure"]) == (
        f"{PYTEST} {FAILING}",
        "test_failed",
        "assert 18 == 2",
    )
    collected = [
        e["summary"] for e in events(project, run_id, "DATA_COLLECTED") if e["summary"].get("purpose")
    ]
    assert [(item["purpose"], item["status"]) for item in collected] == [("reproduce", "test_failed")]
    (result,) = [
        e for e in events(project, run_id, "ANALYSIS_RESULT") if e["analysis_type"] == "ci_reproduction"
    ]
    assert result["result"] == {"reproduced": ["F1"], "not_reproduced": []}
    assert warnings(project, run_id) == []
    task = driver.task(project, run_id, "implementer")
    assert "The engine reproduced them locally (red)" in task
    assert f"Tests that failed locally: {FAILING}." in task and '"log_excerpt": [' in task


def test_without_a_test_named_by_the_analyst_the_cis_own_test_id_is_run(project: Path) -> None:
    run_id = start(project, log_file=str(NOISY_LOG))
    through_classify(project, run_id, analyst(entry("F1", "test")))
    plan = reproduced(project, run_id)["plan"]
    test = {"id": FAILING, "file": "tests/test_calc.py", "name": "test_divide", "line": 5}
    assert plan == {"tests": [test], "checks": [], "how": {"F1": {"test": test}}}
    assert reproduced(project, run_id)["run"]["tests"]["command"] == f"{PYTEST} {FAILING}"  # type: ignore[index]


def test_a_failure_that_passes_locally_ends_the_unattended_run_unchanged(git_project: Path) -> None:
    write_calc_project(git_project, buggy=False)
    before = tree_digest(git_project)
    run_id = start(git_project, log_file=str(NOISY_LOG))
    stop = through_classify(git_project, run_id)
    assert (stop["action"], stop["status"], stop["reason"]) == ("stop", "partial", "not_reproducible_locally")
    message = (
        "1 failure(s) did not fail locally (F1: it passes locally); fixloop does not fix what it cannot see "
        "failing."
    )
    assert warnings(git_project, run_id) == [("NOT_REPRODUCIBLE_LOCALLY", message)]
    assert "The failures did not reproduce locally, so nothing was changed" in stop["message"]
    final = state(git_project, run_id)
    statuses = [(r["phase"], r["status"]) for r in final["phase_results"]]
    assert statuses == [
        ("phase_0", "success"),
        ("phase_1", "success"),
        ("phase_2", "success"),
        ("phase_3", "partial"),
        ("phase_4", "skipped"),
        ("phase_5", "skipped"),
        ("phase_6", "skipped"),
    ]
    (asked,) = final["flow"]["interactions"]
    assert (asked["context"], asked["user_response"], asked["default"]) == ("not_reproduced", "stop", True)
    assert tree_digest(git_project) == before


def test_attended_the_user_may_have_a_failing_test_written_first(project: Path) -> None:
    missing = entry("F1", "test", test={"file": "tests/test_calc.py", "name": "test_gone"})
    run_id = start(project, log_file=str(NOISY_LOG), interactive=True)
    question = through_classify(project, run_id, analyst(missing))
    assert question["action"] == "ask_user"
    assert [option["label"] for option in question["options"]] == ["write_a_test", "stop"]
    assert "None of the failures (F1) fails locally." in question["question"]
    (warning,) = warnings(project, run_id)
    assert warning[1].startswith("1 failure(s) did not fail locally (F1: the local test run broke before it")
    driver.answer(project, run_id, "write_a_test", False)
    action = next_action(project, run_id)
    assert (agents_of(action), action["label"]) == (["implementer"], "implement the fix (test first)")
    assert "The engine could not reproduce them locally" in driver.task(project, run_id, "implementer")
    assert record(project, run_id, "implementer", implementer_fix())["error"]["code"] == "RED_NOT_PROVEN"
    (project / NEW_TEST).write_text(RED_TEST)
    red = {
        "status": "success",
        "agent": "implementer",
        "stage": "test",
        "test": {"file": NEW_TEST, "name": NEW_TEST_NAME},
    }
    answer = record(project, run_id, "implementer", red)
    assert answer["continue"].startswith(f"Red proven: {NEW_TEST}::{NEW_TEST_NAME} fails before the fix")
    (project / "calc.py").write_text("def divide(a, b):\n    return a / b\n")
    assert record(project, run_id, "implementer", implementer_fix("calc.py"))["valid"]
    assert next_action(project, run_id)["label"] == "review round 1"
    clean_review(project, run_id)
    stop = next_action(project, run_id)
    assert (stop["status"], stop["summary"]["errors_fixed"], stop["summary"]["files_changed"]) == (
        "success",
        1,
        2,
    )
    assert state(project, run_id)["changed_files"] == ["calc.py", NEW_TEST]


def test_flaky_and_infrastructure_failures_are_not_fixed(project: Path) -> None:
    run_id = start(project, log_file=pytest_and_ruff_log(project))
    before = tree_digest(project)
    answer = analyst(entry("F1", "flaky", summary="the linter crashed once"), entry("F2", "infrastructure"))
    stop = through_classify(project, run_id, answer)
    assert (stop["status"], stop["reason"]) == ("success", "nothing_to_fix_locally")
    assert warnings(project, run_id) == [
        (
            "CI_FAILURES_NOT_FIXED",
            "F1 (flaky), F2 (infrastructure): flaky and infrastructure failures are not fixed in the code; "
            "re-run the job (e.g. `gh run rerun RUN --failed`) or fix the CI setup.",
        )
    ]
    assert "No failure of the job is in the code: nothing to fix locally." in stop["message"]
    assert [
        e["summary"] for e in events(project, run_id, "DATA_COLLECTED") if e["summary"].get("purpose")
    ] == []
    assert tree_digest(project) == before


def test_a_lint_failure_is_reproduced_by_the_lint_command_and_fixed(project: Path) -> None:
    add_unused_import(project)
    run_id = start(project, log_file=pytest_and_ruff_log(project), lint_command=LINT)
    answer = analyst(entry("F1", "lint", file="calc.py", line=1), entry("F2", "infrastructure"))
    action = through_classify(project, run_id, answer)
    assert agents_of(action) == ["implementer"]
    data = reproduced(project, run_id)
    assert data["verdicts"] == [{"id": "F1", "check": "lint", "reproduced": True, "reason": None}]
    assert data["run"] == {  # type: ignore[comparison-overlap]
        "tests": None,
        "checks": {"lint": {"status": "failed", "command": LINT, "exit_code": 1, "reason": "exit code 1"}},
    }
    assert "Checks that failed locally (the project's commands): lint." in driver.task(
        project, run_id, "implementer"
    )
    refused = record(project, run_id, "implementer", implementer_fix("calc.py"))
    assert (refused["valid"], refused["retry"], refused["error"]["code"]) == (
        False,
        True,
        "CHECKS_STILL_FAILING",
    )
    assert (
        refused["error"]["message"] == f"1 check(s) do not pass after the fix: lint `{LINT}` (exit code 1)."
    )
    (project / "calc.py").write_text((project / "calc.py").read_text().replace("import os\n", ""))
    assert record(project, run_id, "implementer", implementer_fix("calc.py"))["valid"]
    green = state(project, run_id)["flow"]["phases"]["4"]["data"]["green"]
    assert green == {"run": None, "tests": [], "checks": {"lint": "passed"}, "commands": ["lint_command"]}
    starts = [
        (e["phase"], e["step"]) for e in events(project, run_id, "STEP_START") if e["phase"] != "phase_1"
    ]
    assert starts == [("phase_3", "reproduce_lint"), ("phase_4", "green_lint"), ("phase_4", "green_lint")]


def test_a_check_that_is_not_configured_reproduces_nothing(project: Path) -> None:
    run_id = start(project, log_file=pytest_and_ruff_log(project))
    stop = through_classify(project, run_id, analyst(entry("F1", "lint"), entry("F2", "infrastructure")))
    assert (stop["status"], stop["reason"]) == ("partial", "not_reproducible_locally")
    assert reproduced(project, run_id)["verdicts"] == [
        {"id": "F1", "check": "lint", "reproduced": False, "reason": "lint_command is not configured"}
    ]
    git(project, "status")  # the checkout is untouched and readable
