"""The engine's step over a run: open the next phase, step it, and keep the books of what it asks for.

`advance` works on the state inside one locked update and returns what the model must do next (agents to
call, a question, the end) or engine work to run outside the lock. It never runs long work itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.review.step import Effects, Event
from fixloop.runs import ending, phasebook
from fixloop.workflows import actions, early_stop, pending, trust_gate
from fixloop.workflows.context import PhaseContext, RunState, flow_of
from fixloop.workflows.outcomes import Ask, Dispatch, PhaseDone, PhaseFailed, RunDone, Work
from fixloop.workflows.registry import phase_for
from fixloop.workflows.summary import run_summary

MAX_ERRORS = 3
MAX_STEPS = 100


@dataclass
class Advance:
    """What `advance` came to: an action for the model, or work for the engine (phase number, work)."""

    action: dict[str, Any] | None = None
    work: tuple[int, Work] | None = None
    tasks: dict[str, str] = field(default_factory=dict)  # agent -> the task of a new dispatch
    events: list[Event] = field(default_factory=list)


def attended(state: RunState) -> bool:
    """Whether a person can answer questions in this run (else their defaults are taken)."""
    config = state.get("config") or {}
    mode = config.get("questions", "auto") if isinstance(config, dict) else "auto"
    if mode in ("ask", "default"):
        return bool(mode == "ask")
    return state.get("interactive") is True


def advance(
    state: RunState, now: int, effects: Effects | None, calls_made: pending.CallsMade, stopped: bool = False
) -> Advance:
    """Step the run as far as it goes without a model or long work. `stopped`: the model that carries the
    run has stopped (workflows.pending says what that means for a step it left undone)."""
    before = flow_of(state).get("dispatch")
    waiting = before.get("id") if isinstance(before, dict) and not before.get("closed") else None
    result = _advance(state, now, effects, calls_made, stopped)
    action = result.action
    # Only a step handed out before, and handed out again unchanged, was left undone by a stop: a new step
    # (or the follow-up of a step's missing calls) is the engine's answer to the stop.
    again = action is not None and action.get("action") in ("agent", "agents") and action["step"] == waiting
    if stopped and action is not None and again:
        over, warning = early_stop.note(state, action)
        result.events.append(warning)
        if over:
            _abort(state, now, result, early_stop.CODE, early_stop.end_message(action))
    return result


def _advance(
    state: RunState, now: int, effects: Effects | None, calls_made: pending.CallsMade, stopped: bool
) -> Advance:
    result = Advance()
    if state.get("ended_at_ms") is not None:
        result.action = actions.stop_action(state)
        return result
    flow = flow_of(state)
    for _ in range(MAX_STEPS):
        if int(state.get("error_count") or 0) >= MAX_ERRORS:
            _abort(state, now, result, "TOO_MANY_ERRORS", f"The run met {MAX_ERRORS} errors and stops.")
            return result
        number = phasebook.next_phase(state)
        if number is None:
            reason = flow.get("reason")
            _end(
                state,
                now,
                result,
                phasebook.final_status(state),
                reason=reason if isinstance(reason, str) else None,
            )
            return result
        if str(number) not in (state.get("open_phases") or {}):
            fields = phasebook.open_phase(state, number, now)
            result.events.append(("I", "PHASE_START", fields))
        phase = phase_for(state, number)
        ctx = PhaseContext(state, number, now, effects)
        open_dispatch = flow.get("dispatch")
        if isinstance(open_dispatch, dict) and not open_dispatch.get("closed"):
            action, events = pending.settle(state, open_dispatch, calls_made(open_dispatch), stopped, now)
            result.events.extend(events)
            if action is not None:
                result.action = action
                return result
        question = flow.get("question")
        if isinstance(question, dict):
            result.action = actions.ask_action(state, question)
            return result
        gate = None if trust_gate.settled(state) else trust_gate.check(ctx, attended(state))
        outcome = gate if gate is not None else phase.step(ctx)
        result.events.extend(ctx.events)
        if isinstance(outcome, Work):
            result.work = (number, outcome)
            return result
        if isinstance(outcome, Dispatch):
            dispatch = actions.new_dispatch(state, number, outcome, now)
            result.tasks = {call.agent: call.task for call in outcome.calls}
            result.action = actions.agents_action(state, dispatch)
            return result
        if isinstance(outcome, Ask):
            if attended(state):
                flow["question"] = actions.new_question(outcome, number, now)
                if not outcome.logged:
                    result.events.append(_asked(number, outcome))
                result.action = actions.ask_action(state, flow["question"])
                return result
            answer_question(state, outcome.default, True, now, effects, result.events, asked=outcome)
            continue
        if isinstance(outcome, PhaseDone):
            _close(state, number, outcome.status, now, result, outcome.summary)
            if isinstance(outcome.summary.get("termination_reason"), str):  # the run ends for the same reason
                flow["reason"] = outcome.summary["termination_reason"]
            continue
        if isinstance(outcome, RunDone):
            _close(state, number, outcome.phase_status, now, result, outcome.summary)
            _skip_rest(state, now, result)
            _end(state, now, result, outcome.status, reason=outcome.reason)
            return result
        assert isinstance(outcome, PhaseFailed)
        if not outcome.logged:
            ctx = PhaseContext(state, number, now, effects)
            ctx.error(outcome.code, outcome.message, **outcome.details)
            result.events.extend(ctx.events)
        flow["outcome"] = {
            "status": outcome.status,
            "error": {"code": outcome.code, "message": outcome.message},
        }
        _close(state, number, outcome.status, now, result, {"error": outcome.code})
        _end(state, now, result, outcome.status, reason=outcome.code)
        return result
    _abort(state, now, result, "STEP_LIMIT", f"The run took more than {MAX_STEPS} engine steps at once.")
    return result


def apply_work(
    state: RunState, number: int, work: Work, output: Any, now: int, effects: Effects | None
) -> list[Event]:
    """Hand a work result back to the phase that asked for it."""
    ctx = PhaseContext(state, number, now, effects)
    phase_for(state, number).apply_work(ctx, work.kind, output)
    return ctx.events


def answer_question(
    state: RunState,
    choice: str | None,
    default: bool,
    now: int,
    effects: Effects | None,
    events: list[Event],
    asked: Ask | None = None,
) -> dict[str, Any]:
    """Answer the pending question (or, unattended, the one just `asked`) with `choice` or its default."""
    flow = flow_of(state)
    question = flow.get("question")
    if question is None and asked is not None:
        question = actions.new_question(asked, phasebook.next_phase(state) or 0, now)
    if not isinstance(question, dict):
        raise FixloopError("NO_PENDING_QUESTION", "The run is not waiting for an answer.")
    label = actions.check_choice(question, choice, default)
    number = int(question["phase"])
    ctx = PhaseContext(state, number, now, effects)
    if question["context"] == trust_gate.CONTEXT:
        trust_gate.apply_answer(ctx, label)
        restored: list[str] = []
    else:
        restored = phase_for(state, number).apply_answer(ctx, str(question["context"]), label, default)
    events.extend(ctx.events)
    wait = max(0, now - int(question["asked_at_ms"]))
    interaction = {
        "phase": f"phase_{number}",
        "context": question["context"],
        "question": question["question"],
        "options": [option["label"] for option in question["options"]],
        "user_response": label,
        "default": default,
        "wait_duration_ms": wait,
    }
    flow["interactions"].append(interaction)
    flow["question"] = None
    if not question.get("logged"):
        events.append(("X", "USER_INTERACTION", {"interaction_type": "AskUserQuestion", **interaction}))
    return {"choice": label, "default": default, "context": question["context"], "restored_files": restored}


def _asked(number: int, outcome: Ask) -> Event:
    return (
        "X",
        "USER_INTERACTION",
        {
            "phase": f"phase_{number}",
            "interaction_type": "AskUserQuestion",
            "context": outcome.context,
            "question": outcome.question,
            "options": [option.label for option in outcome.options],
        },
    )


def _close(
    state: RunState, number: int, status: str, now: int, result: Advance, summary: dict[str, Any]
) -> None:
    closed = phasebook.close_phase(state, number, status, now)
    result.events.append(
        (
            "I",
            "PHASE_END",
            {
                "phase": closed["phase"],
                "status": status,
                "duration_ms": closed["duration_ms"],
                "summary": summary,
            },
        )
    )


def _skip_rest(state: RunState, now: int, result: Advance) -> None:
    while (number := phasebook.next_phase(state)) is not None:
        fields = phasebook.open_phase(state, number, now)
        result.events.append(("I", "PHASE_START", fields))
        _close(state, number, "skipped", now, result, {})


def _end(state: RunState, now: int, result: Advance, status: str, reason: str | None = None) -> None:
    if status == "success" and state.get("dry_run"):
        status = "dry_run_complete"
    summary = run_summary(state)
    closed = ending.end(state, status, summary, now)
    if closed is not None:
        result.events.append(
            (
                "I",
                "PHASE_END",
                {"phase": closed["phase"], "status": status, "duration_ms": closed["duration_ms"]},
            )
        )
    flow = flow_of(state)
    flow["outcome"] = {**(flow.get("outcome") or {}), "status": status, "reason": reason}
    result.events.append(
        (
            "I",
            "SESSION_END",
            {
                "status": status,
                "total_duration_ms": max(0, now - int(state["started_at_ms"])),
                "phases_completed": list(state.get("phases_completed") or []),
                "summary": summary,
            },
        )
    )
    result.action = actions.stop_action(state)
    state["final_message"] = result.action["message"]  # what the user must read; the hooks check it


def _abort(state: RunState, now: int, result: Advance, code: str, message: str) -> None:
    result.events.append(("E", "ERROR", {"code": code, "message": message}))
    flow_of(state)["outcome"] = {"status": "failed", "error": {"code": code, "message": message}}
    state.setdefault("errors", []).append(
        {"ts": utc_timestamp_ms(now / 1000), "action": "next", "message": message}
    )
    _end(state, now, result, "failed", reason=code)
