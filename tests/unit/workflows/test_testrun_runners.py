"""Work "tests" on real projects of runners other than pytest: their failures are read, not reported as one
failure of the test command (the sample projects of tests/fixtures/runners)."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers_runs import FakeClock, git
from workflows.bugfix_helpers import start, state

from fixloop.workflows.testrun import COMMAND_FAILURE, run_tests
from fixloop.workflows.testselect import from_failure

RUNNERS = Path(__file__).resolve().parents[2] / "fixtures" / "runners"


def project_from(root: Path, sample: str) -> None:
    shutil.copytree(RUNNERS / sample, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", sample)


def perform(root: Path, command: str, **params: Any) -> dict[str, Any]:
    run_id = start(root, test_command=command)
    return run_tests(root, state(root, run_id), {"phase": "phase_0", **params}, FakeClock())


def test_a_unittest_project(git_project: Path, fake_clock: FakeClock) -> None:
    project_from(git_project, "unittest_ledger")
    result = perform(git_project, f"{shlex.quote(sys.executable)} -B -m unittest")
    assert (result["status"], result["parser"], result["failures_total"]) == ("test_failed", "unittest", 10)
    assert result["counts"] == {"passed": None, "failed": 7, "skipped": 1, "errors": 3}
    by_id = {item["test_id"]: item for item in result["failures"]}
    assert COMMAND_FAILURE not in by_id
    cents = by_id["tests.test_amounts.ParseAmountTest.test_cents"]
    assert (cents["kind"], cents["line"], cents["message"]) == ("test", 12, "AssertionError: 105 != 150")
    assert by_id["setUpClass (tests.test_report.ReportTest)"]["kind"] == "error"


def test_unittest_failures_run_alone_by_their_ids(git_project: Path, fake_clock: FakeClock) -> None:
    project_from(git_project, "unittest_ledger")
    command = f"{shlex.quote(sys.executable)} -B -m unittest"
    failures = perform(git_project, command)["failures"]
    wanted = [
        item for item in failures if "test_cents" in item["test_id"] or "(text='4.5')" in item["test_id"]
    ]
    result = perform(git_project, command, purpose="red", tests=[from_failure(item) for item in wanted])
    case = "tests.test_amounts.ParseAmountTest"
    assert result["command"] == f"{command} {case}.test_cents {case}.test_each_amount"
    assert [item["outcome"] for item in result["outcomes"]] == ["failed", "failed"]
    assert {item["test_id"] for item in result["failures"]} == {
        "tests.test_amounts.ParseAmountTest.test_cents",
        "tests.test_amounts.ParseAmountTest.test_each_amount (text='2.5')",
        "tests.test_amounts.ParseAmountTest.test_each_amount (text='4.5')",
    }


@pytest.mark.skipif(shutil.which("prove") is None, reason="perl's prove is not installed")
def test_a_prove_project(git_project: Path, fake_clock: FakeClock) -> None:
    project_from(git_project, "prove_ledger")
    result = perform(git_project, "prove -l t")
    assert (result["status"], result["parser"]) == ("test_failed", "prove")
    assert [(item["suite"], item["test_id"]) for item in result["failures"]] == [
        ("t/amounts.t", "one and a half"),
        ("t/amounts.t", "sums every entry"),
        ("t/amounts.t", "test 5"),
        ("t/report.t", "totals"),
        ("t/setup.t", "t/setup.t"),
    ]
