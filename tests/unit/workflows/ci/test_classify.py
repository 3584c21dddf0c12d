"""fix-ci phase 2: the CI analyst classifies exactly the failures it is given, with its confidence."""

from __future__ import annotations

from pathlib import Path

from workflows.bugfix_helpers import agents_of, events, next_action, record, state
from workflows.ci.ci_helpers import analyst, entry, pytest_and_ruff_log, start

from fixloop.workflows import driver


def test_the_analyst_gets_the_failures_and_the_categories(project: Path) -> None:
    path = pytest_and_ruff_log(project)
    run_id = start(project, log_file=path)
    action = next_action(project, run_id)
    assert (agents_of(action), action["label"]) == (["ci-analyst"], "classify the CI failures")
    task = driver.task(project, run_id, "ci-analyst")
    assert task.startswith(
        "Classify each failure of this CI job below into one category: test, build, lint, type, flaky, "
        "infrastructure."
    )
    assert f"## The CI job\nA CI job's log file: {path}" in task
    assert "F1. calc.py:1:8 F401 (lint) in lint / Ruff at calc.py:1\n   F401 [*] `os` imported but" in task
    assert "F2. tests/test_calc.py::test_divide (test) in test / Run pytest at tests/test_calc.py:5" in task
    assert "   | E       assert 18 == 2" in task
    assert "the ci-analyst contract" in task


def test_each_failure_given_must_be_classified_once(project: Path) -> None:
    run_id = start(project, log_file=pytest_and_ruff_log(project))
    next_action(project, run_id)
    answer = record(project, run_id, "ci-analyst", analyst(entry("F1", "lint"), entry("F3", "test")))
    assert (answer["valid"], answer["retry"], answer["error"]["code"]) == (
        False,
        True,
        "FAILURES_NOT_CLASSIFIED",
    )
    assert answer["error"]["violations"] == [
        {"path": "$.failures[1].failure_id", "message": "'F3' is not a failure given"},
        {"path": "$.failures", "message": "F2 is not classified"},
    ]
    assert answer["hint"].startswith("Give one entry per failure, with failure_id one of F1, F2.")
    repeated = analyst(entry("F1", "lint"), entry("F1", "test"), entry("F2", "test"))
    answer = record(project, run_id, "ci-analyst", repeated)
    assert (answer["valid"], answer["error"]["code"]) == (False, "SCHEMA_VIOLATION")
    classified = analyst(entry("F1", "lint", confidence=95), entry("F2", "test", file="calc.py", line=2))
    assert record(project, run_id, "ci-analyst", classified)["valid"]
    next_action(project, run_id)
    (result,) = [
        e for e in events(project, run_id, "ANALYSIS_RESULT") if e["analysis_type"] != "ci_reproduction"
    ]
    assert (result["analysis_type"], result["result"]) == (
        "ci_failure_classification",
        {
            "errors_found": 2,
            "categories": {"lint": 1, "test": 1},
            "fixable": 2,
            "files_affected": ["calc.py"],
        },
    )
    phase = state(project, run_id)["phase_results"][2]
    assert (phase["phase"], phase["status"]) == ("phase_2", "success")


def test_an_analyst_that_cannot_work_ends_the_phase(project: Path) -> None:
    run_id = start(project, log_file=pytest_and_ruff_log(project))
    next_action(project, run_id)
    error = {"code": "NO_ACCESS", "message": "cannot read the repository", "recoverable": True}
    failed = {"status": "failed", "agent": "ci-analyst", "error": error}
    assert record(project, run_id, "ci-analyst", failed)["valid"]
    again = next_action(project, run_id)
    assert (agents_of(again), again["step"]) == (["ci-analyst"], 2)  # recoverable: asked once more
    assert record(project, run_id, "ci-analyst", failed)["valid"]
    stop = next_action(project, run_id)
    assert (stop["status"], stop["error"]["code"]) == ("failed", "AGENT_FAILED")
    assert stop["error"]["message"] == "ci-analyst could not do its task: cannot read the repository"
