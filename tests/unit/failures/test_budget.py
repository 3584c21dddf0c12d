from __future__ import annotations

import pytest

from fixloop.core.errors import FixloopError
from fixloop.failures.budget import Budget, trim_block
from fixloop.failures.cimodel import Limits
from fixloop.failures.model import Failure, Parsed

TEN = "\n".join(f"line {n}" for n in range(1, 11))


def test_a_block_that_fits_is_kept_whole() -> None:
    assert trim_block(TEN, 10) == (TEN.split("\n"), 10, 0)
    assert trim_block("", 5) == ([], 0, 0)


def test_a_long_block_keeps_its_head_and_its_end() -> None:
    shown, kept, dropped = trim_block(TEN, 5)
    assert shown == ["line 1", "line 2", "[... 6 lines dropped ...]", "line 9", "line 10"]
    assert (kept, dropped) == (4, 6)
    assert trim_block(TEN, 1) == (["[... 10 lines dropped ...]"], 0, 10)
    assert trim_block(TEN, 0) == ([], 0, 10)


def test_the_budget_trims_each_failure_and_drops_what_does_not_fit() -> None:
    budget = Budget(Limits(lines_per_failure=6, total_lines=10))
    failures = tuple(Failure("pytest", f"t{n}", "test", "boom", details=TEN) for n in range(3))
    budget.add_step("job", "step", 1, Parsed(runner="pytest", failures=failures), ["tail"], 500)
    assert [(r.failure.test_id, r.lines_kept, r.lines_dropped) for r in budget.failures] == [
        ("t0", 5, 6),  # the message, 4 detail lines (and a marker line for the 6 dropped)
        ("t1", 3, 8),  # 4 lines were left: the message, 2 detail lines and the marker
    ]
    assert budget.failures[1].failure.details == "line 1\n[... 8 lines dropped ...]\nline 10"
    assert budget.failures_dropped == 1
    assert budget.lines == 10
    assert [(step.job, step.step, step.exit_code, step.failures, step.tail) for step in budget.steps] == [
        ("job", "step", 1, 3, ())
    ]


def test_a_step_without_failures_gives_its_last_lines() -> None:
    budget = Budget(Limits(lines_per_failure=3, total_lines=10))
    budget.add_step(None, "build", 2, Parsed(runner="unknown"), ["a", "b", "token=abc123", "d"], 40)
    step = budget.steps[0]
    assert (step.runner, step.tail, step.tail_dropped) == (None, ("b", "token=[REDACTED]", "d"), 37)
    assert budget.lines == 3


@pytest.mark.parametrize(
    "arguments",
    [{"lines_per_failure": 0}, {"total_lines": -1}, {"tail_lines": True}, {"max_line_chars": 10}],
)
def test_limits_are_checked(arguments: dict[str, object]) -> None:
    with pytest.raises(FixloopError) as raised:
        Limits(**arguments)  # type: ignore[arg-type]
    assert raised.value.code == "INVALID_LIMITS"
