"""The review-fixer's step of a round: snapshot and dispatch (in batches of at most max_findings_per_batch
issues, one call each, within the round's one snapshot), then what the fix did to which files, and
undoing it (exactly the fixer's recorded edits: store.edits) when the user or the config chooses so."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.core.agent_names import FIXER_AGENT
from fixloop.core.errors import FixloopError
from fixloop.review.batches import batch_count, batch_text, current_batch, last_batch
from fixloop.review.prompts import fix_action
from fixloop.review.rounds import review_scope
from fixloop.review.state import AgentDocument, Fix, FixCounts, Record, Round, Snapshot
from fixloop.review.step import Document, StepContext

FIX_UNVERIFIED = "FIX_UNVERIFIED"


def request_fix(ctx: StepContext, rnd: Round) -> Document:
    """Snapshot the files the fix may touch and return the `fix` action for the first batch of the round's
    fixable issues (all of them in one batch unless there are more than max_findings_per_batch)."""
    number = int(rnd["iteration"])
    fixable = set(rnd["fixable"])
    issue_files = {issue["file"] for issue in rnd["issues"] if issue["id"] in fixable}
    snapshot: Snapshot | None = None
    if ctx.effects is not None:
        snapshot = ctx.effects.take_snapshot(number, sorted(issue_files | set(review_scope(ctx.state))))
    size = ctx.config.max_findings_per_batch
    rnd["fix"] = {
        "requested_at_ms": ctx.now,
        "issue_ids": list(rnd["fixable"]),
        "snapshot": snapshot,
        "record": None,
        "done": False,
        "result": None,
        "results": [],
        "files_claimed": [],
        "files_changed": None,
        "files_modified": [],
        "duration_ms": None,
        "error": None,
        "batch": 1,
        "batches": batch_count(len(rnd["fixable"]), size),
        "batch_size": size,
    }
    ctx.emit("I", "REVIEW_FIX_ITERATION", iteration=number, direction="start", fixable_issues=len(fixable))
    return fix_action(ctx.state, rnd)


def _fixer_failure(record: Record | None, document: AgentDocument | None) -> tuple[str, str]:
    if document is not None:
        problem = document.get("error") or {}
        return str(problem.get("code") or "FIX_FAILED"), str(
            problem.get("message") or "the fixer reported failure"
        )
    if record is not None:
        problem = record.get("error") or {}
        return str(problem.get("code") or "SCHEMA_VIOLATION"), str(problem.get("message") or "")
    return "NULL_RESPONSE", f"Agent {FIXER_AGENT} returned nothing"


def _changed_files(ctx: StepContext, fix: Fix, number: int) -> list[str] | None:
    """The files that differ from the round's snapshot; None when there is no snapshot to compare with."""
    snapshot = fix.get("snapshot")
    if ctx.effects is None or not snapshot:
        return None
    try:
        return ctx.effects.changed_since(snapshot)
    except FixloopError as failure:
        ctx.emit(
            "W",
            "WARNING",
            code=failure.code,
            message=f"Cannot compare with round {number}'s snapshot ({failure.message}); "
            "using the files the fixer reported.",
            iteration=number,
        )
        return None


def close_fix(ctx: StepContext, rnd: Round, fix: Fix) -> Document | None:
    """Take the current batch's answer; return the next batch's `fix` action, or, after the last batch,
    settle the fix (claims check, files changed, counts) and return None."""
    _take_batch(ctx, rnd, fix)
    if not last_batch(fix):
        fix["batch"] = int(fix.get("batch") or 1) + 1
        fix["record"] = None
        return fix_action(ctx.state, rnd)
    _settle(ctx, rnd, fix)
    return None


def _take_batch(ctx: StepContext, rnd: Round, fix: Fix) -> None:
    """Keep the batch's results (for its own issues only) and claimed files; a failed, invalid or missing
    answer is an AGENT_FAILURE and its issues stay unfixed, while the other batches go on."""
    number = int(rnd["iteration"])
    record = fix.get("record")
    document = record.get("document") if record and record.get("valid") else None
    batch = set(current_batch(fix["issue_ids"], fix))
    results = [
        dict(item)
        for item in (document.get("results") or [] if document else [])
        if item.get("issue_id") in batch
    ]
    if document is None or document.get("status") == "failed":
        code, message = _fixer_failure(record, document)
        where = batch_text(fix)  # ", batch 2/3" when there are several
        fix["error"] = {"code": code, "message": f"{where[2:]}: {message}" if where else message}
        ctx.emit(
            "E",
            "AGENT_FAILURE",
            iteration=number,
            agent=FIXER_AGENT,
            error_code=code,
            message=message,
            recoverable=False,
        )
    claimed: set[str] = set(fix["files_claimed"])
    claimed.update(document.get("files_modified") or [] if document else [])
    for item in results:
        claimed.update(item.get("files") or [])
    fix["results"].extend(results)
    fix["files_claimed"] = sorted(claimed)


