"""fix-ci phase 5, verify and review: the review-fix loop over the files phase 4 changed. A dry run skips
it."""

from __future__ import annotations

from fixloop.workflows.ci.inputs import needs
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed
from fixloop.workflows.review_phase import ReviewPhase

SCOPED = "changed_files_set"  # ctx.data key: the review's files were set from phase 4


class CiReviewPhase(ReviewPhase):
    def step(self, ctx: PhaseContext) -> Outcome:
        if ctx.dry_run:
            return PhaseDone("skipped", {"reason": "dry_run"})
        if not ctx.data.get(SCOPED):
            inputs = needs(ctx, 4)
            if isinstance(inputs, PhaseFailed):
                return inputs
            ctx.state["changed_files"] = sorted(inputs[4].get("files_changed") or [])
            ctx.data[SCOPED] = True
        return super().step(ctx)
