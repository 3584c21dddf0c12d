"""Named failing tests run alone, for real, with each runner's own way of naming one test (the sample
projects of tests/fixtures/runners), and the whole suite when the command cannot be narrowed safely."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers_runs import FakeClock, git
from workflows.bugfix_helpers import events, next_action, start, state
from workflows.test_testrun_runners import project_from

from fixloop.runs import trust
from fixloop.runs.config import config_from_dump
from fixloop.runs.verification import configured_commands
from fixloop.workflows import driver
from fixloop.workflows.testrun import run_tests
from fixloop.workflows.testselect import from_failure

ROOT = Path(__file__).resolve().parents[3]
VITEST_MODULES = (
    ROOT / "tests" / "e2e" / "samples" / "frontend" / "node_modules"
)  # vitest 3, installed by setup
UNITTEST = f"{shlex.quote(sys.executable)} -B -m unittest"
CASE = "tests.test_amounts.ParseAmountTest"
CENTS = f"{CASE}.test_cents"


def collected_runs(root: Path, run_id: str) -> list[dict[str, Any]]:
    collected = events(root, run_id, "DATA_COLLECTED")
    return [event["summary"] for event in collected if event["data_type"] == "test_output"]


def run_named(root: Path, command: str, **params: Any) -> dict[str, Any]:
    """Work "tests" with `command` as the test command, every check of the run approved (go and cargo
    projects get a lint or typecheck command from detection)."""
    run_id = start(root, test_command=command)
    run = state(root, run_id)
    trust.approve(root, configured_commands(config_from_dump(run["config"])))
    return run_tests(root, run, {"phase": "phase_0", **params}, FakeClock())


def alone(root: Path, command: str, wanted: set[str]) -> dict[str, Any]:
    """The whole suite once, then the failures of `wanted` (test ids) alone."""
    failures = run_named(root, command)["failures"]
    named = [from_failure(item) for item in failures if item["test_id"] in wanted]
    assert len(named) == len(wanted), [item["test_id"] for item in failures]
    return run_named(root, command, purpose="red", tests=named)


def test_a_unittest_test_the_user_names_runs_alone_first(git_project: Path, fake_clock: FakeClock) -> None:
    project_from(git_project, "unittest_ledger")
    run_id = start(git_project, test_command=UNITTEST, description=f"{CENTS} fails since the last release")
    next_action(git_project, run_id)
    runs = collected_runs(git_project, run_id)
    assert [(run["command"], run["status"], run["failures"]) for run in runs] == [
        (f"{UNITTEST} {CENTS}", "test_failed", 1)
    ]
    task = driver.task(git_project, run_id, "failure-analyst")
    assert CENTS in task and "test_bad_input_raises" not in task


@pytest.mark.parametrize(
    ("named", "alone_status", "alone_failures"),
    [(f"{CASE}.test_whole_number", "test_passed", 0), (f"{CASE}.test_no_such_test", "test_failed", 1)],
)
def test_a_named_unittest_test_that_passes_alone_or_is_not_there_is_followed_by_the_whole_suite(
    git_project: Path, fake_clock: FakeClock, named: str, alone_status: str, alone_failures: int
) -> None:
    project_from(git_project, "unittest_ledger")
    run_id = start(git_project, test_command=UNITTEST, description=f"is {named} broken?")
    next_action(git_project, run_id)
    runs = collected_runs(git_project, run_id)
    assert [(run["command"], run["status"], run["failures"]) for run in runs] == [
        (f"{UNITTEST} {named}", alone_status, alone_failures),
        (UNITTEST, "test_failed", 10),
    ]


def test_a_command_that_needs_a_shell_runs_whole_and_says_why(
    git_project: Path, fake_clock: FakeClock
) -> None:
    project_from(git_project, "unittest_ledger")
    command = f"cd . && {UNITTEST}"
    run_id = start(git_project, test_command=command, description=f"{CENTS} fails")
    next_action(git_project, run_id)
    runs = collected_runs(git_project, run_id)
    assert [(run["command"], run["failures"]) for run in runs] == [(command, 10)]  # once: it was the suite
    reason = "the test command uses shell syntax (&), so it is not split into arguments"
    warnings = [
        event for event in events(git_project, run_id, "WARNING") if event["code"] == "TESTS_NOT_SELECTED"
    ]
    assert [event["message"] for event in warnings] == [
        f"The named tests cannot run alone ({reason}): the whole test command runs."
    ]
    assert f"the named tests could not run alone ({reason})" in driver.task(
        git_project, run_id, "failure-analyst"
    )


@pytest.mark.skipif(
    not (VITEST_MODULES / ".bin" / "vitest").exists(), reason="the e2e samples are not set up"
)
def test_vitest_failures_run_alone(git_project: Path, fake_clock: FakeClock) -> None:
    project_from(git_project, "vitest_ledger")
    (git_project / "node_modules").symlink_to(VITEST_MODULES)
    wanted = {"test/ledger.test.js > parseAmount > reads 1.5", "test/ledger.test.js > rounded rounds half up"}
    result = alone(git_project, "node_modules/.bin/vitest run", wanted)
    pattern = r"(parseAmount reads 1\.5|rounded rounds half up)"
    assert result["command"] == f"node_modules/.bin/vitest run test/ledger.test.js -t '{pattern}'"
    assert [item["outcome"] for item in result["outcomes"]] == ["failed", "failed"]
    assert {item["test_id"] for item in result["failures"]} == wanted
    assert result["counts"]["failed"] == 2 and not result["counts"]["passed"]


def test_node_test_failures_run_alone(git_project: Path, fake_clock: FakeClock) -> None:
    project_from(git_project, "node_test_ledger")
    result = alone(git_project, "node --test --test-reporter=tap", {"parseAmount > reads cents"})
    assert result["command"] == "node --test '--test-name-pattern=reads cents' --test-reporter=tap"
    assert [item["outcome"] for item in result["outcomes"]] == ["failed"]
    failures = [
        item["test_id"] for item in result["failures"]
    ]  # a file that does not load fails whatever runs
    assert failures == ["parseAmount > reads cents", str(git_project / "test" / "report.test.js")]
    assert result["counts"]["passed"] == 0


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_cargo_failures_run_alone(git_project: Path, fake_clock: FakeClock) -> None:
    project_from(git_project, "cargo_ledger")
    result = alone(git_project, "cargo test", {"tests::rounding::rounds_half_up"})
    assert result["command"] == "cargo test -- --exact tests::rounding::rounds_half_up"
    assert [item["outcome"] for item in result["outcomes"]] == ["failed"]
    assert [item["test_id"] for item in result["failures"]] == ["tests::rounding::rounds_half_up"]


GO_MODULE = {
    "go.mod": "module example.com/ledger\n\ngo 1.18\n",
    "money/money.go": "package money\n\nfunc Cents(whole, cents int) int { return whole*10 + cents }\n",
    "money/money_test.go": (
        'package money\n\nimport "testing"\n\n'
        "func TestCents(t *testing.T) {\n"
        '\tt.Run("whole", func(t *testing.T) {\n\t\tif got := Cents(2, 0); got != 200 {\n'
        '\t\t\tt.Errorf("Cents(2, 0) = %d, want 200", got)\n\t\t}\n\t})\n'
        '\tt.Run("none", func(t *testing.T) {\n\t\tif got := Cents(0, 0); got != 0 {\n'
        '\t\t\tt.Errorf("Cents(0, 0) = %d, want 0", got)\n\t\t}\n\t})\n}\n'
    ),
    "report/report_test.go": (
        'package report\n\nimport "testing"\n\n'
        'func TestTotal(t *testing.T) {\n\tt.Error("the total is missing")\n}\n'
    ),
}


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
def test_go_failures_run_alone_in_their_package(
    git_project: Path, fake_clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, text in GO_MODULE.items():
        (git_project / name).parent.mkdir(parents=True, exist_ok=True)
        (git_project / name).write_text(text)
    git(git_project, "add", ".")
    git(git_project, "commit", "-q", "-m", "go module")
    for name, value in {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GOPATH", str(tmp_path / "gopath"))
    monkeypatch.setenv("GOCACHE", str(tmp_path / "gocache"))
    result = alone(git_project, "go test ./...", {"TestCents/whole"})
    assert result["command"] == "go test '-run=^TestCents$/^whole$' example.com/ledger/money"
    assert [item["outcome"] for item in result["outcomes"]] == ["failed"]
    assert [(item["suite"], item["test_id"]) for item in result["failures"]] == [
        ("example.com/ledger/money", "TestCents/whole")
    ]
