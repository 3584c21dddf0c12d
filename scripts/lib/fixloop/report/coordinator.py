"""The review's result document (status, verification, iterations, summary, issues), computed from the run
state alone.

It is `fixloop review report --format json`, and what the Markdown report shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.contracts.coordinator import CoordinatorOutput
from fixloop.review.access import started_review
from fixloop.review.filters import suppressed_counts
from fixloop.review.state import Issue, Review, VerificationResult
from fixloop.review.views import (
    closed_rounds,
    files_modified,
    final_round,
    fixed_issue_ids,
    introduced_issue_ids,
    kept_rounds,
    summary,
)
from fixloop.runs.verification import STEP_NAMES

AGENT_NAME = "review-coordinator"
NO_CHANGES_MESSAGE = "No changed files to review."
STEP_FIELDS = ("status", "duration_ms", "reason", "exit_code", "command", "output_tail")


def issue_ref(issue: Issue) -> dict[str, Any]:
    """The coordinator output's issue entry."""
    return {
        "id": issue["id"],
        "file": issue["file"],
        "description": issue["description"],
        "line": issue.get("line"),
        "severity": issue.get("severity"),
        "category": issue.get("category"),
        "confidence": issue.get("confidence"),
        "agents": list(issue.get("agents") or []),
        "auto_fixable": issue.get("auto_fixable"),
    }


def _latest_issues(review: Review) -> dict[str, Issue]:
    """Each issue id -> its most recent version among the kept rounds."""
    latest: dict[str, Issue] = {}
    for rnd in kept_rounds(review):
        for issue in rnd["issues"]:
            latest[issue["id"]] = issue
    return latest


def _verification_doc(result: VerificationResult | None) -> dict[str, Any] | None:
    if not result:
        return None
    doc: dict[str, Any] = {}
    for name in STEP_NAMES:
        step = result.get(name)
        if not isinstance(step, Mapping) or "status" not in step:
            return None
        doc[name] = {key: step[key] for key in STEP_FIELDS if step.get(key) is not None}
    return doc


def last_verification(review: Review) -> dict[str, Any] | None:
    for rnd in reversed(review.get("rounds") or []):
        if rnd.get("verification"):
            return _verification_doc(rnd["verification"])
    return _verification_doc(review["gate"].get("verification"))


def review_iterations(review: Review) -> list[dict[str, Any]]:
    iterations: list[dict[str, Any]] = []
    for rnd in closed_rounds(review):
        entry: dict[str, Any] = {
            "iteration": rnd["iteration"],
            "agents_results": rnd["agents_results"],
            "issues_found": rnd["issues_found"],
            "fixable_issues": len(rnd["fixable"]),
        }
        fix = rnd.get("fix")
        if fix and fix.get("done"):
            entry["fix_result"] = dict(fix["result"] or {})
        entry["resolved_issues"] = list(rnd.get("resolved_issues") or [])
        entry["introduced_issues"] = list(rnd.get("introduced_issues") or [])
        entry["persisting_issues"] = list(rnd.get("persisting_issues") or [])
        entry["removed_by_verifier"] = list(rnd.get("removed_by_verifier") or [])
        suppressed = suppressed_counts(rnd)
        if suppressed:
            entry["suppressed"] = suppressed
        iterations.append(entry)
    return iterations


def _no_changes_document() -> dict[str, Any]:
    skipped = {"status": "skipped", "reason": "no_changes"}
    return {
        "status": "success",
        "agent": AGENT_NAME,
        "verification": {name: dict(skipped) for name in STEP_NAMES},
        "review_iterations": [],
        "summary": {
            "total_iterations": 0,
            "initial_issues": 0,
            "final_issues": 0,
            "fixed_issues": 0,
            "termination_reason": "no_changes",
        },
        "message": NO_CHANGES_MESSAGE,
    }


