"""How the loop ends: a stop with a termination reason, or a failure; and the action that reports it."""

from __future__ import annotations

from typing import Any

from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.review.access import current_round
from fixloop.review.state import Review
from fixloop.review.step import Document, StepContext
from fixloop.review.views import summary

# termination reason -> the coordinator output's status
TERMINATION_STATUS: dict[str, str] = {
    "no_changes": "success",
    "no_fixable_issues": "success",
    "converged": "partial",
    "max_iterations": "partial",
    "issues_increased": "partial",
    "verification_failed": "partial",
    "budget_exhausted": "partial",
    "user_cancelled": "user_cancelled",
}


def fail(ctx: StepContext, error: dict[str, Any]) -> Document:
    """End the loop as failed: the run's status turns failed and the error joins its errors."""
    review = ctx.review
    rnd = current_round(review)
    review["outcome"] = {
        "status": "failed",
        "termination_reason": None,
        "error": error,
        "round": rnd["iteration"] if rnd else 0,
        "at_ms": ctx.now,
    }
    review["ended_at_ms"] = ctx.now
    state = ctx.state
    state["status"] = "failed"
    errors = state.get("errors")
    if not isinstance(errors, list):
        errors = []
    errors.append({"ts": utc_timestamp_ms(ctx.now / 1000), "action": "review", "message": error["message"]})
    state["errors"] = errors
    count = state.get("error_count")
    state["error_count"] = (count if isinstance(count, int) and not isinstance(count, bool) else 0) + 1
    ctx.emit("E", "ERROR", code=error["code"], message=error["message"])
    _complete_event(ctx)
    return terminal_action(ctx)


def finish(ctx: StepContext, reason: str | None) -> Document:
    """End the loop; `reason` None is the end of a dry run (the coordinator patterns' dry_run_complete)."""
    review = ctx.review
    rnd = current_round(review)
    status = "dry_run_complete" if reason is None else TERMINATION_STATUS[reason]
    if status == "success" and (summary(review)["final_issues"] > 0 or _reviewers_failed(review)):
        status = "partial"  # the loop finished, but issues are left for a person or a reviewer failed
    review["outcome"] = {
        "status": status,
        "termination_reason": reason,
        "error": None,
        "round": rnd["iteration"] if rnd else 0,
        "at_ms": ctx.now,
    }
    review["ended_at_ms"] = ctx.now
    _complete_event(ctx)
    return terminal_action(ctx)


def _reviewers_failed(review: Review) -> bool:
    """Whether a reviewer of the last closed round failed (its part of the code went unreviewed)."""
    closed = [rnd for rnd in review.get("rounds") or [] if rnd.get("closed")]
    return bool(closed) and any(
        item.get("status") == "failed" for item in closed[-1].get("agents_results") or []
    )


def _complete_event(ctx: StepContext) -> None:
    numbers = summary(ctx.review)
    ctx.emit(
        "I",
        "REVIEW_COMPLETE",
        total_iterations=numbers["total_iterations"],
        initial_issues=numbers["initial_issues"],
        final_issues=numbers["final_issues"],
        fixed_issues=numbers["fixed_issues"],
        termination_reason=numbers["termination_reason"],
        total_duration_ms=max(0, ctx.now - int(ctx.review["started_at_ms"])),
    )


def terminal_action(ctx: StepContext) -> Document:
    """The `stop` or `failed` action of a finished loop (repeated by every later `review next`)."""
    outcome = ctx.review["outcome"]
    assert outcome is not None
    report = f"fixloop review report {ctx.run_id}"
    if outcome["status"] == "failed":
        return {
            "action": "failed",
            "round": outcome["round"],
            "error": outcome["error"],
            "report_command": report,
        }
    return {
        "action": "stop",
        "round": outcome["round"],
        "termination_reason": outcome["termination_reason"],
        "status": outcome["status"],
        "summary": summary(ctx.review),
        "report_command": report,
    }
