"""What a bugfix phase takes from earlier phases: this run's data, or, for a run started at a later phase
(`--phase=3,4`), the data of the latest earlier bugfix run of the same stack in this project that completed
that phase. The run it resumed from is logged (DATA_COLLECTED, data_type resumed_phase) and kept in
`state["flow"]["resumed"]`, so each earlier phase is looked up once per run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.runs import lifecycle
from fixloop.runs.phasebook import phase_key
from fixloop.store import layout
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import PhaseFailed

WORKFLOW = "bugfix"
RESUMED = "resumed"  # state["flow"] key: phase number -> {"run_id", "data"}
WHAT: dict[int, str] = {
    0: "the failures collected in phase 0",
    1: "the diagnosis of phase 1",
    2: "the fix design of phase 2",
    3: "the fix plan document of phase 3",
    4: "the changes of phase 4",
}


def phase_data(ctx: PhaseContext, number: int) -> dict[str, Any] | None:
    """The data phase `number` left in this run, else in the latest earlier run that completed it."""
    if phase_key(number) in (ctx.state.get("phases_completed") or []):
        slot = ctx.flow["phases"].get(str(number)) or {}
        data = slot.get("data")
        return data if isinstance(data, dict) else None
    resumed = ctx.flow.setdefault(RESUMED, {})
    if str(number) in resumed:
        found = resumed[str(number)]
        return found["data"] if isinstance(found, dict) else None
    earlier = earlier_run(ctx, number)
    resumed[str(number)] = None if earlier is None else {"run_id": earlier[0], "data": earlier[1]}
    if earlier is not None:
        ctx.emit(
            "I",
            "DATA_COLLECTED",
            data_type="resumed_phase",
            summary={"phase": phase_key(number), "run_id": earlier[0], "source": "earlier_run"},
        )
        return earlier[1]
    return None


def needs(ctx: PhaseContext, *numbers: int) -> dict[int, dict[str, Any]] | PhaseFailed:
    """The data of each phase in `numbers`, or PREREQUISITE_MISSING naming the first one missing."""
    found: dict[int, dict[str, Any]] = {}
    for number in numbers:
        data = phase_data(ctx, number)
        if data is None:
            return missing(ctx, number)
        found[number] = data
    return found


def missing(ctx: PhaseContext, number: int) -> PhaseFailed:
    stack = ctx.state.get("stack")
    first = ",".join(str(item) for item in range(number + 1))
    return PhaseFailed(
        "PREREQUISITE_MISSING",
        f"Phase {ctx.number} needs {WHAT.get(number, f'phase {number}')}: this run did not complete it and "
        f"no earlier bugfix run{f' of stack {stack}' if stack else ''} in this project did. "
        f"Run phase {number} first (--phase={first}).",
        details={
            "needs": phase_key(number),
            "run_first": f"--phase={first}",
            "stack": stack,
            "recoverable": False,
        },
    )


def earlier_run(ctx: PhaseContext, number: int) -> tuple[str, dict[str, Any]] | None:
    """(run id, data of phase `number`) of the latest earlier bugfix run of this stack that completed it."""
    runs = Path(layout.runs_dir(ctx.root))
    own_start = int(ctx.state.get("started_at_ms") or 0)
    best: tuple[int, str, dict[str, Any]] | None = None
    for path in sorted(runs.glob("*/state.json")) if runs.is_dir() else []:
        run_id = path.parent.name
        if run_id == ctx.run_id:
            continue
        try:
            state = lifecycle.load_run(ctx.root, run_id)
        except (FixloopError, OSError, ValueError):
            continue  # not a readable run: not a source
        data = _completed_data(state, number)
        started = int(state.get("started_at_ms") or 0)
        if data is None or state.get("stack") != ctx.state.get("stack") or started > own_start:
            continue
        if best is None or (started, run_id) > (best[0], best[1]):
            best = (started, run_id, data)
    return None if best is None else (best[1], best[2])


def _completed_data(state: dict[str, Any], number: int) -> dict[str, Any] | None:
    if state.get("workflow") != WORKFLOW or phase_key(number) not in (state.get("phases_completed") or []):
        return None
    flow = state.get("flow")
    phases = flow.get("phases") if isinstance(flow, dict) else None
    slot = phases.get(str(number)) if isinstance(phases, dict) else None
    data = slot.get("data") if isinstance(slot, dict) else None
    return data if isinstance(data, dict) and data else None
