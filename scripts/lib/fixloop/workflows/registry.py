"""Each workflow's phases, in order: the phase objects the engine steps."""

from __future__ import annotations

from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.runs.phases import WORKFLOW_PHASES
from fixloop.workflows.bugfix import BUGFIX_PHASES
from fixloop.workflows.ci import CI_PHASES
from fixloop.workflows.phase import Phase
from fixloop.workflows.plan import PLAN_PHASES
from fixloop.workflows.pr.phases import PR_REVIEW_PHASES
from fixloop.workflows.review_phase import ReviewPhase

PHASES: dict[str, tuple[Phase, ...]] = {
    "review": (ReviewPhase(),),
    "bugfix": BUGFIX_PHASES,
    "pr-review": PR_REVIEW_PHASES,
    "execute-plan": PLAN_PHASES,
    "ci-job": CI_PHASES,
}


def phase_for(state: dict[str, Any], number: int) -> Phase:
    workflow = str(state.get("workflow"))
    phases = PHASES.get(workflow)
    if phases is None or not 0 <= number < len(phases):
        raise FixloopError(
            "WORKFLOW_NOT_AVAILABLE",
            f"The engine has no phase {number} for workflow {workflow!r}.",
            workflow=workflow,
            phase=number,
            known=sorted(PHASES),
        )
    assert len(phases) == len(WORKFLOW_PHASES[workflow])
    return phases[number]
