"""What a bugfix phase takes from earlier phases: this run's data, or, for a run started at a later phase
(`--phase=3,4`), the data of the latest earlier bugfix run of the same stack in this project that completed
that phase (workflows.earlier).
"""

from __future__ import annotations

from typing import Any

from fixloop.workflows.context import PhaseContext, RunState
from fixloop.workflows.earlier import RESUMED, EarlierPhases
from fixloop.workflows.outcomes import PhaseFailed

__all__ = ["RESUMED", "WHAT", "WORKFLOW", "earlier_run", "missing", "needs", "phase_data"]

WORKFLOW = "bugfix"
WHAT: dict[int, str] = {
    0: "the failures collected in phase 0",
    1: "the diagnosis of phase 1",
    2: "the fix design of phase 2",
    3: "the fix plan document of phase 3",
    4: "the changes of phase 4",
}


def _same_stack(own: RunState, other: RunState) -> bool:
    return bool(other.get("stack") == own.get("stack"))


def _stack(state: RunState) -> tuple[str, dict[str, Any]]:
    stack = state.get("stack")
    return (f" of stack {stack}" if stack else ""), {"stack": stack}


PHASES = EarlierPhases(WORKFLOW, WHAT, _same_stack, _stack)


def phase_data(ctx: PhaseContext, number: int) -> dict[str, Any] | None:
    """The data phase `number` left in this run, else in the latest earlier run that completed it."""
    return PHASES.data(ctx, number)


def needs(ctx: PhaseContext, *numbers: int) -> dict[int, dict[str, Any]] | PhaseFailed:
    """The data of each phase in `numbers`, or PREREQUISITE_MISSING naming the first one missing."""
    return PHASES.needs(ctx, *numbers)


def missing(ctx: PhaseContext, number: int) -> PhaseFailed:
    return PHASES.missing(ctx, number)


def earlier_run(ctx: PhaseContext, number: int) -> tuple[str, dict[str, Any]] | None:
    """(run id, data of phase `number`) of the latest earlier bugfix run of this stack that completed it."""
    return PHASES.earlier_run(ctx, number)
