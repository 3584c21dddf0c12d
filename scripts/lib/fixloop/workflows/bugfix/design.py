"""Bugfix phase 2, design the fix: the fix designer plans the change per file, the test that proves it,
the risks and the alternatives it rejected."""

from __future__ import annotations

from fixloop.contracts.bugfix import FIX_DESIGNER
from fixloop.workflows.bugfix.inputs import needs
from fixloop.workflows.bugfix.tasks import designer_task
from fixloop.workflows.consult import consult
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed
from fixloop.workflows.phase import Phase
from fixloop.workflows.testselect import label


class DesignPhase(Phase):
    agents = (FIX_DESIGNER,)

    def step(self, ctx: PhaseContext) -> Outcome:
        inputs = needs(ctx, 0, 1)
        if isinstance(inputs, PhaseFailed):
            return inputs
        if "design" not in ctx.data:
            answer = consult(
                ctx, FIX_DESIGNER, "Design the fix", designer_task(inputs[0], inputs[1]), "design the fix"
            )
            if not isinstance(answer, dict):
                return answer
            ctx.data["design"] = answer
        design = ctx.data["design"]
        return PhaseDone(
            "success",
            {"changes": len(design.get("changes") or []), "test": label(design.get("test") or {})},
        )
