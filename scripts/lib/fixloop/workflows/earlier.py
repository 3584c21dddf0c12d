"""What a phase takes from earlier phases: this run's data, or, for a run started at a later phase
(`--phase=3,4`), the data of the latest earlier run of the same workflow and subject (bugfix: the same stack;
fix-ci: the same CI run or log) in this project that completed that phase. The run it resumed from is logged
(DATA_COLLECTED, data_type resumed_phase) and kept in `state["flow"]["resumed"]`, so each earlier phase is
looked up once per run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.runs import lifecycle
from fixloop.runs.phasebook import phase_key
from fixloop.store import layout
from fixloop.workflows.context import PhaseContext, RunState
from fixloop.workflows.outcomes import PhaseFailed

RESUMED = "resumed"  # state["flow"] key: phase number -> {"run_id", "data"}
SameSubject = Callable[[RunState, RunState], bool]  # (this run, an earlier run) -> about the same thing?
# How PREREQUISITE_MISSING names the subject: (" of stack backend", {"stack": "backend"})
SubjectText = Callable[[RunState], tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class EarlierPhases:
    """The data of a workflow's phases, from this run or from the latest earlier run of the same subject."""

    workflow: str
    what: Mapping[int, str]  # phase number -> what it leaves, as PREREQUISITE_MISSING names it
    same: SameSubject
    subject: SubjectText

    def data(self, ctx: PhaseContext, number: int) -> dict[str, Any] | None:
        """The data phase `number` left in this run, else in the latest earlier run that completed it."""
        if phase_key(number) in (ctx.state.get("phases_completed") or []):
            slot = ctx.flow["phases"].get(str(number)) or {}
            data = slot.get("data")
            return data if isinstance(data, dict) else None
        resumed = ctx.flow.setdefault(RESUMED, {})
        if str(number) in resumed:
            found = resumed[str(number)]
            return found["data"] if isinstance(found, dict) else None
        earlier = self.earlier_run(ctx, number)
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

    def needs(self, ctx: PhaseContext, *numbers: int) -> dict[int, dict[str, Any]] | PhaseFailed:
        """The data of each phase in `numbers`, or PREREQUISITE_MISSING naming the first one missing."""
        found: dict[int, dict[str, Any]] = {}
        for number in numbers:
            data = self.data(ctx, number)
            if data is None:
                return self.missing(ctx, number)
            found[number] = data
        return found

    def missing(self, ctx: PhaseContext, number: int) -> PhaseFailed:
        first = ",".join(str(item) for item in range(number + 1))
        text, details = self.subject(ctx.state)
        return PhaseFailed(
            "PREREQUISITE_MISSING",
            f"Phase {ctx.number} needs {self.what.get(number, f'phase {number}')}: this run did not complete "
            f"it and no earlier {self.workflow} run{text} in this project did. "
            f"Run phase {number} first (--phase={first}).",
            details={
                "needs": phase_key(number),
                "run_first": f"--phase={first}",
                **details,
                "recoverable": False,
            },
        )

    def earlier_run(self, ctx: PhaseContext, number: int) -> tuple[str, dict[str, Any]] | None:
        """(run id, data of phase `number`) of the latest earlier run of the subject that completed it."""
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
            data = self._completed_data(state, number)
            started = int(state.get("started_at_ms") or 0)
            if data is None or not self.same(ctx.state, state) or started > own_start:
                continue
            if best is None or (started, run_id) > (best[0], best[1]):
                best = (started, run_id, data)
        return None if best is None else (best[1], best[2])

    def _completed_data(self, state: RunState, number: int) -> dict[str, Any] | None:
        completed = state.get("phases_completed") or []
        if state.get("workflow") != self.workflow or phase_key(number) not in completed:
            return None
        flow = state.get("flow")
        phases = flow.get("phases") if isinstance(flow, dict) else None
        slot = phases.get(str(number)) if isinstance(phases, dict) else None
        data = slot.get("data") if isinstance(slot, dict) else None
        return data if isinstance(data, dict) and data else None
