"""The review-verifier's step of a round: dispatch, deletions, and the quality gate's re-reviews.

The verifier checks the round's fixable findings before they are fixed, in batches of at most
max_findings_per_batch (one call each, in finding order). Findings it proves wrong are deleted; a quality
score below QUALITY_PASS_SCORE (the finding-weighted mean of the batches' scores) sends the review back to
the reviewers while the configured quality retries last. A batch whose verifier keeps failing is skipped:
its findings go on unverified.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.core.agent_names import VERIFIER_AGENT
from fixloop.core.thresholds import MAX_RETRIES, QUALITY_ERROR_CODE, QUALITY_PASS_SCORE
from fixloop.review.batches import batch_count, batch_text, current_batch, last_batch
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
        size = ctx.config.max_findings_per_batch
        rnd["verifier"] = {
            "requested_at_ms": ctx.now,
            "dispatches": 1,
            "errors": [],
            "record": None,
            "done": False,
            "unavailable": False,
            "score": None,
            "quality_level": None,
            "batch": 1,
            "batches": batch_count(len(rnd["fixable"]), size),
            "batch_size": size,
            "deletions": {},
            "batch_scores": [],
            "unverified_batches": [],
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
    """Dispatch the current batch again while its retries last; else its findings go on unverified."""
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
    verifier.setdefault("unverified_batches", []).append(int(verifier.get("batch") or 1))
    if int(verifier.get("batches") or 1) > 1:
        count = len(current_batch(rnd["fixable"], verifier))
        text = (
            f"The review verifier failed {verifier['dispatches']} times on round {number}"
            f"{batch_text(verifier)}; its {count} finding(s) are used unverified."
        )
    else:
        text = (
            f"The review verifier failed {verifier['dispatches']} times; round {number}'s findings "
            "are used unverified."
        )
    ctx.emit("W", "WARNING", code="VERIFIER_UNAVAILABLE", message=text, iteration=number)
    return None


def apply_verifier(ctx: StepContext, rnd: Round, verifier: Verifier) -> Document | None:
    """Use the current batch's answer, then dispatch the next batch or settle the round's findings.

    A missing, invalid or failed answer is retried up to VERIFIER_MAX_DISPATCHES dispatches of its batch;
    after that the batch's findings go on unfiltered (WARNING VERIFIER_UNAVAILABLE). After the last batch
    the deletions apply, and a quality score below the pass score re-reviews while retries last. Returns
    the next action, or None when the round's findings are final.
    """
    failure = _failure(verifier)
    if failure is not None:
        retry = _retry_or_give_up(ctx, rnd, verifier, *failure)
        if retry is not None:
            return retry
    else:
        _take_batch(ctx, rnd, verifier)
    if not last_batch(verifier):
        verifier["batch"] = int(verifier.get("batch") or 1) + 1
        verifier["dispatches"] = 1
        verifier["errors"] = []
        verifier["record"] = None
        verifier["requested_at_ms"] = ctx.now
        return verify_findings_action(ctx.state, rnd)
    return _settle(ctx, rnd, verifier)


def _take_batch(ctx: StepContext, rnd: Round, verifier: Verifier) -> None:
    """Keep the current batch's deletions (of its own ids only), score, weaknesses and missing issues."""
    record = verifier["record"]
    assert record is not None and record["document"] is not None
    result = record["document"].get("verification_result") or {}
    doomed = issues_to_delete(result)
    batch = current_batch(rnd["fixable"], verifier)
    unknown = sorted(set(doomed) - set(batch))
    if unknown:
        ctx.emit(
            "W",
            "WARNING",
            code="VERIFIER_UNKNOWN_ISSUES",
            message=f"The verifier named issue ids it was not given (round {rnd['iteration']}"
            f"{batch_text(verifier)}): {', '.join(unknown)}.",
            iteration=rnd["iteration"],
        )
    deletions = verifier.setdefault("deletions", {})
    deletions.update({issue_id: doomed[issue_id] for issue_id in batch if issue_id in doomed})
    quality = result.get("quality_assessment") or {}
    verifier.setdefault("batch_scores", []).append(
        {
            "batch": int(verifier.get("batch") or 1),
            "issues": len(batch),
            "score": int(quality.get("overall_score", 0)),
            "quality_level": str(quality.get("quality_level") or ""),
        }
    )
    missing = verifier.setdefault("missing_issues", [])
    missing.extend(item for item in quality.get("missing_issues") or [] if item not in missing)
    weaknesses = verifier.setdefault("weaknesses", [])
    weaknesses.extend(str(item) for item in quality.get("weaknesses") or [] if str(item) not in weaknesses)


def quality_level_of(score: int) -> str:
    """The contract's level of a score (EXCELLENT 85-100, GOOD 70-84, ACCEPTABLE pass-69, POOR below)."""
    if score >= 85:
        return "EXCELLENT"
    if score >= 70:
        return "GOOD"
    return "ACCEPTABLE" if score >= QUALITY_PASS_SCORE else "POOR"


def _settle(ctx: StepContext, rnd: Round, verifier: Verifier) -> Document | None:
    """After the last batch: the round's score (the finding-weighted mean of the batches' scores), the
    quality gate, and the deletions. With no batch answered the findings go on unverified."""
    number = int(rnd["iteration"])
    verifier["done"] = True
    scores = verifier.get("batch_scores") or []
    if not scores:
        verifier["unavailable"] = True
        return None
    weight = sum(item["issues"] for item in scores)
    score = round(sum(item["score"] * item["issues"] for item in scores) / max(1, weight))
    level = scores[0]["quality_level"] if len(scores) == 1 else quality_level_of(score)
    verifier["score"] = score
    verifier["quality_level"] = level
    doomed = verifier.get("deletions") or {}
    removed = [issue["id"] for issue in rnd["issues"] if issue["id"] in doomed]
    if score < QUALITY_PASS_SCORE:
        if rnd["quality_retries"] < ctx.config.max_quality_retries:
            quality = {
                "weaknesses": verifier.get("weaknesses") or [],
                "missing_issues": verifier.get("missing_issues") or [],
            }
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
