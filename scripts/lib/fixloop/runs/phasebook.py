"""A run's phases, kept by the engine: they open in order, one at a time, and every selected phase ends.

The rules live in pure functions over the state (`open_phase`, `close_phase`, `next_phase`,
`final_status`), used by the workflow engine inside its locked state updates; `phase_start` and
`phase_end` apply them to a run on disk and log PHASE_START / PHASE_END with measured durations.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.core import timekeeping
from fixloop.core.errors import FixloopError
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.runs.lifecycle import (
    Clock,
    check_choice,
    check_summary,
    load_run,
    require_running,
    run_log,
    store_for,
)
from fixloop.runs.phases import WORKFLOW_PHASES, parse_phases

PHASE_STATUSES: tuple[str, ...] = ("success", "partial", "failed", "skipped", "user_cancelled")
# A phase ended with one of these counts as completed (listed in phases_completed).
COMPLETED_PHASE_STATUSES: tuple[str, ...] = ("success", "partial")
# The run's final status, best first: a run never ends better than its phases allow.
STATUS_RANK: dict[str, int] = {
    "success": 5,
    "dry_run_complete": 4,
    "partial": 3,
    "user_cancelled": 2,
    "failed": 1,
}

State = dict[str, Any]


def phase_key(number: int) -> str:
    return f"phase_{number}"


def parse_phase_number(workflow: str, value: int | str) -> int:
    """One phase number of `workflow`, given as an int or as text; INVALID_PHASE otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FixloopError("INVALID_PHASE", f"Phase must be a number, not {value!r}.", received=repr(value))
    text = str(value).strip()
    selected = parse_phases(workflow, text)  # INVALID_PHASE with valid_values for anything unknown
    if text == "all" or "," in text or len(selected) != 1:
        count = len(WORKFLOW_PHASES[workflow])
        raise FixloopError(
            "INVALID_PHASE",
            f"Expected exactly one phase number for {workflow}, not {text!r}.",
            valid_values=[str(number) for number in range(count)],
            received=str(value),
            suggestion="Use 0." if count == 1 else f"Use one number from 0 to {count - 1}.",
        )
    return selected[0]


# ---- the rules, on the state ----------------------------------------------------------------------


def closed_phases(state: Mapping[str, Any]) -> dict[int, str]:
    """Phase number -> the status it ended with (its latest end)."""
    closed: dict[int, str] = {}
    for result in state.get("phase_results") or []:
        key = str(result.get("phase", ""))
        if key.startswith("phase_") and key[6:].isdigit():
            closed[int(key[6:])] = str(result.get("status"))
    return closed


def open_phase_number(state: Mapping[str, Any]) -> int | None:
    opened = state.get("open_phases") or {}
    return min((int(key) for key in opened), default=None)


def next_phase(state: Mapping[str, Any]) -> int | None:
    """The open phase, else the first selected phase that has not ended; None when all have ended."""
    opened = open_phase_number(state)
    if opened is not None:
        return opened
    closed = closed_phases(state)
    return next((number for number in state.get("phases") or [] if number not in closed), None)


def _check_selected(state: Mapping[str, Any], number: int) -> None:
    selected = list(state.get("phases") or [])
    if number not in selected:
        raise FixloopError(
            "PHASE_NOT_SELECTED",
            f"Phase {number} is not selected for run {state.get('run_id')}.",
            phase=number,
            selected=selected,
            suggestion="Start the run with --phase including this phase.",
        )


def open_phase(state: State, number: int, now: int) -> dict[str, Any]:
    """Open phase `number` in `state`: the PHASE_START fields. Phases open in order, one at a time."""
    require_running(state)
    run_id = state.get("run_id")
    _check_selected(state, number)
    opened = state.setdefault("open_phases", {})
    if str(number) in opened:
        raise FixloopError(
            "PHASE_ALREADY_STARTED",
            f"Phase {number} of run {run_id} is already started.",
            phase=number,
            started_at_ms=opened[str(number)],
        )
    closed = closed_phases(state)
    if number in closed:
        raise FixloopError(
            "PHASE_ALREADY_ENDED",
            f"Phase {number} of run {run_id} has already ended ({closed[number]}).",
            phase=number,
            status=closed[number],
        )
    expected = next_phase(state)
    if expected != number:
        raise FixloopError(
            "PHASE_OUT_OF_ORDER",
            f"Phase {number} of run {run_id} cannot start before phase {expected} has ended.",
            phase=number,
            expected=expected,
            suggestion="Phases run in order, one at a time.",
        )
    opened[str(number)] = now
    state["updated_at"] = utc_timestamp_ms(now / 1000)
    return {"phase": phase_key(number), "phase_name": WORKFLOW_PHASES[state["workflow"]][number]}


