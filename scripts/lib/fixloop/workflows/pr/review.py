"""Phase 7: the review loop on the files the run committed, then (opt-in) a summary comment on the PR."""

from __future__ import annotations

from collections import Counter
from typing import Any

from fixloop.review.access import started_review
from fixloop.review.views import summary as review_summary
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, Work
from fixloop.workflows.pr import performers
from fixloop.workflows.pr.record import pr_record, prepared
from fixloop.workflows.review_phase import ReviewPhase


def summary_body(state: dict[str, Any]) -> str:
    """The pull request comment that says what the run did."""
    record = pr_record(state)
    labels = Counter(item["label"] for item in (record.get("classifications") or {}).values())
    posted = len(record.get("posted") or {})
    commit = record.get("commit") or {}
    lines = [f"fixloop answered {posted} review thread(s) of this pull request."]
    if commit.get("sha"):
        fixed = len(commit.get("threads") or [])
        lines.append(f"- Fixed: {fixed} thread(s), in commit {str(commit['sha'])[:7]}.")
    lines.append(
        f"- Answered: {labels['answer']}; disagreed: {labels['disagree']}; "
        f"asked to clarify: {labels['unclear']}."
    )
    review = started_review(state)
    if review is not None:
        numbers = review_summary(review)
        lines.append(
            f"- Review of the changes: {numbers['total_iterations']} round(s), {numbers['fixed_issues']} "
            f"issue(s) fixed, {numbers['final_issues']} left."
        )
    return "\n".join(lines)


class PrReviewPhase(ReviewPhase):
    def step(self, ctx: PhaseContext) -> Outcome:
        done = ctx.data.get("done")
        if isinstance(done, dict):
            return self._after_summary(ctx, done)
        if not ctx.data.get("scoped") and started_review(ctx.state) is None:
            record = prepared(ctx, "commit") or pr_record(ctx.state)
            commit = record.get("commit") or {}
            ctx.state["changed_files"] = list(commit.get("files") or [])
            if commit.get("parent"):
                ctx.state["base_ref"] = commit["parent"]
            ctx.data["scoped"] = True
        outcome = super().step(ctx)
        wanted = ctx.config.pr_post_summary and not ctx.dry_run and pr_record(ctx.state).get("pr")
        if not isinstance(outcome, PhaseDone) or not wanted:
            return outcome
        ctx.data["done"] = {"status": outcome.status, "summary": outcome.summary}
        record = pr_record(ctx.state)
        params = {"pr": record["pr"], "viewer": record.get("viewer"), "body": summary_body(ctx.state)}
        return Work(performers.SUMMARY, params)

    def _after_summary(self, ctx: PhaseContext, done: dict[str, Any]) -> Outcome:
        result = ctx.work_result(performers.SUMMARY) or {}
        if result.get("ok"):
            pr_record(ctx.state)["summary_comment"] = {"url": result.get("url"), "found": result.get("found")}
        else:
            ctx.warn("SUMMARY_NOT_POSTED", f"The summary comment was not posted: {result.get('message')}")
        return PhaseDone(str(done["status"]), dict(done["summary"]))

    def apply_work(self, ctx: PhaseContext, kind: str, result: Any) -> None:
        if kind == performers.SUMMARY:
            ctx.store_work(kind, result)
        else:
            super().apply_work(ctx, kind, result)
