"""The review-verifier's step of a round: dispatch, deletions, and the quality gate's re-reviews.

The verifier checks the round's fixable findings before they are fixed. Findings it proves wrong are
deleted; a quality score below QUALITY_PASS_SCORE sends the review back to the reviewers while the
configured quality retries last. A verifier that keeps failing is skipped: the findings go on unverified.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.core.agent_names import VERIFIER_AGENT
from fixloop.core.thresholds import MAX_RETRIES, QUALITY_ERROR_CODE, QUALITY_PASS_SCORE
from fixloop.review.prompts import verify_findings_action
from fixloop.review.rounds import fixable_ids, request_review
from fixloop.review.state import Round, Verifier, first_retry_context
from fixloop.review.step import Document, StepContext

# The first dispatch and MAX_RETRIES more; after that the findings are used unverified.
VERIFIER_MAX_DISPATCHES = 1 + MAX_RETRIES


def verifier_step(ctx: StepContext, rnd: Round) -> Document | None:
    """The verifier's next action for a closed pass, or None when the round's findings are final."""
    if not ctx.config.use_verifier or not rnd["fixable"]:
        return None
    verifier = rnd["verifier"]
    if verifier is None:
        rnd["verifier"] = {
            "requested_at_ms": ctx.now,
            "dispatches": 1,
            "errors": [],
            "record": None,
            "done": False,
            "unavailable": False,
            "score": None,
            "quality_level": None,
        }
        return verify_findings_action(ctx.state, rnd)
    if verifier["done"]:
        return None
    return apply_verifier(ctx, rnd, verifier)


def _failure(verifier: Verifier) -> tuple[str, str] | None:
    """(code, message) when the verifier's answer is missing, invalid or failed; None for a success."""
    record = verifier.get("record")
    document = record.get("document") if record and record.get("valid") else None
    if document is not None and document.get("status") == "success":
        return None
    if document is not None:
        problem = document.get("error") or {}
        return str(problem.get("code") or "UNKNOWN_ERROR"), str(problem.get("message") or "failed")
    if record is not None:
        problem = record.get("error") or {}
        return str(problem.get("code") or "SCHEMA_VIOLATION"), str(problem.get("message") or "invalid result")
    return "NULL_RESPONSE", f"Agent {VERIFIER_AGENT} returned nothing"


def _retry_or_give_up(
    ctx: StepContext, rnd: Round, verifier: Verifier, code: str, message: str
) -> Document | None:
    number = int(rnd["iteration"])
    ctx.emit(
        "E",
        "AGENT_FAILURE",
        iteration=number,
        agent=VERIFIER_AGENT,
        error_code=code,
        message=message,
        recoverable=verifier["dispatches"] < VERIFIER_MAX_DISPATCHES,
    )
    verifier["errors"].append(f"{code}: {message}")
    if verifier["dispatches"] < VERIFIER_MAX_DISPATCHES:
        verifier["dispatches"] += 1
        verifier["record"] = None
        verifier["requested_at_ms"] = ctx.now
        return verify_findings_action(ctx.state, rnd)
    verifier["done"] = True
    verifier["unavailable"] = True
    ctx.emit(
        "W",
        "WARNING",
        code="VERIFIER_UNAVAILABLE",
        message=f"The review verifier failed {verifier['dispatches']} times; round {number}'s findings "
        "are used unverified.",
        iteration=number,
    )
    return None


