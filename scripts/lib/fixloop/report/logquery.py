"""Questions about a JSONL run log (summary, errors, timeline, filtered events), answered without jq.

A line that is not a JSON event is counted and reported, never fatal: a log written by several
processes (or cut short by a crash) must still be readable. Every query streams the log in time order
(report.logstream): its memory does not grow with the log, only with what the answer itself holds.
"""

from __future__ import annotations

import calendar
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.core.ids import is_run_id
from fixloop.report.logstream import CorruptLine, LogScan, Select, Spool, scan_log
from fixloop.store import layout
from fixloop.store.logtext import render_text
from fixloop.store.statestore import StateStore

__all__ = [
    "CorruptLine",
    "LogScan",
    "errors",
    "log_path",
    "scan_log",
    "selector",
    "show",
    "summary",
    "timeline",
]


def selector(types: Iterable[str] | None = None, levels: Iterable[str] | None = None) -> Select | None:
    """The events of these types and levels (None: any); None when nothing is filtered."""
    wanted_types = None if types is None else frozenset(types)
    wanted_levels = None if levels is None else frozenset(levels)
    if wanted_types is None and wanted_levels is None:
        return None

    def selected(event: dict[str, Any]) -> bool:
        return (wanted_types is None or event["type"] in wanted_types) and (
            wanted_levels is None or event["level"] in wanted_levels
        )

    return selected


def show(
    path: Path, types: Iterable[str] | None = None, levels: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """The events in time order (equal times in file order), optionally only some types or levels."""
    with scan_log(path, selector(types, levels)) as scan:
        return list(scan.events())


def errors(path: Path) -> list[dict[str, Any]]:
    return show(path, levels=["E"])


def timeline_lines(scan: LogScan) -> Iterator[str]:
    """The text log, re-rendered from the JSONL log in time order, one line at a time."""
    for event in scan.events():
        yield render_text(event) + "\n"


def timeline(path: Path) -> str:
    with scan_log(path) as scan:
        return "".join(timeline_lines(scan))


@contextmanager
def summary_document(path: Path) -> Iterator[dict[str, Any]]:
    """The summary: session start and end, phases, counts by level and type, decisions and user
    interactions, from one pass over the events in time order. Its lists (phases, decisions, interactions)
    are spools, iterated to write them, so a summary of any log fits in bounded memory; valid in the
    `with` only."""
    start: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    first: dict[str, Any] | None = None
    phases, decisions, interactions = Spool(), Spool(), Spool()
    levels: Counter[str] = Counter()
    types: Counter[str] = Counter()
    try:
        with scan_log(path) as scan:
            for event in scan.events():
                kind = event["type"]
                first = first or event
                levels[event["level"]] += 1
                types[kind] += 1
                if kind == "SESSION_START" and start is None:
                    start = event
                elif kind == "SESSION_END":
                    end = event
                elif kind == "PHASE_END":
                    phases.append(
                        {
                            "phase": event.get("phase"),
                            "status": event.get("status"),
                            "duration_ms": event.get("duration_ms"),
                        }
                    )
                elif kind == "CONFIDENCE_DECISION":
                    decisions.append(event)
                elif kind == "USER_INTERACTION":
                    interactions.append(event)
        yield {
            "session_id": (start or first or {}).get("session_id"),
            "workflow": start.get("workflow") if start else None,
            "session_start": start,
            "session_end": end,
            "status": end.get("status") if end else "incomplete",
            "total_duration_ms": _total_duration_ms(start, end),
            "phases": phases,
            "event_count": scan.count,
            "counts_by_level": dict(sorted(levels.items())),
            "counts_by_type": dict(sorted(types.items())),
            "confidence_decisions": decisions,
            "user_interactions": interactions,
            "corrupt_lines": scan.corrupt_count,
        }
    finally:
        for spool in (phases, decisions, interactions):
            spool.close()


def summary(path: Path) -> dict[str, Any]:
    """summary_document with its lists read into memory."""
    with summary_document(path) as document:
        return {key: list(value) if isinstance(value, Spool) else value for key, value in document.items()}


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
