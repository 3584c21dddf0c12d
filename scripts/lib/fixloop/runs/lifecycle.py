"""A workflow run once started: loading its state and log, checks, its files, and its end.

Every duration is computed from epoch milliseconds the engine stored itself (`clock`, default
timekeeping.default_clock); callers never supply one. Bad input is refused before anything is written, and
each change is one StateStore.update, so a refused call leaves the state and the logs as they were.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from fixloop.core import datadir, timekeeping
from fixloop.core.errors import FixloopError
from fixloop.core.ids import check_run_id
from fixloop.store import layout
from fixloop.store.logwriter import LOG_LEVELS, EventLog
from fixloop.store.statestore import StateStore, minimal_run_state_errors

Clock = Callable[[], float]

RUN_STATUSES: tuple[str, ...] = (
    "running",
    "success",
    "partial",
    "failed",
    "user_cancelled",
    "dry_run_complete",
)
END_STATUSES: tuple[str, ...] = tuple(status for status in RUN_STATUSES if status != "running")
STACKS: tuple[str, ...] = ("frontend", "backend", "e2e", "mixed")
SESSION_ENV = "CLAUDE_CODE_SESSION_ID"


# ---- loading -------------------------------------------------------------------------------------


def store_for(root: Path, run_id: str, clock: Clock | None = None) -> StateStore:
    layout.require_own_dir_inside(root, layout.run_dir(root, run_id))
    return StateStore(
        Path(layout.state_path(root, run_id)),
        minimal_run_state_errors,
        clock=clock or timekeeping.default_clock,
    )


def load_run(root: Path, run_id: str) -> dict[str, Any]:
    """The state of run `run_id` (INVALID_RUN_ID for a malformed id, RUN_NOT_FOUND when there is none)."""
    check_run_id(run_id)
    store = store_for(root, run_id)
    if not store.exists():
        raise FixloopError(
            "RUN_NOT_FOUND", f"No run {run_id} in {Path(layout.runs_dir(root))}.", run_id=run_id
        )
    state = store.read()
    if state.get("run_id") != run_id:
        raise FixloopError(
            "STATE_INVALID", f"State of run {run_id} names run {state.get('run_id')!r}.", run_id=run_id
        )
    return state


def current_run_id(root: Path, claude_session_id: str | None = None) -> str:
    """The run bound to the Claude Code session (default: $CLAUDE_CODE_SESSION_ID)."""
    session = claude_session_id if claude_session_id is not None else os.environ.get(SESSION_ENV)
    if not session:
        raise FixloopError(
            "NO_SESSION",
            f"${SESSION_ENV} is not set: there is no current Claude Code session.",
            env=SESSION_ENV,
        )
    run_id = layout.run_for_session(root, session)
    if run_id is None:
        raise FixloopError(
            "NO_CURRENT_RUN",
            f"No run is bound to Claude Code session {session!r}.",
            claude_session_id=session,
        )
    return run_id


def run_log(state: Mapping[str, Any], clock: Clock | None = None) -> EventLog:
    """The run's EventLog; one that writes nothing when logging is disabled."""
    logging = state.get("logging")
    logging = logging if isinstance(logging, Mapping) else {}
    session_id = str(logging.get("session_id") or state.get("run_id") or "")
    level = logging.get("level")
    level = level if level in LOG_LEVELS else "info"
    files = logging.get("log_files")
    jsonl = text = None
    if logging.get("enabled") is True and isinstance(files, Mapping):
        jsonl = Path(files["jsonl"]) if isinstance(files.get("jsonl"), str) and files["jsonl"] else None
        text = Path(files["text"]) if isinstance(files.get("text"), str) and files["text"] else None
    return EventLog(
        jsonl,
        text,
        session_id,
        str(level),
        clock=clock or timekeeping.default_clock,
        on_failure=_LostEvents(str(state.get("run_id") or "")),
    )


class _LostEvents:
    """What a run log could not write is not dropped in silence: the first failure is said on stderr, and
    each event's type goes to <data dir>/unwritten-events.jsonl (when that can be written)."""

    FILE = "unwritten-events.jsonl"
    _told: ClassVar[set[str]] = set()

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id

    def __call__(self, event: dict[str, Any], reason: str) -> None:
        if self.run_id not in self._told:
            self._told.add(self.run_id)
            sys.stderr.write(f"fixloop: cannot write the log of run {self.run_id}: {reason}\n")
        fallback = EventLog(Path(datadir.data_dir()) / self.FILE, None, self.run_id)
        fallback.emit(
            "W", "WARNING", code="LOG_WRITE_FAILED", message=reason, run_id=self.run_id, event=event
        )


# ---- input checks --------------------------------------------------------------------------------


def check_stack(stack: str | None) -> str | None:
    if stack is not None and stack not in STACKS:
        raise FixloopError(
            "INVALID_STACK", f"Unknown stack {stack!r}.", valid_values=list(STACKS), received=stack
        )
    return stack


def check_choice(code: str, what: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise FixloopError(code, f"Invalid {what} {value!r}.", valid_values=list(allowed), received=value)
    return value


def check_summary(summary: object) -> dict[str, Any]:
    if summary is None:
        return {}
    if not isinstance(summary, dict):
        raise FixloopError(
            "INVALID_SUMMARY", "The summary must be a JSON object.", received_type=type(summary).__name__
        )
    return summary


def require_running(state: Mapping[str, Any]) -> None:
    if state.get("ended_at_ms") is not None:
        raise FixloopError(
            "RUN_ALREADY_ENDED",
            f"Run {state.get('run_id')} has already ended with status {state.get('status')!r}.",
            run_id=state.get("run_id"),
            status=state.get("status"),
        )
