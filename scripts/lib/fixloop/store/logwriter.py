"""The two run logs: one JSON object per line, and an aligned text timeline.

Writers append each line with a single os.write on an O_APPEND descriptor, so lines from several
processes never interleave, and never raise on an I/O failure: hooks must fail open. An event is stamped
and appended to both files under one lock on the JSONL file, so both list events in the same order.
"""

from __future__ import annotations

import fcntl
import os
import time

from fixloop.core import jsoncodec
from fixloop.core.errors import FixloopError
from fixloop.core.redact import redact_value
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.store.logtext import CORE_FIELDS, LEVEL_LABELS, render_text

# Hooks write events on every fixloop subagent call: typing, pathlib, collections and `re` (which the
# `json` module imports too) are not loaded at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any

    PathText = str | os.PathLike[str]

LOG_LEVELS = ("info", "debug")

_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
# Characters that str.splitlines() treats as line breaks but json.dumps leaves raw.
_JSON_LINE_BREAKS = ("\x85", "\u2028", "\u2029")


def log_file_paths(
    logs_dir: Path, identifier: str, session_id: str, now: float | None = None
) -> tuple[Path, Path]:
    """The `<YYYY-MM-DD_HHMMSS>_<identifier>_<session_id>.jsonl` and `.log` pair (UTC)."""
    seconds = int(time.time() if now is None else now)
    stamp = time.strftime("%Y-%m-%d_%H%M%S", time.gmtime(seconds))
    import re

    safe_identifier = re.sub(r"[^A-Za-z0-9_-]+", "-", identifier).strip("-") or "run"
    stem = f"{stamp}_{safe_identifier}_{session_id}"
    return logs_dir / f"{stem}.jsonl", logs_dir / f"{stem}.log"


def _without_surrogates(text: str) -> str:
    """`text` with every unpaired surrogate (which UTF-8 cannot encode) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in text)
    return text


def json_safe(value: Any) -> Any:
    """A copy of `value` that json.dumps always encodes as strict JSON and UTF-8 always encodes."""
    if isinstance(value, str):
        return _without_surrogates(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if value - value == 0.0 else str(value)  # finite (math.isfinite, without loading math)
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(item) for item in value]
    if isinstance(value, dict) or _is_mapping(value):
        return {
            json_safe(key if isinstance(key, str) else str(key)): json_safe(item)
            for key, item in value.items()
        }
    return json_safe(str(value))


def _is_mapping(value: object) -> bool:

    return isinstance(value, dict)


def encode_json_line(event: Mapping[str, Any]) -> bytes:
    text = jsoncodec.dumps(event, ensure_ascii=False, allow_nan=False)
    for char in _JSON_LINE_BREAKS:
        if char in text:
            text = text.replace(char, f"\\u{ord(char):04x}")
    return (text + "\n").encode("utf-8")


def _open_append(path: PathText) -> int:
    try:
        return os.open(path, _APPEND_FLAGS, 0o644)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)
        return os.open(path, _APPEND_FLAGS, 0o644)


def _write_all(fd: int, data: bytes, path: PathText) -> None:
    written = os.write(fd, data)
    if written != len(data):
        raise OSError(f"short write to {path}: {written} of {len(data)} bytes")


def append_line(path: PathText, data: bytes) -> None:
    """Append `data` with one write; creates the parent directories on first use."""
    fd = _open_append(path)
    try:
        _write_all(fd, data, path)
    finally:
        os.close(fd)


class EventLog:
    """Writes events to a JSONL log and/or a text log (either path may be None)."""

    def __init__(
        self,
        jsonl_path: PathText | None,
        text_path: PathText | None,
        session_id: str,
        level: str = "info",
        clock: Callable[[], float] = time.time,
        on_failure: Callable[[dict[str, Any], str], None] | None = None,
    ) -> None:
        if level not in LOG_LEVELS:
            raise FixloopError(
                "INVALID_LOG_LEVEL", f"Log level must be info or debug, not {level!r}.", received=level
            )
        self.jsonl_path = jsonl_path
        self.text_path = text_path
        self.session_id = session_id
        self.level = level
        self.clock = clock
        self.on_failure = on_failure  # told of each event a write failed for, with the reason
        self.last_error: str | None = None

    def writes(self, level: str) -> bool:
        return level != "D" or self.level == "debug"

    def emit(self, level: str, type: str, **fields: Any) -> dict[str, Any] | None:
        """Write one event; return it as written, or None if filtered out or a write failed.

        Fields named like a core field (ts, session_id) are ignored. Every other string value is
        redacted. On failure the reason is left in `last_error`; nothing is raised.
        """
        if level not in LEVEL_LABELS:
            raise FixloopError(
                "INVALID_EVENT_LEVEL",
                f"Event level must be one of {', '.join(LEVEL_LABELS)}, not {level!r}.",
                received=level,
            )
        self.last_error = None
        if not self.writes(level):
            return None
        lock_fd = -1
        try:
            extra = redact_value(
                json_safe({key: value for key, value in fields.items() if key not in CORE_FIELDS})
            )
            if self.jsonl_path is not None:
                lock_fd = _open_append(self.jsonl_path)
                fcntl.flock(lock_fd, fcntl.LOCK_EX)
            event: dict[str, Any] = {
                "ts": utc_timestamp_ms(self.clock()),
                "level": level,
                "type": json_safe(type),
                "session_id": json_safe(self.session_id),
                **extra,
            }
            if self.jsonl_path is not None:
                _write_all(lock_fd, encode_json_line(event), self.jsonl_path)
            if self.text_path is not None:
                append_line(self.text_path, (render_text(event) + "\n").encode("utf-8"))
        except (OSError, ValueError, TypeError, RecursionError) as error:
            self.last_error = f"{error.__class__.__name__}: {error}"
            if self.on_failure is not None:
                self.on_failure({"level": level, "type": type}, self.last_error)
            return None
        finally:
            if lock_fd >= 0:
                os.close(lock_fd)  # closing releases the lock
        return event
