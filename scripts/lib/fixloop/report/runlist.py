"""`fixloop run list`: a project's runs, newest first, one line of facts each.

The review package (and the contract models it loads) is imported only when a state must be read: a
listing the run index answers costs the interpreter, click and this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.runs.lifecycle import RUN_STATUSES
from fixloop.runs.listing import listed_runs, run_facts
from fixloop.runs.phases import known_workflow


def termination_reason(state: Mapping[str, Any]) -> str | None:
    """Why the run stopped: the workflow's reason, else its review loop's; None while it runs."""
    flow = state.get("flow")
    outcome = flow.get("outcome") if isinstance(flow, Mapping) else None
    reason = outcome.get("reason") if isinstance(outcome, Mapping) else None
    if isinstance(reason, str) and reason:
        return reason
    from fixloop.review.access import started_review

    review = started_review(state)
    review_outcome = review.get("outcome") if review is not None else None
    reason = review_outcome.get("termination_reason") if isinstance(review_outcome, Mapping) else None
    return reason if isinstance(reason, str) and reason else None


def remaining_issues(state: Mapping[str, Any]) -> int | None:
    """The findings of the review's final round; None when the run has no review round."""
    from fixloop.review.access import started_review
    from fixloop.review.views import final_round

    review = started_review(state)
    final = final_round(review) if review is not None else None
    return len(final["issues"]) if final is not None else None


def outcome_facts(state: Mapping[str, Any]) -> dict[str, Any]:
    """What run list adds to the run index's facts of each run."""
    return {"termination_reason": termination_reason(state), "remaining_issues": remaining_issues(state)}


def row_of(facts: Mapping[str, Any]) -> dict[str, Any]:
    """A run list row from a run's indexed facts (runs.listing.run_facts with outcome_facts)."""
    ended = facts.get("ended_at_ms")
    extra = facts.get("extra")
    extra = extra if isinstance(extra, Mapping) else {}
    return {
        "run_id": facts["run_id"],
        "workflow": facts.get("workflow"),
        "status": facts.get("status"),
        "started": facts.get("created_at"),
        "ended": utc_timestamp_ms(ended / 1000) if isinstance(ended, int) else None,
        "termination_reason": extra.get("termination_reason"),
        "remaining_issues": extra.get("remaining_issues"),
    }


def run_row(state: Mapping[str, Any]) -> dict[str, Any]:
    return row_of({**run_facts(state), "extra": outcome_facts(state)})


def list_runs(
    root: Path, workflow: str | None = None, status: str | None = None, limit: int | None = None
) -> dict[str, Any]:
    """The runs of the project, newest first, optionally of one workflow or status, at most `limit`."""
    if workflow is not None:
        known_workflow(workflow)
    if status is not None and status not in RUN_STATUSES:
        raise FixloopError(
            "INVALID_STATUS",
            f"Invalid run status {status!r}.",
            valid_values=list(RUN_STATUSES),
            received=status,
        )
    if limit is not None and limit < 1:
        raise FixloopError(
            "INVALID_ARGUMENT", "--limit must be 1 or more.", argument="--limit", received=limit
        )
    found = listed_runs(root, outcome_facts)
    rows = [
        row_of(facts)
        for facts in found.facts
        if (workflow is None or facts.get("workflow") == workflow)
        and (status is None or facts.get("status") == status)
    ]
    if limit is not None:
        rows = rows[:limit]
    return {
        "count": len(rows),
        "runs": rows,
        "unreadable": [
            {"run_id": item.run_id, "code": item.code, "message": item.message} for item in found.unreadable
        ],
    }
