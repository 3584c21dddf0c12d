"""Each parser against real runs: the failing tests it reads from a runner's text are exactly those the
runner's own machine-readable output of the same failures names (tests/fixtures/runners/capture.py)."""

from __future__ import annotations

import pytest
from failures.real_runs import REAL_RUNS, RealRun, agreement


@pytest.mark.parametrize("run", REAL_RUNS, ids=[run.name for run in REAL_RUNS])
def test_the_parser_finds_exactly_the_failing_tests_the_runner_reports(run: RealRun) -> None:
    result = agreement(run)
    assert result.detected == run.runner
    assert result.expected, "the reference names no failing test: the fixture proves nothing"
    assert result.found == result.expected