def apply_verifier(ctx: StepContext, rnd: Round, verifier: Verifier) -> Document | None:
    """Use the verifier's answer: delete findings, then re-review on QUALITY_TOO_LOW while retries last.

    A missing, invalid or failed answer is retried up to VERIFIER_MAX_DISPATCHES dispatches in all; after
    that the findings go on unfiltered (WARNING VERIFIER_UNAVAILABLE). Returns the next action, or None when
    the round's findings are final.
    """
    failure = _failure(verifier)
    if failure is not None:
        return _retry_or_give_up(ctx, rnd, verifier, *failure)
    number = int(rnd["iteration"])
    record = verifier["record"]
    assert record is not None and record["document"] is not None
    result = record["document"].get("verification_result") or {}
    doomed = issues_to_delete(result)
    known = {issue["id"] for issue in rnd["issues"]}
    unknown = sorted(set(doomed) - known)
    if unknown:
        ctx.emit(
            "W",
            "WARNING",
            code="VERIFIER_UNKNOWN_ISSUES",
            message=f"The verifier named issue ids this round does not have: {', '.join(unknown)}.",
            iteration=number,
        )
    removed = [issue["id"] for issue in rnd["issues"] if issue["id"] in doomed]
    quality = result.get("quality_assessment") or {}
    score = int(quality.get("overall_score", 0))
    level = str(quality.get("quality_level") or "")
    verifier["done"] = True
    verifier["score"] = score
    verifier["quality_level"] = level
    verifier["missing_issues"] = list(quality.get("missing_issues") or [])
    verifier["weaknesses"] = list(quality.get("weaknesses") or [])
    if score < QUALITY_PASS_SCORE:
        if rnd["quality_retries"] < ctx.config.max_quality_retries:
            return _quality_retry(ctx, rnd, score, level, quality, removed)
        ctx.emit(
            "W",
            "WARNING",
            code="QUALITY_RETRIES_EXHAUSTED",
            message=f"Review quality {score}/100 is below {QUALITY_PASS_SCORE} after "
            f"{rnd['quality_retries']} re-review(s); going on with the verified findings.",
            iteration=number,
        )
    rnd["removed_by_verifier"] = removed
    rnd["removed_details"] = {issue_id: doomed[issue_id] for issue_id in removed}
    rnd["removed_issues"] = [issue for issue in rnd["issues"] if issue["id"] in doomed]
    rnd["issues"] = [issue for issue in rnd["issues"] if issue["id"] not in doomed]
    rnd["issues_found"] = len(rnd["issues"])
    rnd["fixable"] = fixable_ids(rnd["issues"], ctx.config, ctx.review.get("unverified_fixes"))
    return None


def issues_to_delete(result: Mapping[str, Any]) -> dict[str, str]:
    """Issue id -> reason, from a verification_result (mirrors VerifierOutput.issues_to_delete)."""
    doomed: dict[str, str] = {}
    for check in result.get("accuracy_check") or []:
        if check.get("deletion_required") or check.get("accuracy_status") == "INCORRECT":
            doomed[str(check["issue_id"])] = str(check.get("deletion_reason") or check.get("evidence") or "")
    for rule in result.get("rule_compliance_check") or []:
        if rule.get("deletion_required"):
            doomed.setdefault(
                str(rule["issue_id"]),
                str(rule.get("violation_reason") or "; ".join(rule.get("violated_rules") or [])),
            )
    return doomed


def _quality_retry(
    ctx: StepContext,
    rnd: Round,
    score: int,
    level: str,
    quality: Mapping[str, Any],
    removed: list[str],
) -> Document:
    """Keep the scored pass in `passes` and ask the reviewers again, with the verifier's criticism."""
    weaknesses = [str(item) for item in quality.get("weaknesses") or []]
    error = f"{QUALITY_ERROR_CODE}: review quality score {score}/100" + (f" ({level})" if level else "")
    error += f" is below {QUALITY_PASS_SCORE}" + (
        f"; weaknesses: {'; '.join(weaknesses)}" if weaknesses else ""
    )
    previous = rnd.get("retry_context") or first_retry_context()
    rnd["passes"].append(
        {
            "pass": rnd["pass"],
            "agents_results": rnd["agents_results"],
            "issues_found": rnd["issues_found"],
            "fixable_issues": len(rnd["fixable"]),
            "quality_score": score,
            "quality_level": level,
            "removed_by_verifier": removed,
        }
    )
    rnd["quality_retries"] += 1
    rnd["pass"] += 1
    rnd["retry_context"] = {
        "attempt_number": rnd["pass"],
        "previous_errors": [*previous["previous_errors"], error],
        "recovery_actions_taken": [
            *previous["recovery_actions_taken"],
            "re-review with stricter quality requirements",
        ],
    }
    rnd["missing_issues"] = [
        str(item.get("description"))
        for item in quality.get("missing_issues") or []
        if isinstance(item, Mapping)
    ]
    ctx.emit(
        "W",
        "WARNING",
        code=QUALITY_ERROR_CODE,
        message=f"{error}; re-review {rnd['quality_retries']}/{ctx.config.max_quality_retries}.",
        iteration=rnd["iteration"],
        score=score,
    )
    # A fresh pass: the next `review next` closes it like the first one.
    rnd["review_requested_at_ms"] = None
    rnd["records"] = {}
    rnd["closed"] = False
    rnd["closed_at_ms"] = None
    rnd["agents_results"] = []
    rnd["issues"] = []
    rnd["issues_found"] = 0
    rnd["fixable"] = []
    rnd["positive_observations"] = []
    rnd["verifier"] = None
    return request_review(ctx, rnd)
