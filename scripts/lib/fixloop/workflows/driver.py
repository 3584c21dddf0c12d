"""`fixloop next`, `record`, `answer` and `task` on a run on disk: locked state updates, logs, work.

`next_action` alternates locked steps (workflows.flow.advance) with engine work outside the lock (tests,
verification) until the run needs a model or ends. An error inside a step is recorded in the run; the third
ends it failed.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fixloop.core import timekeeping
from fixloop.core.errors import FixloopError
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.review.effects import project_effects
from fixloop.review.step import Event
from fixloop.runs import lifecycle, usage
from fixloop.runs.lifecycle import Clock
from fixloop.store import layout, ledger
from fixloop.store.atomic import write_atomic
from fixloop.workflows import flow, pending
from fixloop.workflows.context import RunState
from fixloop.workflows.flow import Advance

MAX_ROUNDS = 50
TASKS_DIR = "tasks"
# Errors about the run itself, not about a step of it: the caller gets them.
FATAL = (
    "RUN_NOT_FOUND",
    "INVALID_RUN_ID",
    "STATE_CORRUPT",
    "STATE_UNREADABLE",
    "LOCK_TIMEOUT",
    "RUN_ALREADY_ENDED",
)


def locked_update(
    root: Path, run_id: str, clock: Clock, step: Callable[[RunState], Any], action: str
) -> RunState:
    collecting = gc.isenabled()
    gc.disable()  # a large state is all fresh containers; collecting them repeatedly is slow
    try:
        return lifecycle.store_for(root, run_id, clock).update(step, action=action)
    finally:
        if collecting:
            gc.enable()


def emit_events(state: RunState, events: list[Event], clock: Clock, at_ms: int | None = None) -> None:
    """Write a step's events; `at_ms`: the time the step decided them, which they are stamped with (so a
    phase's PHASE_START and PHASE_END are as far apart as its duration, however long the writing waited)."""
    if at_ms is not None:
        decided = at_ms / 1000

        def clock() -> float:
            return decided

    log = lifecycle.run_log(state, clock)
    for level, kind, fields in events:
        log.emit(level, kind, **fields)


def calls_made(root: Path, state: RunState) -> pending.CallsMade:
    """The agents of a dispatch called since it was issued (ledger `call` lines), read once per step.

    Outside Claude Code there is no ledger: agents' answers are recorded by hand, so every call counts as
    made (None)."""
    if not state.get("claude_session_id"):
        return lambda dispatch: None
    run_dir = layout.run_dir(root, str(state["run_id"]))
    read: list[list[dict[str, Any]]] = []

    def made(dispatch: dict[str, Any]) -> set[str]:
        if not read:
            read.append(ledger.read(run_dir))
        agents = {call["agent"] for call in dispatch["calls"]}
        step, since = int(dispatch["id"]), int(dispatch["at_ms"])
        return {
            str(record["agent"])
            for record in read[0]
            if record.get("kind") == "call"
            and record.get("agent") in agents
            and ledger.in_step(record, step, since)
        }

    return made


def task_path(root: Path, run_id: str, agent: str) -> Path:
    return Path(layout.run_dir(root, run_id)) / TASKS_DIR / f"{agent}.md"


def next_action(root: Path, run_id: str, clock: Clock | None = None, stopped: bool = False) -> dict[str, Any]:
    """Advance the run until the model has something to do (or the run ends); that action. `stopped`: the
    model that carries the run stopped (a hook says so); workflows.flow.advance decides what follows."""
    clock = clock or timekeeping.default_clock
    for _ in range(MAX_ROUNDS):
        try:
            action = _advance_once(root, run_id, clock, stopped)
        except FixloopError as error:
            if error.code in FATAL:
                raise
            _note_error(root, run_id, clock, error.code, error.message)
            continue
        except Exception as error:  # a fault of a phase: counted like any error, three end the run
            _note_error(root, run_id, clock, "INTERNAL_ERROR", f"{type(error).__name__}: {error}")
            continue
        if action is not None:
            return action
    raise FixloopError(
        "STEP_LIMIT", f"Run {run_id} did not come to an action after {MAX_ROUNDS} engine steps."
    )


def _advance_once(root: Path, run_id: str, clock: Clock, stopped: bool) -> dict[str, Any] | None:
    """One locked step and, when it asks for work, the work and its hand-back; the action, if one came."""
    from fixloop.workflows.work import perform

    state = lifecycle.load_run(root, run_id)
    effects = project_effects(root, state)
    made = calls_made(root, state)
    spent = usage.run_usage(root, state)
    now = timekeeping.now_ms(clock)
    done: list[Advance] = []

    def step(current: RunState) -> None:
        current["usage"] = spent
        done.append(flow.advance(current, now, effects, made, stopped))

    saved = locked_update(root, run_id, clock, step, "next")
    advance = done[-1]
    emit_events(saved, advance.events, clock, now)
    for agent, text in advance.tasks.items():
        write_atomic(task_path(root, run_id, agent), text.encode("utf-8"))
    if advance.work is None:
        return advance.action
    number, work = advance.work
    output = perform(root, saved, work, clock, effects)
    events: list[Event] = []
    handed_back = timekeeping.now_ms(clock)

    def hand_back(current: RunState) -> None:
        events.extend(flow.apply_work(current, number, work, output, handed_back, effects))

    emit_events(locked_update(root, run_id, clock, hand_back, "work"), events, clock, handed_back)
    return None


def _note_error(root: Path, run_id: str, clock: Clock, code: str, message: str) -> None:
    now = timekeeping.now_ms(clock)

    def note(state: RunState) -> None:
        lifecycle.require_running(state)
        state.setdefault("errors", []).append(
            {"ts": utc_timestamp_ms(now / 1000), "action": "next", "message": message}
        )
        state["error_count"] = int(state.get("error_count") or 0) + 1

    saved = locked_update(root, run_id, clock, note, "record_error")
    emit_events(saved, [("E", "ERROR", {"code": code, "message": message})], clock)


def answer(
    root: Path, run_id: str, choice: str | None, default: bool, clock: Clock | None = None
) -> dict[str, Any]:
    """`fixloop answer`: the user's choice for the question the run waits on."""
    clock = clock or timekeeping.default_clock
    state = lifecycle.load_run(root, run_id)
    lifecycle.require_running(state)
    effects = project_effects(root, state)
    now = timekeeping.now_ms(clock)
    events: list[Event] = []
    answered: list[dict[str, Any]] = []

    def take(current: RunState) -> None:
        answered.append(flow.answer_question(current, choice, default, now, effects, events))

    emit_events(locked_update(root, run_id, clock, take, "answer"), events, clock)
    return {"status": "answered", "run_id": run_id, **answered[-1]}


def task(root: Path, run_id: str, agent: str) -> str:
    """The task of `agent` in the run's current dispatch."""
    lifecycle.load_run(root, run_id)
    path = task_path(root, run_id, agent)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FixloopError(
            "NO_TASK", f"Run {run_id} has no task for {agent}.", run_id=run_id, agent=agent
        ) from None
