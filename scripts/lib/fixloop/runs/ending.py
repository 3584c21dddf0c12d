"""The end of a run: its final status, consistent with its phases, and SESSION_END.

A run that fails or is cancelled closes its open phase with the same status; a run that ends otherwise has
no open phase, and its status is never better than its phases allow (a failed phase never ends in success).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fixloop.core import timekeeping
from fixloop.core.errors import FixloopError
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.runs.lifecycle import (
    END_STATUSES,
    Clock,
    check_choice,
    check_summary,
    load_run,
    require_running,
    run_log,
    store_for,
)
from fixloop.runs.phasebook import check_final_status, close_phase, open_phase_number

ABORT_STATUSES = ("failed", "user_cancelled")


def end(state: dict[str, Any], status: str, summary: dict[str, Any], now: int) -> dict[str, Any] | None:
    """End the run in `state` with `status`; returns the result of the phase it closed, if any."""
    require_running(state)
    check_choice("INVALID_STATUS", "run status", status, END_STATUSES)
    if status == "dry_run_complete" and not state.get("dry_run"):
        raise FixloopError(
            "INVALID_STATUS",
            "Status dry_run_complete is only for a run started with --dry-run.",
            valid_values=[item for item in END_STATUSES if item != "dry_run_complete"],
            received=status,
        )
    closed: dict[str, Any] | None = None
    opened = open_phase_number(state)
    if opened is not None:
        if status not in ABORT_STATUSES:
            raise FixloopError(
                "PHASE_STILL_OPEN",
                f"Run {state.get('run_id')} cannot end {status!r} while phase {opened} is open.",
                phase=opened,
                suggestion="End the phase first, or end the run failed or user_cancelled.",
            )
        closed = close_phase(state, opened, status, now)
    check_final_status(state, status)
    state["status"] = status
    state["ended_at_ms"] = now
    state["updated_at"] = utc_timestamp_ms(now / 1000)
    state["summary"] = summary
    return closed


def end_run(
    root: Path, run_id: str, status: str, summary: object = None, clock: Clock | None = None
) -> dict[str, Any]:
    """Set the final status and write SESSION_END (and PHASE_END of a phase the end closes)."""
    clock = clock or timekeeping.default_clock
    check_choice("INVALID_STATUS", "run status", status, END_STATUSES)
    details = check_summary(summary)
    load_run(root, run_id)
    now = timekeeping.now_ms(clock)
    closed: list[dict[str, Any]] = []

    def finish(state: dict[str, Any]) -> None:
        result = end(state, status, details, now)
        if result is not None:
            closed.append(result)

    state = store_for(root, run_id, clock).update(finish, action="end_run")
    log = run_log(state, clock)
    for result in closed:
        log.emit("I", "PHASE_END", phase=result["phase"], status=status, duration_ms=result["duration_ms"])
    total = max(0, now - int(state["started_at_ms"]))
    log.emit(
        "I",
        "SESSION_END",
        status=status,
        total_duration_ms=total,
        phases_completed=state["phases_completed"],
        summary=details,
    )
    return {
        "run_id": run_id,
        "status": status,
        "total_duration_ms": total,
        "phases_completed": state["phases_completed"],
        "open_phases": sorted(int(key) for key in state.get("open_phases", {})),
        "summary": details,
    }