def close_phase(state: State, number: int, status: str, now: int) -> dict[str, Any]:
    """End the open phase `number` with `status`: its result (duration measured from its start)."""
    require_running(state)
    check_choice("INVALID_STATUS", "phase status", status, PHASE_STATUSES)
    _check_selected(state, number)
    opened = state.setdefault("open_phases", {})
    if str(number) not in opened:
        raise FixloopError(
            "PHASE_NOT_STARTED",
            f"Phase {number} of run {state.get('run_id')} was not started.",
            phase=number,
            open_phases=sorted(int(key) for key in opened),
        )
    started = int(opened.pop(str(number)))
    result = {
        "phase": phase_key(number),
        "status": status,
        "duration_ms": max(0, now - started),
        "started_at_ms": started,
        "ended_at_ms": now,
    }
    state.setdefault("phase_results", []).append(dict(result))
    completed = state.setdefault("phases_completed", [])
    if status in COMPLETED_PHASE_STATUSES and phase_key(number) not in completed:
        completed.append(phase_key(number))
    state["updated_at"] = utc_timestamp_ms(now / 1000)
    return result


def final_status(state: Mapping[str, Any]) -> str:
    """The best status the run's phases allow: failed if any failed, user_cancelled if any was, then
    dry_run_complete for a dry run, partial if any ended partial or a selected phase never ran."""
    closed = closed_phases(state)
    statuses = set(closed.values())
    if "failed" in statuses or state.get("open_phases"):
        return "failed"
    if "user_cancelled" in statuses:
        return "user_cancelled"
    if state.get("dry_run"):
        return "dry_run_complete"
    unfinished = [number for number in state.get("phases") or [] if number not in closed]
    if "partial" in statuses or unfinished:
        return "partial"
    return "success"


def check_final_status(state: Mapping[str, Any], status: str) -> None:
    """Refuse a final status better than the phases allow (a failed phase never ends in success)."""
    allowed = final_status(state)
    if STATUS_RANK.get(status, 0) > STATUS_RANK[allowed]:
        raise FixloopError(
            "STATUS_INCONSISTENT",
            f"Run {state.get('run_id')} cannot end {status!r}: its phases allow at best {allowed!r}.",
            received=status,
            allowed=allowed,
            phase_results=[
                (item.get("phase"), item.get("status")) for item in state.get("phase_results") or []
            ],
        )


# ---- on a run on disk ------------------------------------------------------------------------------


def phase_start(root: Path, run_id: str, phase: int | str, clock: Clock | None = None) -> dict[str, Any]:
    """Open a phase and write PHASE_START. Returns {"run_id", "phase", "phase_name", "started_at_ms"}."""
    clock = clock or timekeeping.default_clock
    number = parse_phase_number(str(load_run(root, run_id)["workflow"]), phase)
    now = timekeeping.now_ms(clock)
    fields: dict[str, Any] = {}
    state = store_for(root, run_id, clock).update(
        lambda current: fields.update(open_phase(current, number, now)), action="phase_start"
    )
    run_log(state, clock).emit("I", "PHASE_START", **fields)
    return {"run_id": run_id, **fields, "started_at_ms": now}


def phase_end(
    root: Path,
    run_id: str,
    phase: int | str,
    status: str,
    summary: object = None,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """Close a phase, write PHASE_END with the duration since its start. Returns the phase result."""
    clock = clock or timekeeping.default_clock
    number = parse_phase_number(str(load_run(root, run_id)["workflow"]), phase)
    check_choice("INVALID_STATUS", "phase status", status, PHASE_STATUSES)
    details = check_summary(summary)
    now = timekeeping.now_ms(clock)
    result: dict[str, Any] = {}
    state = store_for(root, run_id, clock).update(
        lambda current: result.update(close_phase(current, number, status, now)), action="phase_end"
    )
    run_log(state, clock).emit(
        "I",
        "PHASE_END",
        phase=result["phase"],
        status=status,
        duration_ms=result["duration_ms"],
        summary=details,
    )
    return {"run_id": run_id, **result, "summary": details, "phases_completed": state["phases_completed"]}
