"""What the fixloop hook scripts share: the payload, the run of the session, its log, failing open.

Standard library only (plus the engine's stdlib-only modules), because these hooks run on every
subagent call and must start fast (they are launched with `python -S` by hooks/run-hook).
"""

from __future__ import annotations

import os
import sys
import time

# Every fixloop subagent call pays for what these hooks import, so they keep to modules that load in
# well under a millisecond: no typing, pathlib, json or re (fixloop.core.jsoncodec reads and writes JSON).
# The engine modules that only a run needs (logwriter, ledger) are imported once a run is found.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from fixloop.store.logwriter import EventLog

    Handler = Callable[[dict[str, Any], "RunContext"], "str | None"]
    Filter = Callable[[dict[str, Any]], bool]

PLUGIN_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
LIB = os.path.join(PLUGIN_ROOT, "scripts", "lib")
if LIB not in sys.path:
    sys.path.insert(0, LIB)

from fixloop.core import datadir, jsoncodec  # noqa: E402
from fixloop.store import layout  # noqa: E402

SUBAGENT_TOOLS = ("Agent", "Task")
FALLBACK_LOG = "hook-warnings.jsonl"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class RunContext:
    """The active fixloop run of the Claude Code session that fired the hook."""

    def __init__(self, root: str, run_id: str, state: dict[str, Any]) -> None:
        self.root = root
        self.run_id = run_id
        self.run_dir = layout.run_dir(root, run_id)
        self.state = state
        self.log = event_log(state, run_id)

    def emit(self, level: str, type: str, **fields: Any) -> None:
        if self.log is not None:
            self.log.emit(level, type, **fields)

    def warn(self, code: str, message: str, **fields: Any) -> None:
        self.emit("W", "WARNING", code=code, message=message, **fields)


def event_log(state: Mapping[str, Any], run_id: str) -> EventLog | None:
    """The run's log writer, or None when its logging is off (same rules as runs.run_log)."""
    from fixloop.store.logwriter import LOG_LEVELS, EventLog

    logging = state.get("logging")
    if not isinstance(logging, dict) or logging.get("enabled") is not True:
        return None
    files = logging.get("log_files")
    if not isinstance(files, dict):
        return None
    jsonl, text = files.get("jsonl"), files.get("text")
    level = logging.get("level")
    return EventLog(
        jsonl if isinstance(jsonl, str) and jsonl else None,
        text if isinstance(text, str) and text else None,
        str(logging.get("session_id") or run_id),
        level if isinstance(level, str) and level in LOG_LEVELS else "info",
    )


def read_payload() -> dict[str, Any]:
    raw = sys.stdin.buffer.read()
    doc = jsoncodec.loads(raw)
    if not isinstance(doc, dict):
        raise ValueError(f"the hook payload is a JSON {type(doc).__name__}, not an object")
    return doc


def project_of(payload: Mapping[str, Any]) -> str:
    cwd = payload.get("cwd")
    return layout.project_root(cwd if isinstance(cwd, str) and cwd else None)


def session_of(payload: Mapping[str, Any]) -> str | None:
    session = payload.get("session_id")
    if isinstance(session, str) and session:
        return session
    return os.environ.get("CLAUDE_CODE_SESSION_ID") or None


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
    state_file = layout.state_path(root, run_id)
    if not os.path.exists(state_file):
        fallback_warning(
            "RUN_NOT_FOUND",
            f"Session {session} is bound to run {run_id}, which has no state at {state_file}.",
            payload,
        )
        return None
    state = load_state(state_file)
    ended = state.get("status") != "running" or state.get("ended_at_ms") is not None
    if ended and not closes_a_recorded_call(payload, layout.run_dir(root, run_id)):
        return None
    return RunContext(root, run_id, state)


def closes_a_recorded_call(payload: Mapping[str, Any], run_dir: str) -> bool:
    """A result whose call the run recorded is logged even after the run ended: the coordinator ends its own
    run before it returns, and its AGENT_RESULT still belongs to that run."""
    if payload.get("hook_event_name") not in ("PostToolUse", "PostToolUseFailure"):
        return False
    from fixloop.store import ledger

    records = ledger.read(run_dir)
    return ledger.find_call(records, payload.get("tool_use_id")) is not None and (
        ledger.find_result(records, payload.get("tool_use_id")) is None
    )


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


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:500]


