"""Each parser against real runs: the failing tests it reads from a runner's text are exactly those the
runner's own machine-readable output of the same failures names (tests/fixtures/runners/capture.py)."""

from __future__ import annotations

from collections import Counter

import pytest
from failures.logfixtures import LOGS
from failures.real_runs import REAL_RUNS, RealRun, agreement

from fixloop.failures import parse


@pytest.mark.parametrize("run", REAL_RUNS, ids=[run.name for run in REAL_RUNS])
def test_the_parser_finds_exactly_the_failing_tests_the_runner_reports(run: RealRun) -> None:
    result = agreement(run)
    assert result.detected == run.runner
    assert result.expected, "the reference names no failing test: the fixture proves nothing"
    assert result.found == result.expected


def test_go_test_json_inside_a_ci_step_finds_the_same_tests() -> None:
    """A CI step prints its commands around the events (GitLab's `$ go test -json ./...`)."""
    events = (LOGS / "go" / "real.json").read_text(encoding="utf-8")
    step = f"$ go version\ngo version go1.19.8 linux/amd64\n$ go test -json ./...\n{events}"
    parsed = parse(
        step + "Cleaning up project directory and file based variables\nERROR: Job failed: exit code 1\n"
    )
    go_json = next(run for run in REAL_RUNS if run.name == "go test -json")
    assert parsed.runner == "go"
    assert (
        Counter(f"{item.suite} > {item.test_id}" for item in parsed.failures) == agreement(go_json).expected
    )