def _settle(ctx: StepContext, rnd: Round, fix: Fix) -> None:
    """Count the results of every batch and find the files modified (the snapshot's view wins over the
    fixer's claims), once, after the last batch."""
    number = int(rnd["iteration"])
    results = fix["results"]
    changed = _changed_files(ctx, fix, number)
    unverified = _check_claims(ctx, rnd, fix, results, changed)
    attempted = [item for item in results if item.get("status") != "skipped"]
    succeeded = [item for item in attempted if item.get("status") == "succeeded"]
    counts: FixCounts = {
        "attempted": len(attempted),
        "succeeded": len(succeeded),
        "failed": len(attempted) - len(succeeded),
    }
    fix["done"] = True
    fix["result"] = counts
    fix["files_changed"] = changed
    fix["files_modified"] = sorted(changed) if changed is not None else list(fix["files_claimed"])
    fix["duration_ms"] = max(0, ctx.now - int(fix["requested_at_ms"]))
    ctx.emit(
        "I",
        "REVIEW_FIX_ITERATION",
        iteration=number,
        direction="end",
        attempted=counts["attempted"],
        succeeded=counts["succeeded"],
        failed=counts["failed"],
        remaining=max(0, len(fix["issue_ids"]) - counts["succeeded"]),
        duration_ms=fix["duration_ms"],
    )
    if unverified:
        ctx.emit(
            "W",
            "WARNING",
            code=FIX_UNVERIFIED,
            message=f"Round {number}: the fixer said {', '.join(unverified)} fixed, but no edit of their "
            "files was recorded (or the files are unchanged); counted as failed, not sent again.",
            iteration=number,
            issue_ids=unverified,
        )


def _check_claims(
    ctx: StepContext, rnd: Round, fix: Fix, results: list[dict[str, Any]], changed: list[str] | None
) -> list[str]:
    """Turn each `succeeded` the facts do not back into a failure (FIX_UNVERIFIED): a claim counts only
    when a fixloop agent's recorded edit touched one of its files in this round's window and that file
    differs from the round's snapshot. The ids go into the review's `unverified_fixes`, so the same
    finding is not handed to the fixer again. Runs outside Claude Code (no hooks, no ledger) are not
    checked."""
    snapshot = fix.get("snapshot")
    if ctx.effects is None or not snapshot or not ctx.state.get("claude_session_id") or changed is None:
        return []
    proven = set(ctx.effects.touched_since(snapshot)) & set(changed)
    files_of = {issue["id"]: issue["file"] for issue in rnd["issues"]}
    unverified: list[str] = []
    for index, item in enumerate(results):
        if item.get("status") != "succeeded":
            continue
        files = {str(path) for path in item.get("files") or []} | {
            files_of.get(str(item.get("issue_id")), "")
        }
        if proven & files:
            continue
        results[index] = {
            **item,
            "status": "failed",
            "unverified": True,
            "reason": "no recorded edit of its files changed them (FIX_UNVERIFIED)",
        }
        unverified.append(str(item.get("issue_id")))
    if unverified:
        seen = ctx.review.setdefault("unverified_fixes", [])
        seen.extend(issue_id for issue_id in unverified if issue_id not in seen)
    return unverified


def roll_back_fix(ctx: StepContext, rnd: Round) -> list[str]:
    """Undo `rnd`'s fix through the effects; the files restored or deleted (sorted).

    The round keeps the whole report in `rollback`; every file kept, refused or left as is becomes a
    WARNING with the report's code (ROLLBACK_KEPT_USER_EDIT, ROLLBACK_REFUSED, ROLLBACK_LEFT_AS_IS, ...).
    """
    number = rnd["iteration"]
    fix: Mapping[str, Any] = rnd.get("fix") or {}
    snapshot = fix.get("snapshot")
    if not snapshot or ctx.effects is None:
        ctx.emit(
            "W",
            "WARNING",
            code="NO_SNAPSHOT",
            message=f"Round {number} has no snapshot to roll back to; nothing was restored.",
            iteration=number,
        )
        return []
    report = ctx.effects.rollback(snapshot)
    rnd["rollback"] = report
    for warning in report["warnings"]:
        ctx.emit(
            "W",
            "WARNING",
            code=warning["code"],
            message=f"Rollback of round {number}: {warning['message']}",
            iteration=number,
            files=warning["files"],
        )
    return sorted({*report["restored"], *report["deleted"]})
