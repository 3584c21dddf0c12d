"""Phase 3: the comment classifier labels each kept thread; the engine applies the confidence rule.

A label below `confidence_threshold` becomes `unclear`: no change is made for the thread and its reply
asks the reviewer to clarify. Threads of a batch the classifier could not answer are left unlabelled (no
change, no reply) with a warning.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from fixloop.contracts.pr import CLASSIFIER_AGENT
from fixloop.github.markers import has_marker
from fixloop.review.state import Problem
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed
from fixloop.workflows.pr.account import who_of
from fixloop.workflows.pr.batched import BatchedAgentPhase, threads_problem
from fixloop.workflows.pr.filtering import Who
from fixloop.workflows.pr.record import missing, pr_record, prepared, thread_by_id
from fixloop.workflows.pr.tasks import classifier_task

LABELS: tuple[str, ...] = ("fix", "answer", "disagree", "unclear")


def apply_confidence(item: Mapping[str, Any], threshold: int) -> dict[str, Any]:
    """The engine's label of a thread: the classifier's, or unclear when its confidence is too low."""
    proposed = str(item["label"])
    demoted = proposed != "unclear" and int(item["confidence"]) < threshold
    return {
        "label": "unclear" if demoted else proposed,
        "proposed": proposed,
        "confidence": int(item["confidence"]),
        "reason": item["reason"],
        "suggestion": item.get("suggestion"),
        "demoted": demoted,
    }


def review_context(record: Mapping[str, Any], who: Who) -> list[dict[str, Any]]:
    """Review bodies and conversation comments people wrote (not bots, not fixloop), as context: those of
    accounts with write access and of the PR's author only (workflows.pr.filtering)."""
    fetched = record.get("fetched") or {}
    items = [*(fetched.get("reviews") or []), *(fetched.get("conversation") or [])]
    return [
        item
        for item in items
        if str(item.get("body") or "").strip()
        and not item.get("is_bot")
        and not has_marker(str(item["body"]))
        and (who.may_ask(item) or who.is_author(item))
    ]


class ClassifyPhase(BatchedAgentPhase):
    agent = CLASSIFIER_AGENT
    agents = (CLASSIFIER_AGENT,)
    role = "analysts"
    label = "classify review threads"
    batch_size = 30

    def items(self, ctx: PhaseContext) -> list[str] | Outcome:
        record = prepared(ctx, "kept")
        if record is None:
            return PhaseFailed(*missing(ctx, "kept"))
        record["classifications"] = {}
        record["unclassified"] = []
        return [str(thread["id"]) for thread in record["kept"]]

    def task(self, ctx: PhaseContext, batch: list[str]) -> str:
        record = pr_record(ctx.state)
        threads = thread_by_id(record)
        return classifier_task(
            ctx.state,
            record["pr"],
            [threads[thread_id] for thread_id in batch],
            review_context(record, who_of(ctx, record)),
            ctx.config.confidence_threshold,
        )

    def problem(self, ctx: PhaseContext, batch: list[str], document: Mapping[str, Any]) -> Problem | None:
        if document.get("status") == "failed":
            return None
        answered = [str(item["thread_id"]) for item in document.get("classifications") or []]
        return threads_problem(batch, answered, "classifications")

    def take(self, ctx: PhaseContext, batch: list[str], document: Mapping[str, Any] | None) -> None:
        record = pr_record(ctx.state)
        if document is None or document.get("status") == "failed":
            record["unclassified"] += batch
            ctx.warn(
                "CLASSIFIER_FAILED",
                f"The comment classifier gave no valid labels for {len(batch)} thread(s): they get no change "
                "and no reply.",
                threads=batch,
            )
            return
        threshold = ctx.config.confidence_threshold
        for item in document.get("classifications") or []:
            record["classifications"][str(item["thread_id"])] = apply_confidence(item, threshold)

    def finish(self, ctx: PhaseContext) -> Outcome:
        record = pr_record(ctx.state)
        labels = record["classifications"]
        counts = {label: 0 for label in LABELS} | dict(Counter(item["label"] for item in labels.values()))
        summary = {
            **counts,
            "demoted": sum(1 for item in labels.values() if item["demoted"]),
            "unclassified": len(record["unclassified"]),
        }
        ctx.emit("I", "ANALYSIS_RESULT", analysis_type="pr_review_labels", result=summary)
        if not labels:
            return PhaseFailed("CLASSIFIER_FAILED", "The comment classifier labelled no thread.")
        return PhaseDone("partial" if record["unclassified"] else "success", summary)
