"""The run a hook works for, and the fail-open runner every hook goes through.

A hook finds its run through the session index (the payload's session id -> run id), reads the run's
state once into a RunView, and writes to the run's log. Whatever goes wrong becomes a WARNING: in the
run's log when there is a run, else in <data dir>/hook-warnings.jsonl. A hook never raises.
"""

from __future__ import annotations

import os
import sys
import time

from fixloop.core import datadir, jsoncodec
from fixloop.core.errors import FixloopError
from fixloop.hookside.payload import project_of, session_of
from fixloop.store import layout

# The engine modules that only a found run needs (runview, logwriter, ledger) are imported once it is found.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, BinaryIO

    from fixloop.store.logwriter import EventLog
    from fixloop.store.runview import LogSettings, RunView

    Handler = Callable[[dict[str, Any], "RunContext"], "str | None"]
    Filter = Callable[[dict[str, Any]], bool]

FALLBACK_LOG = "hook-warnings.jsonl"
MESSAGE_CHARS = 500


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class RunContext:
    """The running fixloop run of the Claude Code session that fired the hook."""

    def __init__(self, root: str, run_id: str, view: RunView) -> None:
        self.root = root
        self.run_id = run_id
        self.run_dir = layout.run_dir(root, run_id)
        self.view = view
        self.log = event_log(view.log)

    def emit(self, level: str, type: str, **fields: Any) -> None:
        if self.log is not None:
            self.log.emit(level, type, **fields)

    def warn(self, code: str, message: str, **fields: Any) -> None:
        self.emit("W", "WARNING", code=code, message=message, **fields)


def event_log(settings: LogSettings) -> EventLog | None:
    """The run's log writer, or None when its logging is off."""
    if not settings.enabled or (settings.jsonl_path is None and settings.text_path is None):
        return None
    from fixloop.store.logwriter import EventLog

    return EventLog(settings.jsonl_path, settings.text_path, settings.session_id, settings.level)


def read_payload(stream: BinaryIO) -> dict[str, Any]:
    doc = jsoncodec.loads(stream.read())
    if not isinstance(doc, dict):
        raise ValueError(f"the hook payload is a JSON {type(doc).__name__}, not an object")
    return doc


def load_state(state_file: str) -> dict[str, Any]:
    with open(state_file, "rb") as handle:
        raw = handle.read()
    try:
        doc = jsoncodec.loads(raw)
        if isinstance(doc, dict):
            return doc
    except ValueError:
        pass
    # Corrupt: let the state store restore it from its backup (slower, rare).
    from pathlib import Path

    from fixloop.store.statestore import StateStore

    return StateStore(Path(state_file)).read()


def find_run(payload: Mapping[str, Any]) -> RunContext | None:
    """The session's running run; None when the session has none (fixloop is not at work here)."""
    session = session_of(payload)
    if session is None:
        return None
    root = project_of(payload)
    run_id = layout.run_for_session(root, session)
    if run_id is None:
        return None
    try:
        layout.require_own_dir_inside(root, layout.run_dir(root, run_id))
    except FixloopError as error:  # written nowhere outside the project; the session goes on
        fallback_warning(error.code, error.message, payload)
        return None
    state_file = layout.state_path(root, run_id)
    if not os.path.exists(state_file):
        fallback_warning(
            "RUN_NOT_FOUND",
            f"Session {session} is bound to run {run_id}, which has no state at {state_file}.",
            payload,
        )
        return None
    from fixloop.store.runview import run_view

    view = run_view(load_state(state_file))
    if not view.running and not closes_a_recorded_call(payload, layout.run_dir(root, run_id)):
        return None
    return RunContext(root, run_id, view)


def closes_a_recorded_call(payload: Mapping[str, Any], run_dir: str) -> bool:
    """A result whose call the run recorded is logged even after the run ended: the coordinator ends its own
    run before it returns, and its AGENT_RESULT still belongs to that run. So does the first stop of a
    coordinator the run saw start (its token usage is read from its transcript when it stops)."""
    event = payload.get("hook_event_name")
    if event == "SubagentStop":
        return _stops_a_started_coordinator(payload, run_dir)
    if event not in ("PostToolUse", "PostToolUseFailure"):
        return False
    from fixloop.store import ledger

    records = ledger.read(run_dir)
    return ledger.find_call(records, payload.get("tool_use_id")) is not None and (
        ledger.find_result(records, payload.get("tool_use_id")) is None
    )


def _stops_a_started_coordinator(payload: Mapping[str, Any], run_dir: str) -> bool:
    from fixloop.core import agent_names
    from fixloop.store import ledger

    if agent_names.agent_name(payload.get("agent_type"), plugin_only=True) != agent_names.COORDINATOR_AGENT:
        return False
    agent_id = payload.get("agent_id")
    records = ledger.read(run_dir)
    started = any(r.get("kind") == "start" and r.get("agent_id") == agent_id for r in records)
    return started and not ledger.stops_of(records, agent_id)


def fallback_warning(code: str, message: str, payload: Mapping[str, Any] | None = None) -> None:
    """A WARNING that belongs to no run log: appended to <data dir>/hook-warnings.jsonl, if writable."""
    try:
        from fixloop.store.logwriter import EventLog

        session = session_of(payload or {}) or "unknown"
        EventLog(os.path.join(datadir.data_dir(), FALLBACK_LOG), None, session).emit(
            "W",
            "WARNING",
            code=code,
            message=message,
            hook=(payload or {}).get("hook_event_name"),
        )
    except Exception:  # the last resort must not fail either
        pass


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:MESSAGE_CHARS]


def run(
    handler: Handler,
    relevant: Filter | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> int:
    """Read the payload, find the run, call `handler`; write what it returns. Never raises, returns 0.

    `relevant` sees the payload first: when it says no, nothing else happens (the cheap common case).
    `stdin` and `stdout` default to the process's own (binary) streams.

    Any failure becomes a WARNING (code HOOK_FAILED, or HOOK_BAD_INPUT for an unreadable payload) in the
    run's log when a run can be found, else in the data directory's hook-warnings.jsonl.
    """
    context: RunContext | None = None
    payload: dict[str, Any] = {}
    try:
        try:
            payload = read_payload(stdin if stdin is not None else sys.stdin.buffer)
        except (ValueError, OSError) as error:
            context = find_run({})  # session id from the environment
            message = f"Unreadable hook payload: {describe(error)}"
            if context is not None:
                context.warn("HOOK_BAD_INPUT", message)
            else:
                fallback_warning("HOOK_BAD_INPUT", message)
            return 0
        if relevant is not None and not relevant(payload):
            return 0
        context = find_run(payload)
        if context is None:
            return 0
        output = handler(payload, context)
        if output:
            out = stdout if stdout is not None else sys.stdout.buffer
            out.write(output.encode("utf-8"))  # whatever the locale: Claude Code reads UTF-8
            out.flush()
    except Exception as error:
        message = f"fixloop hook {payload.get('hook_event_name') or '?'} failed: {describe(error)}"
        try:
            if context is not None:
                context.warn("HOOK_FAILED", message, hook=payload.get("hook_event_name"))
            else:
                fallback_warning("HOOK_FAILED", message, payload)
        except Exception:
            pass
    return 0