def run(handler: Handler, relevant: Filter | None = None) -> int:
    """Read the payload, find the run, call `handler`; print what it returns. Never raises, returns 0.

    `relevant` sees the payload first: when it says no, nothing else happens (the cheap common case).

    Any failure becomes a WARNING (code HOOK_FAILED, or HOOK_BAD_INPUT for an unreadable payload) in the
    run's log when a run can be found, else in the data directory's hook-warnings.jsonl.
    """
    context: RunContext | None = None
    payload: dict[str, Any] = {}
    try:
        try:
            payload = read_payload()
        except (ValueError, OSError) as error:
            context = find_run({})  # session id from the environment
            message = f"Unreadable hook payload: {_describe(error)}"
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
            sys.stdout.buffer.write(output.encode("utf-8"))  # whatever the locale: Claude Code reads UTF-8
            sys.stdout.buffer.flush()
    except Exception as error:
        message = f"fixloop hook {payload.get('hook_event_name') or '?'} failed: {_describe(error)}"
        try:
            if context is not None:
                context.warn("HOOK_FAILED", message, hook=payload.get("hook_event_name"))
            else:
                fallback_warning("HOOK_FAILED", message, payload)
        except Exception:
            pass
    return 0


# ---- payload helpers -----------------------------------------------------------------------------


def text_of(value: Any) -> str:
    """The text of a tool response's content (a string or a list of {"type":"text","text":...})."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            item["text"] for item in value if isinstance(item, dict) and isinstance(item.get("text"), str)
        )
    return ""


def parse_report(text: str) -> dict[str, Any] | None:
    """The JSON object an agent answered with, tolerating a code fence or words around it."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    for candidate in (body, body[body.find("{") : body.rfind("}") + 1]):
        if not candidate.lstrip().startswith("{"):  # no object here: spare the json module's error path
            continue
        try:
            doc = jsoncodec.loads(candidate)
        except ValueError:
            continue
        if isinstance(doc, dict):
            return doc
    return None


def issues_count(report: Mapping[str, Any] | None) -> int | None:
    if report is None:
        return None
    issues = report.get("issues")
    return len(issues) if isinstance(issues, list) else None


def report_status(report: Mapping[str, Any] | None) -> str | None:
    status = report.get("status") if report is not None else None
    return status if status in ("success", "failed", "partial") else None


def current_phase(state: Mapping[str, Any]) -> str | None:
    """`phase_N` of the most recently opened phase that is still open, or None."""
    open_phases = state.get("open_phases")
    if not isinstance(open_phases, dict) or not open_phases:
        return None
    best: tuple[int, int] | None = None
    for key, started in open_phases.items():
        try:
            candidate = (int(started), int(key))
        except (TypeError, ValueError):
            continue
        if best is None or candidate > best:
            best = candidate
    return f"phase_{best[1]}" if best is not None else None


def review_round(state: Mapping[str, Any]) -> int | None:
    """The run's current review round: `iteration` of the last of state.review.rounds (None if none yet)."""
    review = state.get("review")
    rounds = review.get("rounds") if isinstance(review, dict) else None
    if not isinstance(rounds, list) or not rounds or not isinstance(rounds[-1], dict):
        return None
    number = rounds[-1].get("iteration")
    return number if isinstance(number, int) and not isinstance(number, bool) and number >= 1 else None


def agent_model(agent: str, tool_input: Mapping[str, Any]) -> str | None:
    """The model of the call: the tool input's `model`, else the `model:` of agents/<agent>.md."""
    model = tool_input.get("model")
    if isinstance(model, str) and model:
        return model
    try:
        with open(os.path.join(PLUGIN_ROOT, "agents", f"{agent}.md"), encoding="utf-8") as handle:
            head = handle.read(4096)
    except (OSError, UnicodeDecodeError):
        return None
    lines = head.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:]:
        if line.strip() == "---":
            break
        key, _, value = line.partition(":")
        if key.strip() == "model" and value.strip():
            return value.strip().strip("\"'")
    return None
