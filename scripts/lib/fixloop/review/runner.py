"""Running the loop's steps on a run's saved state: one StateStore.update under the run's lock each.

Parallel hooks recording agent results never lose each other's writes. Log events are written after the
change is saved. These are the engine functions behind `fixloop review next|choose|status`.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path

from fixloop.core import timekeeping
from fixloop.review.effects import project_effects
from fixloop.review.machine import decide_next
from fixloop.review.questions import choose
from fixloop.review.state import RunState
from fixloop.review.step import Document, Transition
from fixloop.review.views import status_document
from fixloop.runs import lifecycle
from fixloop.store.statestore import StateStore

Step = Callable[[RunState], Transition]


def now_ms() -> int:
    return timekeeping.now_ms(timekeeping.default_clock)


def apply_step(store: StateStore, step: Step, action: str) -> tuple[RunState, Transition]:
    """Run `step` on the state under the store's lock and save it; returns (saved state, transition).

    The cyclic garbage collector is paused meanwhile: a state with tens of thousands of issues is all
    fresh containers, and collecting them repeatedly made the step grow faster than linearly.
    """
    done: list[Transition] = []

    def update(state: RunState) -> RunState:
        transition = step(state)
        done.append(transition)
        return transition.state

    collecting = gc.isenabled()
    gc.disable()
    try:
        saved = store.update(update, action=action)
    finally:
        if collecting:
            gc.enable()
    return saved, done[-1]


def run_step(root: Path, run_id: str, step: Step, action: str) -> Transition:
    """apply_step on the run's state, then write the transition's events to the run's log."""
    saved, transition = apply_step(lifecycle.store_for(root, run_id, timekeeping.default_clock), step, action)
    log = lifecycle.run_log(saved, timekeeping.default_clock)
    for level, kind, fields in transition.events:
        log.emit(level, kind, **fields)
    return transition


def next_action(root: Path, run_id: str) -> Document:
    """`fixloop review next`: advance the loop and return the next action (also on a finished loop)."""
    state = lifecycle.load_run(root, run_id)
    if state.get("ended_at_ms") is not None:
        review = state.get("review") or {}
        if not review.get("outcome"):
            lifecycle.require_running(state)
    effects = project_effects(root, state)
    now = now_ms()
    return run_step(
        root, run_id, lambda current: decide_next(current, effects, now, inplace=True), "review_next"
    ).document


def answer_question(root: Path, run_id: str, choice: str | None, use_default: bool) -> Document:
    """`fixloop review choose`: answer the pending question (rolling back when that is the choice)."""
    state = lifecycle.load_run(root, run_id)
    lifecycle.require_running(state)
    effects = project_effects(root, state)
    now = now_ms()
    return run_step(
        root,
        run_id,
        lambda current: choose(current, choice, use_default, effects, now, inplace=True),
        "review_choose",
    ).document


def review_status(root: Path, run_id: str) -> Document:
    """`fixloop review status`: where the loop stands (changes nothing)."""
    return status_document(lifecycle.load_run(root, run_id))
