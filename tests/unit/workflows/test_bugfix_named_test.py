"""A failing test the user names runs alone first; the whole suite runs only when it does not fail."""

from __future__ import annotations

from pathlib import Path

from helpers_runs import FakeClock, git
from workflows.bugfix_helpers import PYTEST, agents_of, events, next_action, start, write_calc_project

from fixloop.workflows import driver

OTHER_FAILING = "def test_other():\n    assert 1 == 2\n"


def project_with_two_failures(root: Path) -> None:
    write_calc_project(root)
    (root / "tests" / "test_other.py").write_text(OTHER_FAILING)
    (root / "tests" / "test_passing.py").write_text("def test_fine():\n    assert True\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "more tests")


def collected_runs(root: Path, run_id: str) -> list[dict[str, object]]:
    collected = events(root, run_id, "DATA_COLLECTED")
    return [event["summary"] for event in collected if event["data_type"] == "test_output"]


def test_the_named_failing_test_runs_alone(git_project: Path, fake_clock: FakeClock) -> None:
    project_with_two_failures(git_project)
    run_id = start(git_project, description="tests/test_calc.py::test_divide fails since yesterday")
    assert agents_of(next_action(git_project, run_id)) == ["failure-analyst"]
    assert [(run["command"], run["failures"]) for run in collected_runs(git_project, run_id)] == [
        (f"{PYTEST} tests/test_calc.py::test_divide", 1)
    ]
    task = driver.task(git_project, run_id, "failure-analyst")
    assert "1. tests/test_calc.py::test_divide (test)" in task
    assert "test_other" not in task


def test_a_named_test_that_passes_alone_is_followed_by_the_whole_suite(
    git_project: Path, fake_clock: FakeClock
) -> None:
    project_with_two_failures(git_project)
    run_id = start(git_project, description="tests/test_passing.py::test_fine and more are broken")
    assert agents_of(next_action(git_project, run_id)) == ["failure-analyst"]
    assert [
        (run["command"], run["status"], run["failures"]) for run in collected_runs(git_project, run_id)
    ] == [
        (f"{PYTEST} tests/test_passing.py::test_fine", "test_passed", 0),
        (PYTEST, "test_failed", 2),
    ]
    task = driver.task(git_project, run_id, "failure-analyst")
    assert "tests/test_calc.py::test_divide" in task and "tests/test_other.py::test_other" in task


def test_without_a_named_test_the_whole_suite_runs_once(git_project: Path, fake_clock: FakeClock) -> None:
    project_with_two_failures(git_project)
    run_id = start(git_project, description="divide is broken")
    next_action(git_project, run_id)
    assert [run["command"] for run in collected_runs(git_project, run_id)] == [PYTEST]
