"""What the loop's state says to its readers: the rounds that count, the summary, `review status`.

Reports (fixloop.report) read the review through these views only; none of them changes the state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.review.access import current_round, run_id_of, started_review
from fixloop.review.identity import sorted_ids
from fixloop.review.state import Review, Round, RunState


class Summary(TypedDict):
    total_iterations: int
    initial_issues: int
    final_issues: int
    fixed_issues: int
    termination_reason: str | None


def closed_rounds(review: Review) -> list[Round]:
    return [rnd for rnd in review.get("rounds") or [] if rnd.get("closed")]


def final_round(review: Review) -> Round | None:
    """The round whose findings describe the code as it is now.

    Normally the last closed round. When a round's fix was rolled back, the code is back to what that
    round reviewed, so that round is final and later rounds are history.
    """
    closed = closed_rounds(review)
    for rnd in closed:
        if rnd.get("rolled_back"):
            return rnd
    return closed[-1] if closed else None


def kept_rounds(review: Review) -> list[Round]:
    final = final_round(review)
    if final is None:
        return []
    return [rnd for rnd in closed_rounds(review) if rnd["iteration"] <= final["iteration"]]


def fixed_issue_ids(review: Review) -> list[str]:
    kept = kept_rounds(review)
    if len(kept) < 2:
        return []
    final_ids = {issue["id"] for issue in kept[-1]["issues"]}
    seen = {issue["id"] for rnd in kept[:-1] for issue in rnd["issues"]}
    return sorted_ids(seen - final_ids)


def introduced_issue_ids(review: Review) -> list[str]:
    kept = kept_rounds(review)
    if len(kept) < 2:
        return []
    final_ids = {issue["id"] for issue in kept[-1]["issues"]}
    introduced = {issue_id for rnd in kept[1:] for issue_id in rnd.get("introduced_issues") or []}
    return sorted_ids(introduced & final_ids)


def summary(review: Review | None) -> Summary:
    """The coordinator output's summary (all zero before the review started)."""
    closed = closed_rounds(review) if review is not None else []
    final = final_round(review) if review is not None else None
    outcome: Mapping[str, Any] = (review.get("outcome") if review is not None else None) or {}
    return {
        "total_iterations": len(closed),
        "initial_issues": int(closed[0]["issues_found"]) if closed else 0,
        "final_issues": len(final["issues"]) if final else 0,
        "fixed_issues": len(fixed_issue_ids(review)) if review is not None else 0,
        "termination_reason": outcome.get("termination_reason"),
    }


def files_modified(review: Review) -> list[str]:
    """The files changed by fixes that were kept (not rolled back)."""
    files: set[str] = set()
    for rnd in review.get("rounds") or []:
        fix = rnd.get("fix")
        if fix and fix.get("done") and not rnd.get("rolled_back"):
            files.update(fix.get("files_modified") or [])
    return sorted(files)


def fixes_done(review: Review) -> int:
    return sum(1 for rnd in review.get("rounds") or [] if rnd.get("fix"))


def _round_status(rnd: Round) -> dict[str, Any]:
    records = rnd.get("records") or {}
    verifier = rnd.get("verifier")
    fix = rnd.get("fix")
    return {
        "iteration": rnd["iteration"],
        "pass": rnd["pass"],
        "review_requested": rnd["review_requested_at_ms"] is not None,
        "closed": rnd["closed"],
        "shard": rnd.get("shard", 1),  # the shard the reviewers are on (of `shards`)
        "shards": len(rnd.get("shards") or []) or 1,
        "recorded": {
            agent: {"valid": record["valid"], "attempts": record["attempts"]}
            for agent, record in sorted(records.items())
        },
        "missing": [agent for agent in REVIEWER_AGENTS if agent not in records]
        if rnd["review_requested_at_ms"] is not None and not rnd["closed"]
        else [],
        "issues_found": rnd["issues_found"],
        "fixable_issues": len(rnd["fixable"]),
        "verifier": None
        if verifier is None
        else {
            "done": verifier["done"],
            "dispatches": verifier["dispatches"],
            "score": verifier.get("score"),
            "batch": verifier.get("batch", 1),
            "batches": verifier.get("batches", 1),
        },
        "fix": None
        if fix is None
        else {
            "done": fix["done"],
            "result": fix["result"],
            "issue_ids": fix["issue_ids"],
            "batch": fix.get("batch", 1),
            "batches": fix.get("batches", 1),
        },
        "verification_passed": rnd.get("verification_passed"),
    }


def status_document(state: RunState) -> dict[str, Any]:
    """`fixloop review status`: where the loop stands, without advancing it."""
    review = started_review(state)
    if review is None:
        return {
            "run_id": run_id_of(state),
            "started": False,
            "changed_files": len(state.get("changed_files") or []),
        }
    rnd = current_round(review)
    outcome: Mapping[str, Any] = review.get("outcome") or {}
    return {
        "run_id": run_id_of(state),
        "started": True,
        "finished": bool(outcome),
        "status": outcome.get("status", "running"),
        "termination_reason": outcome.get("termination_reason"),
        "error": outcome.get("error"),
        "last_action": review.get("last_action"),
        "initial_verification_passed": review["gate"]["passed"],
        "question": review.get("question"),
        "fixes_done": fixes_done(review),
        "trend": review.get("trend"),
        "round": _round_status(rnd) if rnd is not None else None,
        "summary": summary(review),
    }
