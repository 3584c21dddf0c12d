"""Engine work that can take long, done outside the state lock: each kind of `Work` and what does it.

A performer's module is imported when its work is first done: most `next` and `record` calls do none.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.review.step import Effects
from fixloop.runs.lifecycle import Clock
from fixloop.workflows.outcomes import Work

Performer = Callable[[Path, dict[str, Any], dict[str, Any], Clock], Any]


def _verification(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> Any:
    from fixloop.runs import verification

    return verification.verify(state, clock)


def _tests(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> Any:
    from fixloop.workflows.testrun import run_tests

    return run_tests(root, state, params, clock)


def _publish(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> Any:
    from fixloop.workflows.publish.run import perform_publish

    return perform_publish(root, state, params, clock)


PERFORMERS: dict[str, Performer] = {
    "verification": _verification,
    "tests": _tests,
    "publish": _publish,
}


def register(kind: str, performer: Performer) -> None:
    PERFORMERS[kind] = performer


def perform(
    root: Path, state: dict[str, Any], work: Work, clock: Clock, effects: Effects | None = None
) -> Any:
    performer = PERFORMERS.get(work.kind)
    if performer is None:
        raise FixloopError("UNKNOWN_WORK", f"The engine has no work {work.kind!r}.", kind=work.kind)
    return performer(root, state, dict(work.params), clock)
