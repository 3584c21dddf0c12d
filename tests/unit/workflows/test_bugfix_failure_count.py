"""The failure analyst is told how many failures the run showed and which of them it is given."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers_runs import FakeClock, git
from workflows.bugfix_helpers import agents_of, next_action, start

from fixloop.workflows import driver
from fixloop.workflows.testrun import MAX_FAILURES


def write_failing_tests(root: Path, count: int) -> None:
    (root / "tests").mkdir()
    body = "".join(
        f"def test_case_{number:02d}():\n    assert {number} == -1\n\n\n" for number in range(count)
    )
    (root / "tests" / "test_many.py").write_text(body)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "tests")


def analyst_task(root: Path, failing: int) -> str:
    write_failing_tests(root, failing)
    run_id = start(root)
    assert agents_of(next_action(root, run_id)) == ["failure-analyst"]
    return driver.task(root, run_id, "failure-analyst")


def numbered(task: str) -> list[str]:
    return re.findall(r"^(\d+)\. tests/test_many\.py::(test_case_\d+) ", task, re.MULTILINE)


def test_more_failures_than_it_is_given(git_project: Path, fake_clock: FakeClock) -> None:
    task = analyst_task(git_project, 26)
    given = MAX_FAILURES
    assert (
        f"The test run showed 26 failures; you are given the first {given} (1 to {given}, in the order the "
        f"runner printed them). The other {26 - given} are only in the whole output."
    ) in task
    assert numbered(task) == [(str(number + 1), f"test_case_{number:02d}") for number in range(MAX_FAILURES)]


@pytest.mark.parametrize(("failing", "said"), [(1, "1 failure"), (3, "3 failures")])
def test_all_failures_given(git_project: Path, fake_clock: FakeClock, failing: int, said: str) -> None:
    task = analyst_task(git_project, failing)
    assert f"The test run showed {said}; all are below." in task
    assert len(numbered(task)) == failing
