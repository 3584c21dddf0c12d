"""Questions about a JSONL run log (summary, errors, timeline, filtered events), answered without jq.

A line that is not a JSON event is counted and reported, never fatal: a log written by several
processes (or cut short by a crash) must still be readable.
"""

from __future__ import annotations

import calendar
import json
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.core.ids import is_run_id
from fixloop.store import layout
from fixloop.store.logtext import render_text
from fixloop.store.statestore import StateStore

_REQUIRED = ("ts", "level", "type")
_PREVIEW_CHARS = 80


@dataclass(frozen=True)
class CorruptLine:
    line: int  # 1-based
    reason: str
    preview: str


@dataclass
class LogContents:
    events: list[dict[str, Any]] = field(default_factory=list)  # in file order
    corrupt: list[CorruptLine] = field(default_factory=list)


def parse_log(data: bytes) -> LogContents:
    contents = LogContents()
    # Split on \n only: the writer escapes every other character that str.splitlines() would split on.
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        text = raw.decode("utf-8", "replace")
        reason = None
        try:
            event = json.loads(text)
        except json.JSONDecodeError as error:
            reason = f"invalid JSON: {error.msg}"
        except RecursionError:
            reason = "invalid JSON: nested too deeply"
        else:
            if not isinstance(event, dict):
                reason = "not a JSON object"
            elif any(not isinstance(event.get(key), str) for key in _REQUIRED):
                reason = "missing ts, level or type"
        if reason is None:
            contents.events.append(event)
        else:
            contents.corrupt.append(CorruptLine(number, reason, text[:_PREVIEW_CHARS]))
    return contents


def read_log(path: Path) -> LogContents:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FixloopError("LOG_NOT_FOUND", f"No log file {path}.", path=str(path)) from None
    except OSError as error:
        raise FixloopError(
            "LOG_UNREADABLE", f"Cannot read {path}: {error.strerror or error}.", path=str(path)
        ) from None
    return parse_log(data)


def by_time(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sorted by ts; events with the same ts keep their file order."""
    return sorted(events, key=lambda event: str(event["ts"]))


def show(
    path: Path, types: Iterable[str] | None = None, levels: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    wanted_types = None if types is None else set(types)
    wanted_levels = None if levels is None else set(levels)
    return [
        event
        for event in by_time(read_log(path).events)
        if (wanted_types is None or event["type"] in wanted_types)
        and (wanted_levels is None or event["level"] in wanted_levels)
    ]


def errors(path: Path) -> list[dict[str, Any]]:
    return show(path, levels=["E"])


def timeline(path: Path) -> str:
    """The text log, re-rendered from the JSONL log in time order."""
    return "".join(render_text(event) + "\n" for event in by_time(read_log(path).events))


def summary(path: Path) -> dict[str, Any]:
    contents = read_log(path)
    events = by_time(contents.events)
    starts = [event for event in events if event["type"] == "SESSION_START"]
    ends = [event for event in events if event["type"] == "SESSION_END"]
    start = starts[0] if starts else None
    end = ends[-1] if ends else None
    session_id = (start or (events[0] if events else {})).get("session_id")
    return {
        "session_id": session_id,
        "workflow": start.get("workflow") if start else None,
        "session_start": start,
        "session_end": end,
        "status": end.get("status") if end else "incomplete",
        "total_duration_ms": _total_duration_ms(start, end),
        "phases": [
            {
                "phase": event.get("phase"),
                "status": event.get("status"),
                "duration_ms": event.get("duration_ms"),
            }
            for event in events
            if event["type"] == "PHASE_END"
        ],
        "event_count": len(events),
        "counts_by_level": dict(sorted(Counter(event["level"] for event in events).items())),
        "counts_by_type": dict(sorted(Counter(event["type"] for event in events).items())),
        "confidence_decisions": [event for event in events if event["type"] == "CONFIDENCE_DECISION"],
        "user_interactions": [event for event in events if event["type"] == "USER_INTERACTION"],
        "corrupt_lines": len(contents.corrupt),
    }


def _total_duration_ms(start: dict[str, Any] | None, end: dict[str, Any] | None) -> int | None:
    if end is None:
        return None
    recorded = end.get("total_duration_ms")
    if isinstance(recorded, int) and not isinstance(recorded, bool):
        return recorded
    if start is None:
        return None
    began, finished = _epoch_ms(start["ts"]), _epoch_ms(end["ts"])
    return None if began is None or finished is None else finished - began


def _epoch_ms(ts: str) -> int | None:
    try:
        whole = calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S"))
        millis = int(ts[20:23]) if len(ts) == 24 and ts[19] == "." and ts.endswith("Z") else 0
    except ValueError:
        return None
    return whole * 1000 + millis


def log_path(root: Path, value: str) -> Path:
    """A JSONL log named by a run id (its state's logging.log_files.jsonl) or by a path in the project."""
    if is_run_id(value):
        try:
            state = StateStore(Path(layout.state_path(root, value))).read()
        except FixloopError as error:
            if error.code == "RUN_NOT_FOUND":
                raise FixloopError(
                    "RUN_NOT_FOUND", f"No run {value} in {layout.runs_dir(root)}.", run_id=value
                ) from None
            raise
        logging = state.get("logging")
        log_files = logging.get("log_files") if isinstance(logging, dict) else None
        jsonl = log_files.get("jsonl") if isinstance(log_files, dict) else None
        if not isinstance(jsonl, str) or not jsonl:
            raise FixloopError("NO_LOG", f"Run {value} has no JSONL log.", run_id=value)
        path = layout.resolve_inside(root, jsonl)
        if not path.is_file():
            raise FixloopError(
                "NO_LOG", f"The log of run {value} is missing: {path}.", run_id=value, path=str(path)
            )
        return path
    path = layout.resolve_inside(root, value)
    if path.suffix != ".jsonl":
        raise FixloopError(
            "INVALID_LOG_PATH", f"{value!r} is neither a run id nor a .jsonl file.", received=value
        )
    if not path.is_file():
        raise FixloopError("LOG_NOT_FOUND", f"No log file {path}.", received=value, path=str(path))
    return path
