"""What a phase sees when it is stepped: the run state, its own data, agent results, answers and work."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fixloop.contracts.runconfig import RunConfig
from fixloop.core.errors import FixloopError
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.review.access import config_of
from fixloop.review.step import Effects, Event
from fixloop.store import edits, layout

FLOW_VERSION = 1
RunState = dict[str, Any]


def new_flow() -> dict[str, Any]:
    return {
        "version": FLOW_VERSION,
        "phases": {},
        "dispatch": None,
        "dispatches": 0,
        "history": [],
        "records": {},
        "question": None,
        "answers": {},
        "interactions": [],
        "decisions": [],
        "warnings": [],
        "errors": [],
        "outcome": None,
    }


def flow_of(state: RunState) -> dict[str, Any]:
    """The run's workflow bookkeeping (`state["flow"]`), created on first use."""
    flow = state.get("flow")
    if not isinstance(flow, dict) or flow.get("version") != FLOW_VERSION:
        flow = new_flow()
        state["flow"] = flow
    return flow


class PhaseContext:
    """One phase of one run, while the engine steps it (always inside a locked state update)."""

    def __init__(self, state: RunState, number: int, now: int, effects: Effects | None) -> None:
        self.state = state
        self.number = number
        self.now = now
        self.effects = effects
        self.events: list[Event] = []
        self.flow = flow_of(state)
        slot = self.flow["phases"].setdefault(str(number), {"data": {}, "work": {}})
        self.data: dict[str, Any] = slot["data"]
        self._work: dict[str, Any] = slot["work"]

    # ---- the run ---------------------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return str(self.state.get("run_id") or "")

    @property
    def config(self) -> RunConfig:
        return config_of(self.state)

    @property
    def root(self) -> Path:
        return Path(str(self.state.get("project_dir") or "."))

    @property
    def dry_run(self) -> bool:
        return bool(self.state.get("dry_run"))

    @property
    def phase_key(self) -> str:
        return f"phase_{self.number}"

    # ---- what came back ---------------------------------------------------------------------------

    def work_result(self, kind: str) -> Any:
        return self._work.get(kind)

    def store_work(self, kind: str, result: Any) -> None:
        self._work[kind] = result

    def forget_work(self, kind: str) -> None:
        self._work.pop(kind, None)

    def result(self, agent: str) -> dict[str, Any] | None:
        """The record of `agent` in the latest dispatch of this phase (None when it gave no answer)."""
        record = self.flow["records"].get(agent)
        return record if isinstance(record, dict) else None

    def document(self, agent: str) -> dict[str, Any] | None:
        """The valid answer of `agent` in the latest dispatch of this phase, if it gave one."""
        record = self.result(agent)
        return record.get("document") if record is not None and record.get("valid") else None

    def answer(self, context: str) -> str | None:
        answer = self.flow["answers"].get(context)
        return str(answer["choice"]) if isinstance(answer, dict) else None

    # ---- the project's files ----------------------------------------------------------------------

    def begin_edits(
        self, label: str, files: Iterable[str], before: str, otherwise: str
    ) -> dict[str, Any] | None:
        """A snapshot of `files` and an open touch window `label` (store.edits.begin) before an agent edits;
        None, with a SNAPSHOT_FAILED warning ("... before `before`: why. `otherwise`"), when it fails."""
        run_dir = Path(layout.run_dir(self.root, self.run_id))
        try:
            return edits.begin(self.root, run_dir, label, sorted(set(files)), now_ms=self.now)
        except (FixloopError, OSError) as error:
            self.warn(
                "SNAPSHOT_FAILED",
                f"The project could not be snapshotted before {before}: {error}. {otherwise}",
            )
            return None

    # ---- what to tell --------------------------------------------------------------------------

    def emit(self, level: str, type_: str, **fields: Any) -> None:
        self.events.append((level, type_, {"phase": self.phase_key, **fields}))

    def warn(self, code: str, message: str, **fields: Any) -> None:
        self.flow["warnings"].append({"phase": self.phase_key, "code": code, "message": message, **fields})
        self.emit("W", "WARNING", code=code, message=message, **fields)

    def error(self, code: str, message: str, **fields: Any) -> None:
        """An error the phase raises: logged, kept in the run, and counted (three end the run)."""
        entry = {"phase": self.phase_key, "code": code, "message": message, **fields}
        self.flow["errors"].append(entry)
        errors = self.state.setdefault("errors", [])
        errors.append({"ts": utc_timestamp_ms(self.now / 1000), "action": self.phase_key, "message": message})
        self.state["error_count"] = int(self.state.get("error_count") or 0) + 1
        self.emit("E", "ERROR", code=code, message=message, **fields)