def _review_document(review: Review) -> dict[str, Any]:
    outcome: Mapping[str, Any] = review.get("outcome") or {}
    final = final_round(review)
    latest = _latest_issues(review)
    introduced = set(introduced_issue_ids(review))
    remaining = [issue_ref(issue) for issue in (final["issues"] if final else [])]
    document: dict[str, Any] = {"status": outcome.get("status", "partial"), "agent": AGENT_NAME}
    verification = last_verification(review)
    if verification is not None:
        document["verification"] = verification
    document.update(
        review_iterations=review_iterations(review),
        summary=summary(review),
        fixed_issues=[issue_ref(latest[issue_id]) for issue_id in fixed_issue_ids(review)],
        remaining_issues=remaining,
        introduced_issues=[item for item in remaining if item["id"] in introduced],
        positive_observations=list(final["positive_observations"]) if final else [],
        files_modified=files_modified(review),
    )
    if not outcome:
        last_action = review.get("last_action")
        action = last_action.get("action") if last_action else None
        document["message"] = "The review is still running" + (
            f" (last action: {action})." if action else "."
        )
    return document


def _run_end(state: Mapping[str, Any]) -> tuple[Any, str | None, dict[str, Any] | None]:
    """The run's end status, the reason its flow recorded (a string or None) and its error (or None)."""
    flow = state.get("flow")
    outcome = flow.get("outcome") if isinstance(flow, Mapping) else None
    outcome = outcome if isinstance(outcome, Mapping) else {}
    reason = outcome.get("reason") if isinstance(outcome.get("reason"), str) else None
    error = outcome.get("error")
    return state.get("status"), reason, dict(error) if isinstance(error, Mapping) else None


def _unreviewed_document(state: Mapping[str, Any]) -> dict[str, Any]:
    """A run without a review phase (bugfix, ci, plan, pr) or before it: an ended run reports its own end."""
    status, reason, error = _run_end(state)
    if status == "failed":
        if error is None:
            error = {"code": reason or "RUN_FAILED", "message": "The run failed before any review."}
        return {"status": "failed", "agent": AGENT_NAME, "error": error}
    document: dict[str, Any] = {"agent": AGENT_NAME, "review_iterations": [], "summary": summary(None)}
    if status in ("success", "partial", "user_cancelled", "dry_run_complete"):
        ended = f"The run ended {status}" + (f" ({reason})" if reason else "")
        return {"status": status, **document, "message": f"{ended} without a review phase."}
    return {"status": "partial", **document, "message": "The review has not started."}


def _ended_before_the_review(state: Mapping[str, Any]) -> dict[str, Any]:
    """The run ended while its review was under way (the engine ended it: the coordinator stopped, too many
    errors): the run's own status and error, never `partial` for a run that failed."""
    status, reason, error = _run_end(state)
    found: dict[str, Any] = {
        "status": str(status),
        "message": f"The run ended {status} ({reason}) before its review did.",
    }
    if status == "failed":
        found["error"] = error if error is not None else {"code": reason or "RUN_FAILED"}
    return found


def coordinator_output(state: Mapping[str, Any]) -> dict[str, Any]:
    """The review's result document (validated against CoordinatorOutput)."""
    review = started_review(state)
    outcome: Mapping[str, Any] = (review.get("outcome") if review is not None else None) or {}
    document: dict[str, Any]
    if outcome.get("termination_reason") == "no_changes":
        document = _no_changes_document()
    elif review is not None and outcome.get("status") == "failed":  # its findings so far are reported too
        document = {**_review_document(review), "status": "failed", "error": outcome["error"]}
    elif review is None:
        document = _unreviewed_document(state)
    else:
        document = _review_document(review)
        if not outcome and state.get("ended_at_ms") is not None:
            document.update(_ended_before_the_review(state))
    usage = state.get("usage")
    if isinstance(usage, dict) and (usage.get("total") or {}).get("calls"):
        document["usage"] = usage
    CoordinatorOutput.model_validate(document)
    return document
