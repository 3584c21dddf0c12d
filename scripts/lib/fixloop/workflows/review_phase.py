"""The review-fix loop as a workflow phase: the review machine decides, the engine carries out its steps.

Verification runs inside the engine (Work "verification"); reviewers, verifier and fixer are dispatched;
the loop's questions go to the user; its end ends the phase.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT
from fixloop.review.gate import attach_verification
from fixloop.review.machine import decide_next
from fixloop.review.questions import choose
from fixloop.review.record import agent_role, record_agent_result
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.earlier import EarlierPhases
from fixloop.workflows.outcomes import (
    Ask,
    Call,
    Dispatch,
    Option,
    Outcome,
    PhaseDone,
    PhaseFailed,
    RunDone,
    Work,
)
from fixloop.workflows.phase import Phase

VERIFICATION = "verification"
PUBLISH = "publish"
# The review's end status -> the phase's status (a dry run's review did its whole job: the run, not the
# phase, says dry_run_complete).
PHASE_STATUS = {"success": "success", "partial": "partial", "dry_run_complete": "success"}


def _batch_label(action: Mapping[str, Any]) -> str:
    """ ", batch 2/3" for an action that hands over one of several batches of findings, else ""."""
    batches = int(action.get("batches") or 1)
    return f", batch {action.get('batch')}/{batches}" if batches > 1 else ""


class ReviewPhase(Phase):
    agents = (*REVIEWER_AGENTS, FIXER_AGENT, VERIFIER_AGENT)

    def step(self, ctx: PhaseContext) -> Outcome:
        transition = decide_next(ctx.state, ctx.effects, ctx.now, inplace=True)
        ctx.events.extend(transition.events)
        action = transition.document
        kind = action["action"]
        number = action.get("round")
        if kind == "verify":
            return Work(VERIFICATION, {"slot": action.get("slot")})
        if kind == "review":
            shard = action.get("shard")
            label = f"review round {number}" + (f", shard {shard[0]}/{shard[1]}" if shard else "")
            return Dispatch(
                tuple(
                    Call(agent, f"Review round {number}", action["prompt"], "reviewers")
                    for agent in REVIEWER_AGENTS
                ),
                label,
                number,
            )
        if kind == "verify_findings":
            label = f"verify the findings of round {number}" + _batch_label(action)
            call = Call(VERIFIER_AGENT, f"Verify round {number}", action["prompt"], "verifier")
            return Dispatch((call,), label, number)
        if kind == "fix":
            label = f"fix round {number}" + _batch_label(action)
            call = Call(FIXER_AGENT, f"Fix round {number}", action["prompt"], "fixer")
            return Dispatch((call,), label, number)
        if kind == "ask_user":
            options = tuple(Option(item["label"], item["description"]) for item in action["options"])
            return Ask(action["context"], action["question"], options, action["default"], logged=True)
        if kind == "failed":
            error = action["error"]
            return PhaseFailed(
                str(error["code"]), str(error["message"]), details={"review": error}, logged=True
            )
        status = str(action["status"])
        summary = dict(action.get("summary") or {})
        if status == "user_cancelled":
            return RunDone("user_cancelled", "user_cancelled", "user_cancelled", summary)
        if status == "failed":
            return PhaseFailed("REVIEW_FAILED", "The review failed.", details={"summary": summary})
        return self._published(ctx, status, summary)

    def _published(self, ctx: PhaseContext, status: str, summary: dict[str, Any]) -> Outcome:
        """The end of the phase; with `--pr` (inputs.publish_pr), once the findings are on the pull
        request (engine work "publish"), or failed with the publish's error code."""
        inputs = ctx.state.get("inputs")
        pr = inputs.get("publish_pr") if isinstance(inputs, dict) else None
        if pr is None:
            return PhaseDone(PHASE_STATUS[status], summary)
        result = ctx.work_result(PUBLISH)
        if result is None:
            return Work(PUBLISH, {"pr": pr})
        if "error" in result:
            error = result["error"]
            return PhaseFailed(str(error["code"]), str(error["message"]), details={"summary": summary})
        answer = result["answer"]
        summary["published"] = {
            "pr": answer["pr"],
            "inline_comments": len(answer["inline_comments"]),
            "outside_diff": len(answer["outside_diff"]),
            "fixed_threads": len(answer["fixed_threads"]),
            "dismissed": len(answer["dismissed"]),
            "summary": answer["summary"],
            "check": answer["check"],
            "warnings": [item["code"] for item in answer.get("warnings") or []],
        }
        return PhaseDone(PHASE_STATUS[status], summary)

    def apply_work(self, ctx: PhaseContext, kind: str, result: Any) -> None:
        if kind == PUBLISH:
            ctx.store_work(kind, result)
            return
        ctx.state["verification"] = result
        attach_verification(ctx.state, result)

    def apply_answer(self, ctx: PhaseContext, context: str, choice: str, default: bool) -> list[str]:
        transition = choose(ctx.state, choice, default, ctx.effects, ctx.now, inplace=True)
        ctx.events.extend(transition.events)
        restored: list[str] = transition.document["restored_files"]
        return restored

    def contract_kind(self, agent: str) -> str | None:
        return agent_role(agent) if agent in self.agents else None

    def record(
        self,
        ctx: PhaseContext,
        agent: str,
        document: Mapping[str, Any] | None,
        error: Mapping[str, Any] | None,
        *,
        provenance: str,
        agent_id: str | None,
    ) -> dict[str, Any]:
        transition = record_agent_result(
            ctx.state,
            agent,
            document,
            error,
            provenance=provenance,
            agent_id=agent_id,
            now_ms=ctx.now,
            inplace=True,
        )
        ctx.events.extend(transition.events)
        return transition.document


class ChangedFilesReviewPhase(ReviewPhase):
    """The review loop over the files phase 4 of a workflow changed (its `files_changed`), for workflows whose
    phase 4 changes code; a dry run changed nothing, so it skips the review."""

    SCOPED = "changed_files_set"  # ctx.data key: the review's files were set from phase 4

    def __init__(self, earlier: EarlierPhases) -> None:
        self.earlier = earlier

    def step(self, ctx: PhaseContext) -> Outcome:
        if ctx.dry_run:
            return PhaseDone("skipped", {"reason": "dry_run"})
        if not ctx.data.get(self.SCOPED):
            inputs = self.earlier.needs(ctx, 4)
            if isinstance(inputs, PhaseFailed):
                return inputs
            ctx.state["changed_files"] = sorted(inputs[4].get("files_changed") or [])
            ctx.data[self.SCOPED] = True
        return super().step(ctx)


REVIEW_PHASES: tuple[Phase, ...] = (ReviewPhase(),)
