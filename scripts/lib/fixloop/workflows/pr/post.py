"""Phase 6: the engine posts each reply draft (workflows.pr.posting); a dry run shows them instead.

A run started at this phase (`--phase=6`) posts the drafts of the latest earlier fix-pr-review run of the
same pull request that drafted them, skipping what that run already posted. When that run was a dry run, the
replies to threads labelled fix are held back: they describe a fix that was never made, and once posted they
would mark the thread answered, so no later run would fix it.
"""

from __future__ import annotations

from typing import Any

from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed, Work
from fixloop.workflows.phase import Phase
from fixloop.workflows.pr import performers
from fixloop.workflows.pr.account import viewer
from fixloop.workflows.pr.record import missing, prepared

PREVIEW_CHARS = 300


def held_back(drafts: list[dict[str, Any]]) -> list[str]:
    """The threads whose draft a real run must not post: fix threads drafted by a dry run."""
    return [str(d["thread_id"]) for d in drafts if d.get("dry_run") and d.get("label") == "fix"]


def draft_lines(drafts: list[dict[str, Any]]) -> list[str]:
    """The drafts as the final message shows them in a dry run."""
    lines = [f"Replies drafted (dry run, nothing posted): {len(drafts)}"]
    for draft in drafts:
        body = " ".join(str(draft["body"]).split())
        cut = body if len(body) <= PREVIEW_CHARS else body[:PREVIEW_CHARS] + " [...]"
        lines.append(f"- {draft['thread_id']} ({draft['label']}): {cut}")
    return lines


class PostPhase(Phase):
    def step(self, ctx: PhaseContext) -> Outcome:
        record = prepared(ctx, "drafts")
        if record is None:
            return PhaseFailed(*missing(ctx, "drafts"))
        drafts: list[dict[str, Any]] = record["drafts"]
        if ctx.dry_run:
            ctx.data["final_lines"] = draft_lines(drafts)
            return PhaseDone("success", {"dry_run": True, "drafts": len(drafts), "posted": 0})
        held = held_back(drafts)
        result = ctx.work_result(performers.POST)
        if result is None:
            login = viewer(ctx)
            if not isinstance(login, str):
                return login
            params = {"resolve": ctx.config.pr_resolve_threads, "hold": held, "viewer": login}
            return Work(performers.POST, params)
        if not result.get("ok"):
            return PhaseFailed(str(result.get("code")), f"No reply posted: {result.get('message')}")
        posted = record.get("posted") or {}
        failed: dict[str, Any] = result["failed"]
        for thread_id, problem in failed.items():
            ctx.warn("REPLY_NOT_POSTED", f"Thread {thread_id}: {problem['message']}", thread=thread_id)
        if held:
            ctx.warn(
                "DRY_RUN_FIX_NOT_POSTED",
                f"{len(held)} reply(ies) not posted: a dry run drafted them for threads to fix, and fixed "
                "nothing. Run the command without --phase and --dry-run to fix and answer them.",
                threads=held,
            )
        fresh = set(result["posted"])
        summary = {
            "drafts": len(drafts),
            "posted": len(fresh),
            "already_posted": sum(
                1 for d in drafts if d["thread_id"] in posted and d["thread_id"] not in fresh
            ),
            "resolved": len(result["resolved"]),
            "failed": len(failed),
            "held": len(held),
        }
        ctx.data["final_lines"] = [
            f"Replies posted: {summary['posted']} (already there: {summary['already_posted']}); "
            f"threads resolved: {summary['resolved']}; failed: {summary['failed']}."
        ]
        done = [draft for draft in drafts if draft["thread_id"] in posted]
        ctx.data["summary_fields"] = {"replies_posted": len(done)}
        if not done and len(held) == len(drafts):
            return PhaseDone("skipped", summary)
        if not done:
            return PhaseFailed("PR_POST_FAILED", f"No reply could be posted ({len(failed)} failed).")
        return PhaseDone("partial" if failed or held else "success", summary)
