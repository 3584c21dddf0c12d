"""The verification gate: which verification result the loop waits for, and `fixloop verify` feeding it.

The loop waits for a result twice: before the first round ("initial", once `review next` asked for it) and
after each round's fix ("post_fix"). `verify_run` runs the project's commands (runs.verification), stores
the result in the run state's `verification` and hands it to the slot that waits, in one state update.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.core import timekeeping
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.review.access import current_round, started_review
from fixloop.review.batches import last_batch
from fixloop.review.state import RunState
from fixloop.review.step import Document, StepContext
from fixloop.runs import lifecycle
from fixloop.runs.verification import FAILED_STATUSES, STEP_NAMES, verify


def verification_passed(result: Mapping[str, Any] | None) -> bool:
    if not result:
        return False
    passed = result.get("passed")
    if isinstance(passed, bool):
        return passed
    for name in STEP_NAMES:
        step = result.get(name)
        if isinstance(step, Mapping) and step.get("status") in FAILED_STATUSES:
            return False
    return True


def failed_steps_text(result: Mapping[str, Any] | None) -> str:
    parts: list[str] = []
    for name in STEP_NAMES:
        step = (result or {}).get(name)
        if isinstance(step, Mapping) and step.get("status") in FAILED_STATUSES:
            reason = step.get("reason") or step.get("status")
            parts.append(f"{name} {step.get('status')} ({reason})")
    return "; ".join(parts) or "verification failed"


def verification_slot(state: Mapping[str, Any]) -> str | None:
    """Where a verification result goes now: "initial", "post_fix", or None when the loop waits for none.

    The initial gate only takes a result once `review next` asked for it (a `fixloop verify` of an earlier
    workflow phase is not the review's gate). The post-fix slot opens when the round's fixer has answered
    (or the fix was closed by `review next`).
    """
    review = started_review(state)
    if review is None or review.get("outcome"):
        return None
    gate = review["gate"]
    if gate["verification"] is None:
        return "initial" if gate["requested_at_ms"] is not None else None
    rnd = current_round(review)
    fix = rnd.get("fix") if rnd is not None else None
    if rnd is None or not fix or rnd.get("verification") is not None:
        return None
    record = fix.get("record")
    answered = fix.get("done") or (record is not None and record.get("valid") and last_batch(fix))
    return "post_fix" if answered else None


def attach_verification(state: RunState, result: Mapping[str, Any]) -> RunState:
    """Store a verification result in the slot the loop waits for (mutates and returns `state`).

    See verification_slot. A result nobody waits for changes nothing here (verify_run keeps it in
    state["verification"] anyway).
    """
    slot = verification_slot(state)
    review = started_review(state)
    if slot is None or review is None:
        return state
    stored = dict(result)
    if slot == "initial":
        review["gate"]["verification"] = stored
        review["gate"]["passed"] = verification_passed(stored)
    else:
        rnd = current_round(review)
        assert rnd is not None
        rnd["verification"] = stored
        rnd["verification_passed"] = verification_passed(stored)
    return state


def verify_action(ctx: StepContext, number: int, slot: str) -> Document:
    return {
        "action": "verify",
        "round": number,
        "slot": slot,
        "command": f"fixloop verify {ctx.run_id}",
        "next_command": f"fixloop review next {ctx.run_id}",
    }


def verify_run(root: Path, run_id: str, clock: lifecycle.Clock | None = None) -> dict[str, Any]:
    """`fixloop verify RUN`: run the commands, store the result in the run and the loop, return it."""
    clock = clock or timekeeping.default_clock
    state = lifecycle.load_run(root, run_id)
    lifecycle.require_running(state)
    result = verify(state, clock)

    def save(current: RunState) -> None:
        lifecycle.require_running(current)
        current["verification"] = result
        attach_verification(current, result)
        current["updated_at"] = utc_timestamp_ms(timekeeping.now_ms(clock) / 1000)

    lifecycle.store_for(root, run_id, clock).update(save, action="verify")
    return {"run_id": run_id, **result}
