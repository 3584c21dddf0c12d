"""Work "tests": the project's test command run for real, its output kept and parsed into bounded failures."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers_runs import FakeClock
from workflows.bugfix_helpers import FAILING, PYTEST, events, start, state, write_calc_project

from fixloop.workflows.testrun import MAX_DETAIL_LINES, MAX_FAILURES, run_tests

PYTHON = shlex.quote(sys.executable)


def perform(root: Path, run_id: str, **params: Any) -> dict[str, Any]:
    return run_tests(root, state(root, run_id), {"phase": "phase_0", **params}, FakeClock())


def test_a_failing_run_is_kept_and_parsed(git_project: Path, fake_clock: FakeClock) -> None:
    write_calc_project(git_project)
    run_id = start(git_project)
    result = perform(git_project, run_id)
    assert (result["status"], result["exit_code"], result["parser"], result["selected"]) == (
        "test_failed",
        1,
        "pytest",
        False,
    )
    assert result["command"] == PYTEST
    assert [(item["test_id"], item["kind"], item["file"]) for item in result["failures"]] == [
        (FAILING, "test", "tests/test_calc.py")
    ]
    assert result["failures"][0]["message"] == "assert 18 == 2"
    output = git_project / result["output_file"]
    assert result["output_file"] == f".claude/fixloop/runs/{run_id}/tests/01-collect.log"
    assert "1 failed" in output.read_text() and result["lines"] == len(output.read_text().splitlines())
    (collected,) = events(git_project, run_id, "DATA_COLLECTED")
    assert collected["summary"]["status"] == "test_failed" and collected["phase"] == "phase_0"


def test_named_tests_are_selected_and_reported(git_project: Path, fake_clock: FakeClock) -> None:
    write_calc_project(git_project)
    run_id = start(git_project)
    tests = [
        {"file": "tests/test_calc.py", "name": "test_divide", "line": None},
        {"file": "tests/test_calc.py", "name": "test_missing", "line": None},
    ]
    result = perform(git_project, run_id, purpose="red", tests=tests[:1])
    assert result["command"] == f"{PYTEST} tests/test_calc.py::test_divide"
    assert [item["outcome"] for item in result["outcomes"]] == ["failed"]
    assert result["output_file"].endswith("/tests/01-red.log")
    missing = perform(git_project, run_id, purpose="red", tests=tests[1:])
    assert (missing["exit_code"], missing["outcomes"][0]["outcome"]) == (4, "error")


def test_a_run_without_readable_failures_is_one_failure(git_project: Path, fake_clock: FakeClock) -> None:
    run_id = start(git_project, test_command="echo something broke; exit 3")
    result = perform(git_project, run_id)
    (failure,) = result["failures"]
    assert (result["status"], failure["test_id"], failure["kind"]) == (
        "test_failed",
        "(test command)",
        "error",
    )
    assert (
        failure["message"] == "The test command exited with code 3; no failure could be read from its output."
    )
    assert failure["details"] == "something broke"


def test_a_timeout_ends_the_whole_group(git_project: Path, fake_clock: FakeClock) -> None:
    run_id = start(git_project, test_command="sleep 30 & sleep 30", verify_timeout_seconds=1)
    result = perform(git_project, run_id)
    assert (result["status"], result["reason"], result["exit_code"]) == (
        "not_run",
        "timed out after 1s",
        None,
    )
    assert result["failures"][0]["message"].startswith("The test command timed out after 1s")


def test_not_configured(git_project: Path, fake_clock: FakeClock) -> None:
    run_id = start(git_project, test_command=None)
    result = perform(git_project, run_id, tests=[{"file": "a.py", "name": "t"}])
    assert (result["status"], result["reason"], result["outcomes"][0]["outcome"]) == (
        "not_run",
        "not_configured",
        "error",
    )


def test_failures_are_bounded(git_project: Path, fake_clock: FakeClock) -> None:
    (git_project / "tests").mkdir()
    body = "\n".join(
        f"def test_{number}():\n    for line in range(300):\n        print(line)\n    assert False\n"
        for number in range(MAX_FAILURES + 5)
    )
    (git_project / "tests" / "test_many.py").write_text(body)
    run_id = start(git_project, test_command=f"{PYTEST} -rA --show-capture=stdout")
    result = perform(git_project, run_id)
    assert result["failures_total"] == MAX_FAILURES + 5
    assert len(result["failures"]) == MAX_FAILURES
    assert max(len(item["details"].splitlines()) for item in result["failures"]) == MAX_DETAIL_LINES


def test_junit_reports_the_runner_wrote_count(git_project: Path, fake_clock: FakeClock) -> None:
    report = (
        '<testsuite name="s" tests="1" failures="1"><testcase classname="pkg.Suite" name="it_works">'
        '<failure message="expected 1">trace</failure></testcase></testsuite>'
    )
    script = git_project / "write_report.py"
    script.write_text(f"open('reports/junit.xml', 'w').write({report!r})\nraise SystemExit(1)\n")
    (git_project / "reports").mkdir()
    run_id = start(git_project, test_command=f"{PYTHON} write_report.py")
    result = perform(git_project, run_id, tests=[{"file": None, "name": "it_works"}])
    assert result["junit_files"] == ["reports/junit.xml"]
    assert [(item["test_id"], item["message"]) for item in result["failures"]] == [
        ("pkg.Suite.it_works", "expected 1")
    ]
    assert result["outcomes"][0]["outcome"] == "failed"


@pytest.mark.parametrize("exit_code", [0, 1])
def test_step_events_frame_the_run(git_project: Path, fake_clock: FakeClock, exit_code: int) -> None:
    run_id = start(git_project, test_command=f"exit {exit_code}")
    perform(git_project, run_id, purpose="green", step_index=2, total_steps=2)
    (begin,) = events(git_project, run_id, "STEP_START")
    (end,) = events(git_project, run_id, "STEP_END")
    assert (begin["agent"], begin["step"], begin["step_index"], begin["total_steps"]) == (
        "engine",
        "tests_green",
        2,
        2,
    )
    assert end["status"] == "success" and end["duration_ms"] >= 0
