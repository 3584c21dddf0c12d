"""A run's phases: opening and closing them, with PHASE_START / PHASE_END and measured durations."""

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


def phase_key(number: int) -> str:
    return f"phase_{number}"


# ---- phases --------------------------------------------------------------------------------------


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


def _check_selected(state: Mapping[str, Any], number: int) -> None:
    if number not in state.get("phases", []):
        raise FixloopError(
            "PHASE_NOT_SELECTED",
            f"Phase {number} is not selected for run {state['run_id']}.",
            phase=number,
            selected=list(state.get("phases", [])),
            suggestion="Start the run with --phase including this phase, or skip it.",
        )


def phase_start(root: Path, run_id: str, phase: int | str, clock: Clock | None = None) -> dict[str, Any]:
    """Open a phase and write PHASE_START. Returns {"run_id", "phase", "phase_name", "started_at_ms"}."""
    clock = clock or timekeeping.default_clock
    loaded = load_run(root, run_id)
    number = parse_phase_number(str(loaded["workflow"]), phase)
    store = store_for(root, run_id, clock)
    now = timekeeping.now_ms(clock)

    def begin(state: dict[str, Any]) -> None:
        require_running(state)
        _check_selected(state, number)
        open_phases = state.setdefault("open_phases", {})
        if str(number) in open_phases:
            raise FixloopError(
                "PHASE_ALREADY_STARTED",
                f"Phase {number} of run {run_id} is already started.",
                phase=number,
                started_at_ms=open_phases[str(number)],
            )
        open_phases[str(number)] = now
        state["updated_at"] = utc_timestamp_ms(now / 1000)

    state = store.update(begin, action="phase_start")
    name = WORKFLOW_PHASES[state["workflow"]][number]
    run_log(state, clock).emit("I", "PHASE_START", phase=phase_key(number), phase_name=name)
    return {"run_id": run_id, "phase": phase_key(number), "phase_name": name, "started_at_ms": now}


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
    loaded = load_run(root, run_id)
    number = parse_phase_number(str(loaded["workflow"]), phase)
    check_choice("INVALID_STATUS", "phase status", status, PHASE_STATUSES)
    details = check_summary(summary)
    store = store_for(root, run_id, clock)
    now = timekeeping.now_ms(clock)
    result: dict[str, Any] = {}

    def finish(state: dict[str, Any]) -> None:
        require_running(state)
        _check_selected(state, number)
        open_phases = state.setdefault("open_phases", {})
        if str(number) not in open_phases:
            raise FixloopError(
                "PHASE_NOT_STARTED",
                f"Phase {number} of run {run_id} was not started.",
                phase=number,
                open_phases=sorted(int(key) for key in open_phases),
                suggestion=f"Run `fixloop run phase {run_id} --start {number}` first.",
            )
        started = open_phases.pop(str(number))
        result.clear()
        result.update(
            phase=phase_key(number),
            status=status,
            duration_ms=max(0, now - int(started)),
            started_at_ms=int(started),
            ended_at_ms=now,
        )
        state.setdefault("phase_results", []).append(dict(result))
        completed = state.setdefault("phases_completed", [])
        if status in COMPLETED_PHASE_STATUSES and phase_key(number) not in completed:
            completed.append(phase_key(number))
        state["updated_at"] = utc_timestamp_ms(now / 1000)

    state = store.update(finish, action="phase_end")
    run_log(state, clock).emit(
        "I",
        "PHASE_END",
        phase=result["phase"],
        status=status,
        duration_ms=result["duration_ms"],
        summary=details,
    )
    return {"run_id": run_id, **result, "summary": details, "phases_completed": state["phases_completed"]}
