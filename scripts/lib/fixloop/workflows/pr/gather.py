"""Phases 0-2 of fix-pr-review: check gh and the pull request, fetch its review, keep what to answer."""

from __future__ import annotations

from typing import Any

from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed, RunDone, Work
from fixloop.workflows.phase import Phase
from fixloop.workflows.pr import performers
from fixloop.workflows.pr.account import viewer, who_of
from fixloop.workflows.pr.filtering import filter_threads, outsiders
from fixloop.workflows.pr.record import missing, pr_record, prepared

MAX_NAMED = 10  # threads named in the warning's message; its `threads` lists every one


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
        pr_record(ctx.state)["viewer"] = result["viewer"]
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
    """Phase 2 (code only): drop resolved, outdated, own, bot, already answered threads and those opened by
    accounts without write access (workflows.pr.filtering)."""

    def step(self, ctx: PhaseContext) -> Outcome:
        record = prepared(ctx, "fetched")
        if record is None:
            return PhaseFailed(*missing(ctx, "fetched"))
        login = viewer(ctx)
        if not isinstance(login, str):
            return login
        who = who_of(ctx, record, login)
        threads = record["fetched"]["threads"]
        kept, dropped = filter_threads(threads, who)
        record["kept"] = kept
        record["dropped"] = dropped
        counts = {"kept": len(kept), **{reason: len(ids) for reason, ids in dropped.items()}}
        ctx.emit("I", "ANALYSIS_RESULT", analysis_type="pr_review_filter", result=counts)
        left = ", ".join(f"{reason} {len(ids)}" for reason, ids in dropped.items() if ids) or "none"
        ctx.data["final_lines"] = [
            f"Review threads: {len(kept)} of {len(threads)} to answer (left alone: {left})."
        ]
        strangers = outsiders(threads, set(dropped["no_write_access"]))
        if strangers:
            named = "; ".join(
                f"{item['thread']} by {item['author']} ({item['association']}) "
                f"on {item['file']}:{item['line']}"
                for item in strangers[:MAX_NAMED]
            )
            more = f" and {len(strangers) - MAX_NAMED} more" if len(strangers) > MAX_NAMED else ""
            message = (
                f"{len(strangers)} thread(s) left alone: opened by accounts without write access to the "
                f"repository (allowed: {', '.join(who.trusted)}; config pr_trusted_associations): "
                f"{named}{more}."
            )
            ctx.warn("THREADS_WITHOUT_WRITE_ACCESS", message, threads=strangers)  # in the final message too
        if not kept:
            return RunDone("success", "success", "no_open_threads", counts)
        return PhaseDone("success", counts)
