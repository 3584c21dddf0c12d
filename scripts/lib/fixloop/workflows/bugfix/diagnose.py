"""Bugfix phase 1, diagnose: the root-cause analyst finds the cause; the engine computes the confidence
(bugfix.confidence) and decides: auto_continue ends the phase, ask_user asks whether to go on (unattended:
the configured `on_low_confidence`), stop fails the phase with CONFIDENCE_TOO_LOW.
"""

from __future__ import annotations

from typing import Any

from fixloop.contracts.bugfix import ROOT_CAUSE_ANALYST
from fixloop.workflows.bugfix.confidence import assess
from fixloop.workflows.bugfix.inputs import needs
from fixloop.workflows.bugfix.tasks import root_cause_task
from fixloop.workflows.consult import consult
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Ask, Option, Outcome, PhaseDone, PhaseFailed, RunDone
from fixloop.workflows.phase import Phase

LOW_CONFIDENCE = "low_confidence"
CONTINUE, STOP = "continue", "stop"


class DiagnosePhase(Phase):
    agents = (ROOT_CAUSE_ANALYST,)

    def step(self, ctx: PhaseContext) -> Outcome:
        inputs = needs(ctx, 0)
        if isinstance(inputs, PhaseFailed):
            return inputs
        data = ctx.data
        if "confidence" not in data:
            answer = consult(
                ctx,
                ROOT_CAUSE_ANALYST,
                "Find the root cause",
                root_cause_task(inputs[0]),
                "find the root cause",
            )
            if not isinstance(answer, dict):
                return answer
            data["root_cause"] = answer["root_cause"]
            data["confidence"] = assess(ctx.root, inputs[0], answer)
            _log_decision(ctx, data["confidence"])
        confidence = data["confidence"]
        decision = confidence["decision"]
        summary = {"confidence_score": confidence["confidence_score"], "decision": decision}
        if decision == "auto_continue":
            return PhaseDone("success", summary)
        if decision == "stop":
            return _too_low(confidence, "is below the ask_user threshold")
        choice = ctx.answer(LOW_CONFIDENCE)
        if choice is None:
            return _ask(ctx, confidence)
        if choice == CONTINUE:
            return PhaseDone("success", {**summary, "user_decision": CONTINUE})
        answered = ctx.flow["answers"].get(LOW_CONFIDENCE) or {}
        if answered.get("default"):
            return _too_low(confidence, "calls for the user, and the run's default answer is stop")
        return RunDone(
            "user_cancelled", "user_cancelled", "low_confidence_stop", {**summary, "user_decision": STOP}
        )


def _log_decision(ctx: PhaseContext, confidence: dict[str, Any]) -> None:
    ctx.emit(
        "I",
        "CONFIDENCE_DECISION",
        confidence_score=confidence["confidence_score"],
        threshold=confidence["threshold"],
        decision=confidence["decision"],
        factors=confidence["factors"],
        measured=confidence["measured"],
        reported=confidence["reported"],
    )


def _too_low(confidence: dict[str, Any], why: str) -> PhaseFailed:
    score = confidence["confidence_score"]
    return PhaseFailed(
        "CONFIDENCE_TOO_LOW",
        f"The diagnosis confidence {score} {why}: the run stops before changing code.",
        details={"confidence_score": score, "factors": confidence["factors"], "recoverable": False},
    )


def _ask(ctx: PhaseContext, confidence: dict[str, Any]) -> Ask:
    score = confidence["confidence_score"]
    factors = ", ".join(f"{name} {value}" for name, value in confidence["factors"].items())
    return Ask(
        LOW_CONFIDENCE,
        f"The root cause was found with confidence {score} ({factors}). Go on and design the fix?",
        (
            Option(CONTINUE, "Design and implement the fix of this root cause."),
            Option(STOP, "Stop here; nothing is changed."),
        ),
        ctx.config.on_low_confidence,
    )
