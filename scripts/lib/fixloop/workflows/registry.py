"""Each workflow's phases, in order: the phase objects the engine steps.

A workflow's phases are imported the first time a run of it needs them: `fixloop next` and `fixloop record`
pay for the one workflow of their run, not for all five."""

from __future__ import annotations

import importlib
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.runs.phases import WORKFLOW_PHASES
from fixloop.workflows.phase import Phase

# workflow -> (module, attribute) of its phases
PHASE_SOURCES: dict[str, tuple[str, str]] = {
    "review": ("fixloop.workflows.review_phase", "REVIEW_PHASES"),
    "bugfix": ("fixloop.workflows.bugfix", "BUGFIX_PHASES"),
    "pr-review": ("fixloop.workflows.pr.phases", "PR_REVIEW_PHASES"),
    "execute-plan": ("fixloop.workflows.plan", "PLAN_PHASES"),
    "ci-job": ("fixloop.workflows.ci", "CI_PHASES"),
}


def phases_of(workflow: str) -> tuple[Phase, ...] | None:
    """The phases of `workflow`, imported on first use; None for an unknown workflow."""
    source = PHASE_SOURCES.get(workflow)
    if source is None:
        return None
    module, attribute = source
    phases: tuple[Phase, ...] = getattr(importlib.import_module(module), attribute)
    return phases


def phase_for(state: dict[str, Any], number: int) -> Phase:
    workflow = str(state.get("workflow"))
    phases = phases_of(workflow)
    if phases is None or not 0 <= number < len(phases):
        raise FixloopError(
            "WORKFLOW_NOT_AVAILABLE",
            f"The engine has no phase {number} for workflow {workflow!r}.",
            workflow=workflow,
            phase=number,
            known=sorted(PHASE_SOURCES),
        )
    assert len(phases) == len(WORKFLOW_PHASES[workflow])
    return phases[number]
