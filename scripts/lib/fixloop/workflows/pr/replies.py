"""Phase 5: the reply writer drafts one reply per labelled thread; the drafts are kept in the run.

The engine checks each draft before keeping it: one per thread given, the commit named (by its short sha)
in the reply to a fixed thread, no fixloop marker (the engine adds its own when it posts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.contracts.pr import REPLY_WRITER_AGENT
from fixloop.github.markers import has_marker
from fixloop.review.state import Problem
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed
from fixloop.workflows.pr.batched import BatchedAgentPhase, threads_problem
from fixloop.workflows.pr.record import missing, pr_record, prepared, thread_by_id
from fixloop.workflows.pr.tasks import thread_view, writer_task

SHORT_SHA = 7


def outcome_of(record: Mapping[str, Any], thread_id: str, dry_run: bool) -> dict[str, Any]:
    """What the run did about a thread, as the reply writer is told."""
    label = record["classifications"][thread_id]
    told: dict[str, Any] = {"label": label["label"], "reason": label["reason"]}
    if label["demoted"]:
        told["note"] = f"labelled {label['proposed']} with too little confidence to act on"
    if label["label"] != "fix":
        return told
    fix = (record.get("fixes") or {}).get(thread_id) or {}
    if fix.get("status") == "committed":
        told.update(result="fixed", commit=str(fix["commit"])[:SHORT_SHA], files=fix.get("files") or [])
    elif dry_run or fix.get("status") == "dry_run":
        told.update(result="dry run", would_change=label.get("suggestion") or label["reason"])
    else:
        told.update(result="not fixed", why=fix.get("reason") or "no fix was made")
    return told


class ReplyPhase(BatchedAgentPhase):
    agent = REPLY_WRITER_AGENT
    agents = (REPLY_WRITER_AGENT,)
    role = "writers"
    label = "draft replies"
    batch_size = 20

    def items(self, ctx: PhaseContext) -> list[str] | Outcome:
        record = prepared(ctx, "classifications")
        if record is None:
            return PhaseFailed(*missing(ctx, "classifications"))
        record["drafts"] = []
        record["undrafted"] = []
        record.pop("posted", None)  # what was posted belongs to earlier drafts
        labels = record["classifications"]
        ids = [str(thread["id"]) for thread in record["kept"] if str(thread["id"]) in labels]
        if not ids:
            return PhaseDone("skipped", {"drafts": 0})
        return ids

    def task(self, ctx: PhaseContext, batch: list[str]) -> str:
        record = pr_record(ctx.state)
        threads = thread_by_id(record)
        items = [
            {**thread_view(threads[thread_id]), "outcome": outcome_of(record, thread_id, ctx.dry_run)}
            for thread_id in batch
        ]
        return writer_task(ctx.state, record["pr"], items)

    def _commit(self, ctx: PhaseContext, thread_id: str) -> str | None:
        fix = (pr_record(ctx.state).get("fixes") or {}).get(thread_id) or {}
        return str(fix["commit"]) if fix.get("status") == "committed" else None

    def problem(self, ctx: PhaseContext, batch: list[str], document: Mapping[str, Any]) -> Problem | None:
        if document.get("status") == "failed":
            return None
        replies = list(document.get("replies") or [])
        extra: list[dict[str, str]] = []
        for index, reply in enumerate(replies):
            thread_id, body = str(reply["thread_id"]), str(reply["body"])
            commit = self._commit(ctx, thread_id) if thread_id in batch else None
            if commit and commit[:SHORT_SHA] not in body:
                extra.append(
                    {
                        "path": f"$.replies[{index}].body",
                        "message": f"the reply to thread {thread_id} must name commit {commit[:SHORT_SHA]}",
                    }
                )
            if has_marker(body):
                extra.append(
                    {"path": f"$.replies[{index}].body", "message": "must not hold a fixloop marker comment"}
                )
        return threads_problem(batch, [str(reply["thread_id"]) for reply in replies], "replies", extra)

    def take(self, ctx: PhaseContext, batch: list[str], document: Mapping[str, Any] | None) -> None:
        record = pr_record(ctx.state)
        if document is None or document.get("status") == "failed":
            record["undrafted"] += batch
            ctx.warn(
                "REPLY_WRITER_FAILED",
                f"The reply writer gave no valid replies for {len(batch)} thread(s): they get no reply.",
                threads=batch,
            )
            return
        labels = record["classifications"]
        for reply in document.get("replies") or []:
            thread_id = str(reply["thread_id"])
            record["drafts"].append(
                {
                    "thread_id": thread_id,
                    "body": str(reply["body"]),
                    "label": labels[thread_id]["label"],
                    "commit": self._commit(ctx, thread_id),
                    "run_id": ctx.run_id,
                    "dry_run": ctx.dry_run,
                }
            )

    def finish(self, ctx: PhaseContext) -> Outcome:
        record = pr_record(ctx.state)
        order = {str(thread["id"]): index for index, thread in enumerate(record["kept"])}
        record["drafts"].sort(key=lambda draft: order.get(draft["thread_id"], len(order)))
        summary = {"drafts": len(record["drafts"]), "undrafted": len(record["undrafted"])}
        if not record["drafts"]:
            return PhaseFailed("REPLY_WRITER_FAILED", "The reply writer drafted no reply.")
        return PhaseDone("partial" if record["undrafted"] else "success", summary)
