"""Phases 0-2 of fix-pr-review: check gh and the pull request, fetch its review, keep what to answer."""

from __future__ import annotations

from typing import Any

from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed, RunDone, Work
from fixloop.workflows.phase import Phase
from fixloop.workflows.pr import performers
from fixloop.workflows.pr.filtering import filter_threads
from fixloop.workflows.pr.record import missing, pr_record, prepared


def _failed(result: dict[str, Any], fallback: str) -> PhaseFailed:
    details = dict(result.get("details") or {})
    return PhaseFailed(
        str(result.get("code") or fallback), str(result.get("message") or fallback), details=details
    )


class InitPhase(Phase):
    """Phase 0: gh installed and logged in, a GitHub remote, the pull request open and checked out."""

    def step(self, ctx: PhaseContext) -> Outcome:
        result = ctx.work_result(performers.PREFLIGHT)
        if result is None:
            return Work(performers.PREFLIGHT, {"pr": str((ctx.state.get("inputs") or {}).get("pr") or "")})
        if not result.get("ok"):
            return _failed(result, "PR_PREFLIGHT_FAILED")
        pr = result["pr"]
        pr_record(ctx.state)["pr"] = pr
        return PhaseDone("success", {"pr": pr["number"], "url": pr["url"], "head_ref": pr["head_ref"]})


class FetchPhase(Phase):
    """Phase 1: every review thread (all pages, all comments), the reviews and the conversation."""

    def step(self, ctx: PhaseContext) -> Outcome:
        record = prepared(ctx, "pr")
        if record is None:
            return PhaseFailed(*missing(ctx, "pr"))
        result = ctx.work_result(performers.FETCH)
        if result is None:
            return Work(performers.FETCH, {"pr": record["pr"]})
        if not result.get("ok"):
            return _failed(result, "PR_FETCH_FAILED")
        fetched = {key: result[key] for key in ("threads", "reviews", "conversation")}
        record["fetched"] = {**fetched, "fetched_at_ms": ctx.now}
        ctx.forget_work(performers.FETCH)  # kept once, in the record
        summary = {
            "threads": len(fetched["threads"]),
            "comments": sum(len(thread["comments"]) for thread in fetched["threads"]),
            "reviews": len(fetched["reviews"]),
            "conversation": len(fetched["conversation"]),
            "requests": result.get("pages"),
        }
        ctx.emit("I", "DATA_COLLECTED", data_type="pr_review_threads", summary=summary)
        return PhaseDone("success", summary)


class FilterPhase(Phase):
    """Phase 2 (code only): drop resolved, outdated, own, bot and already answered threads."""

    def step(self, ctx: PhaseContext) -> Outcome:
        record = prepared(ctx, "fetched")
        if record is None:
            return PhaseFailed(*missing(ctx, "fetched"))
        author = str(record["pr"].get("author") or "")
        kept, dropped = filter_threads(record["fetched"]["threads"], author, ctx.config.pr_include_bots)
        record["kept"] = kept
        record["dropped"] = dropped
        counts = {"kept": len(kept), **{reason: len(ids) for reason, ids in dropped.items()}}
        ctx.emit("I", "ANALYSIS_RESULT", analysis_type="pr_review_filter", result=counts)
        left = ", ".join(f"{reason} {len(ids)}" for reason, ids in dropped.items() if ids) or "none"
        total = len(record["fetched"]["threads"])
        ctx.data["final_lines"] = [f"Review threads: {len(kept)} of {total} to answer (left alone: {left})."]
        if not kept:
            return RunDone("success", "success", "no_open_threads", counts)
        return PhaseDone("success", counts)
