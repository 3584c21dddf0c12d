"""Questions for the user: asking when verification fails or the loop diverges, choosing, rolling back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.contracts.runconfig import RunConfig
from fixloop.core.errors import FixloopError
from fixloop.review.access import current_round, previous_round, run_id_of
from fixloop.review.fix import roll_back_fix
from fixloop.review.gate import failed_steps_text
from fixloop.review.state import Question, Review, Round, RunState
from fixloop.review.step import Document, Effects, StepContext, Transition

CHOICE_DESCRIPTIONS: dict[str, dict[str, str]] = {
    "initial_verification_failed": {
        "continue": "Review anyway, knowing the project does not verify cleanly (risky)",
        "manual": "Stop the review and keep everything as it is, to handle it by hand",
        "cancel": "Cancel the review",
    },
    "review_verification_failed": {
        "rollback": "Undo the fixer's changes of this round (exactly the files it changed) and stop",
        "continue": "Keep the changes and go on to the next review round (risky)",
        "manual": "Keep the changes and stop, to handle the failure by hand",
        "cancel": "Cancel the review, keeping the changes",
    },
    "review_diverged": {
        "rollback": "Undo the last round's fixes (exactly the files the fixer changed) and stop",
        "manual": "Keep the changes and review them by hand",
    },
}


def default_choice(context: str, config: RunConfig) -> str:
    configured = config.on_verification_failure
    if context == "initial_verification_failed":
        return "manual" if configured == "rollback" else configured
    if context == "review_diverged":
        return "rollback" if configured == "rollback" else "manual"
    return configured


def _question_text(review: Review, context: str, number: int, verification: Mapping[str, Any] | None) -> str:
    if context == "initial_verification_failed":
        return (
            f"Verification failed before the review: {failed_steps_text(verification)}. "
            "How should the review go on?"
        )
    if context == "review_verification_failed":
        return (
            f"Verification failed after the fixes of review round {number}: "
            f"{failed_steps_text(verification)}. What now?"
        )
    rnd: Mapping[str, Any] = current_round(review) or {}
    previous: Mapping[str, Any] = previous_round(review, rnd) or {}
    return (
        "The review-fix loop diverged: fixable issues went from "
        f"{len(previous.get('fixable') or [])} to {len(rnd.get('fixable') or [])} "
        f"after the fixes of round {previous.get('iteration')} "
        f"(introduced: {', '.join(rnd.get('introduced_issues') or []) or 'none'}). "
        "Roll those fixes back, or keep them?"
    )


def ask(ctx: StepContext, context: str, number: int, verification: Mapping[str, Any] | None) -> Document:
    """The `ask_user` action; the question is asked (and logged) once, then repeated until answered."""
    question = ctx.review.get("question")
    if not question or question.get("context") != context or question.get("round") != number:
        text = _question_text(ctx.review, context, number, verification)
        question = {
            "context": context,
            "round": number,
            "question": text,
            "options": list(CHOICE_DESCRIPTIONS[context]),
            "default": default_choice(context, ctx.config),
            "asked_at_ms": ctx.now,
        }
        ctx.review["question"] = question
        ctx.emit("X", "USER_INTERACTION", context=context, question=text, iteration=number)
    return ask_action(ctx.state, question)


def ask_action(state: Mapping[str, Any], question: Question) -> Document:
    run_id = run_id_of(state)
    descriptions = CHOICE_DESCRIPTIONS[str(question["context"])]
    return {
        "action": "ask_user",
        "round": question["round"],
        "context": question["context"],
        "question": question["question"],
        "options": [{"label": label, "description": descriptions[label]} for label in question["options"]],
        "default": question["default"],
        "choose_command": f"fixloop review choose {run_id} <label>",
        "default_command": f"fixloop review choose {run_id} --default",
    }


def _effective_choice(question: Question, choice: str | None, default: bool) -> str:
    """The choice to apply, checked against the question's options (INVALID_CHOICE, MISSING_CHOICE)."""
    context = str(question["context"])
    expected = str(question["default"])
    if default:
        if choice is not None and choice != expected:
            raise FixloopError(
                "INVALID_CHOICE",
                f"--default chooses {expected!r} here, not {choice!r}.",
                valid_values=list(question["options"]),
                received=choice,
                default=expected,
            )
        choice = expected
    if choice is None:
        raise FixloopError(
            "MISSING_CHOICE", "Give a choice or --default.", valid_values=list(question["options"])
        )
    effective = choice
    if context == "initial_verification_failed" and choice == "rollback":
        effective = "manual"  # nothing to roll back before any fix
    if effective not in question["options"]:
        raise FixloopError(
            "INVALID_CHOICE",
            f"Invalid choice {choice!r} for this question.",
            valid_values=list(question["options"]),
            received=choice,
        )
    return effective


def choose(
    state: RunState,
    choice: str | None,
    default: bool = False,
    effects: Effects | None = None,
    now_ms: int | None = None,
    inplace: bool = False,
) -> Transition:
    """Answer the pending question. `default` applies config.on_verification_failure (see default_choice).

    rollback restores the files the fixer changed in the round it undoes (through `effects`).
    """
    ctx = StepContext(state, effects, now_ms, inplace)
    review = ctx.review
    question = review.get("question")
    if not question:
        raise FixloopError(
            "NO_PENDING_QUESTION",
            "The review is not waiting for a choice.",
            suggestion=f"Run `fixloop review next {ctx.run_id}` to see the next action.",
        )
    context = str(question["context"])
    effective = _effective_choice(question, choice, default)
    number = int(question["round"])
    restored: list[str] = []
    if context == "initial_verification_failed":
        review["gate"]["choice"] = effective
    else:
        rnd = _round_by_number(review, number)
        target: Round | None
        if context == "review_verification_failed":
            rnd["choice"] = effective
            target = rnd
        else:
            rnd["divergence_choice"] = effective
            target = previous_round(review, rnd)
        if effective == "rollback" and target is not None:
            restored = _rollback(ctx, target)
    wait = max(0, ctx.now - int(question.get("asked_at_ms") or ctx.now))
    review["interactions"].append(
        {
            "context": context,
            "round": number,
            "question": question["question"],
            "choice": effective,
            "default": default,
            "asked_at_ms": question.get("asked_at_ms"),
            "answered_at_ms": ctx.now,
        }
    )
    review["question"] = None
    ctx.emit(
        "X",
        "USER_INTERACTION",
        context=context,
        user_response=effective,
        wait_duration_ms=wait,
        default=default,
        iteration=number,
    )
    return ctx.transition(
        {
            "status": "chosen",
            "choice": effective,
            "default": default,
            "context": context,
            "round": number,
            "restored_files": restored,
            "next_command": f"fixloop review next {ctx.run_id}",
        }
    )


def _round_by_number(review: Review, number: int) -> Round:
    for rnd in review["rounds"]:
        if rnd["iteration"] == number:
            return rnd
    raise FixloopError("STATE_INVALID", f"The review has no round {number}.")


def _rollback(ctx: StepContext, rnd: Round) -> list[str]:
    """Undo `rnd`'s fix (review.fix.roll_back_fix) and mark the round rolled back."""
    restored = roll_back_fix(ctx, rnd)
    rnd["rolled_back"] = True
    rnd["rollback_files"] = restored
    return restored
