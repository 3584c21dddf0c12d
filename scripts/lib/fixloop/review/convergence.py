"""Tracking a closed round against the previous one, and the convergence rules (more fixable issues than
the round before: diverged; the same count twice in a row: converged).

Resolved, introduced and persisting issue ids compare the two rounds' findings. The count of fixable
issues decides: more than before is divergence; the same count NO_IMPROVEMENT_ROUNDS times in a row is
convergence; fewer resets that count.
"""

from __future__ import annotations

from fixloop.review.access import previous_round
from fixloop.review.identity import sorted_ids
from fixloop.review.state import Round
from fixloop.review.step import StepContext

NO_IMPROVEMENT_ROUNDS = 2


def track(ctx: StepContext, rnd: Round) -> None:
    """resolved/introduced/persisting against the previous round, then the convergence rules."""
    rnd["tracked"] = True
    review = ctx.review
    current = len(rnd["fixable"])
    review["trend"] = [*review["trend"], current]
    previous = previous_round(review, rnd)
    if previous is None:
        return
    before = {issue["id"] for issue in previous["issues"]}
    now = {issue["id"] for issue in rnd["issues"]}
    rnd["resolved_issues"] = sorted_ids(before - now)
    rnd["introduced_issues"] = sorted_ids(now - before)
    rnd["persisting_issues"] = sorted_ids(before & now)
    previous_count = len(previous["fixable"])
    number = int(rnd["iteration"])
    if current > previous_count:
        rnd["convergence"] = "diverged"
        ctx.emit(
            "W",
            "REVIEW_CONVERGENCE",
            decision="diverged",
            iteration=number,
            previous_count=previous_count,
            current_count=current,
            introduced_issues=rnd["introduced_issues"],
        )
    elif current == previous_count:
        review["consecutive_no_improvement"] += 1
        if review["consecutive_no_improvement"] >= NO_IMPROVEMENT_ROUNDS:
            rnd["convergence"] = "converged"
            ctx.emit(
                "X",
                "REVIEW_CONVERGENCE",
                decision="converged",
                iteration=number,
                issues_trend=list(review["trend"]),
                reason=f"fixable issue count unchanged for {NO_IMPROVEMENT_ROUNDS} consecutive iterations",
            )
    else:
        review["consecutive_no_improvement"] = 0
