"""Worker functions for the multi-process tests: spawned children import them from this module by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fixloop.store.logwriter import EventLog
from fixloop.store.statestore import StateStore, minimal_run_state_errors


def append_many(directory: str, writer: int, count: int) -> None:
    root = Path(directory)
    log = EventLog(root / "c.jsonl", root / "c.log", "a1b2c3d4")
    for number in range(count):
        size = 9000 if number % 7 == 0 else 40  # some lines far beyond PIPE_BUF
        message = f"w{writer}-{number} " + 'é"\n' * (size // 3)
        if log.emit("W", "WARNING", code=f"W{writer}", writer=writer, number=number, message=message) is None:
            raise SystemExit(f"emit failed: {log.last_error}")


def _increment(state: dict[str, Any]) -> None:
    state["review"]["counter"] = state["review"].get("counter", 0) + 1


def increment_many(path: str, count: int) -> None:
    store = StateStore(Path(path), validate=minimal_run_state_errors, lock_timeout=120)
    for _ in range(count):
        store.update(_increment, action="increment")


def write_forever(directory: str) -> None:
    """Update a run state, append log events and ledger lines, in a loop, until killed."""
    from fixloop.store import ledger

    root = Path(directory)
    store = StateStore(root / "state.json", validate=minimal_run_state_errors, lock_timeout=120)
    log = EventLog(root / "run.jsonl", root / "run.log", "a1b2c3d4")
    number = 0
    while True:
        number += 1
        payload = "x" * (number % 5000)  # states of changing size: some writes are long
        tick = {"counter": number, "payload": payload}
        store.update(lambda state, tick=tick: state["review"].update(tick), action="tick")
        log.emit("I", "DATA_COLLECTED", data_type="tick", summary={"n": number, "pad": payload[:3000]})
        ledger.append(str(root), {"kind": "stop", "ts_ms": number, "agent": "code-reviewer", "pad": payload})
