"""A JSON state file that survives crashes and concurrent writers.

Layout beside the state file `<name>`: `<name>.bak` (the state before the latest write),
`<name>.lock` (the writers' lock) and `state-history.jsonl` (the latest changes, capped).
"""

from __future__ import annotations

import contextlib
import copy
import json
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.core.ids import is_run_id
from fixloop.core.redact import redact
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.store.atomic import sweep_stale_temps, write_atomic
from fixloop.store.jsonl import json_objects
from fixloop.store.locking import file_lock

Validator = Callable[[dict[str, Any]], list[str]]
MAX_ERRORS = 3
HISTORY_FILE = "state-history.jsonl"

_RUN_STATE_TYPES: tuple[tuple[str, type, str], ...] = (
    ("run_id", str, "string"),
    ("workflow", str, "string"),
    ("status", str, "string"),
    ("created_at", str, "string"),
    ("error_count", int, "integer"),
    ("errors", list, "array"),
    ("config", dict, "object"),
    ("phases", list, "array"),
    ("review", dict, "object"),
    ("logging", dict, "object"),
)


def minimal_run_state_errors(doc: Mapping[str, Any]) -> list[str]:
    """The structural problems of a run state: missing top-level keys and wrong types."""
    problems: list[str] = []
    for key, expected, name in _RUN_STATE_TYPES:
        if key not in doc:
            problems.append(f"{key}: missing")
            continue
        value = doc[key]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            problems.append(f"{key}: expected {name}, got {_json_type(value)}")
    if isinstance(doc.get("run_id"), str) and not is_run_id(doc["run_id"]):
        problems.append("run_id: expected 8 lowercase hex characters")
    return problems


def _json_type(value: Any) -> str:
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def encode_state(doc: Mapping[str, Any]) -> bytes:
    try:
        data = (_state_text(doc, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates cannot be UTF-8; \u escapes keep them and keep the file valid JSON.
        data = (_state_text(doc, ensure_ascii=True) + "\n").encode("ascii")
    except (TypeError, ValueError) as error:
        raise FixloopError("STATE_INVALID", f"The state is not JSON-serialisable: {error}.") from None
    return data


def _state_text(doc: Mapping[str, Any], ensure_ascii: bool) -> str:
    """One line per top-level key, each value compact: json's C encoder writes no indentation, and the
    Python one that does takes ten times as long over the review of a large run."""
    if not doc or not all(isinstance(key, str) for key in doc):
        return json.dumps(doc, ensure_ascii=ensure_ascii, indent=2, allow_nan=False)
    lines = [
        json.dumps(key, ensure_ascii=ensure_ascii)
        + ": "
        + json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=False)
        for key, value in doc.items()
    ]
    return "{\n  " + ",\n  ".join(lines) + "\n}"


class StateStore:
    def __init__(
        self,
        path: Path,
        validate: Validator | None = None,
        history_limit: int = 50,
        lock_timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self.backup_path = path.with_name(path.name + ".bak")
        self.history_path = path.with_name(HISTORY_FILE)
        self.validate = validate
        self.history_limit = history_limit
        self.lock_timeout = lock_timeout
        self.clock = clock

    # ---- public API ---------------------------------------------------------------------------

    def exists(self) -> bool:
        return self.path.exists()

    def create(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        """Write the first version of the state; RUN_EXISTS if there is one already."""
        state = copy.deepcopy(dict(doc))
        self._require_valid(state)
        with self._locked():
            if self.path.exists():
                raise FixloopError("RUN_EXISTS", f"State {self.path} already exists.", path=str(self.path))
            self._write_io(self.path, encode_state(state))
            try:
                self._record_history("create", sorted(state))
            except BaseException:  # all or nothing: no run is left behind by a creation that failed
                for written in (self.path, self.history_path):
                    with contextlib.suppress(OSError):
                        written.unlink(missing_ok=True)
                raise
        return state

    def read(self) -> dict[str, Any]:
        """The current state; a corrupt file is restored from the backup first."""
        raw = self._read_bytes(self.path)
        state, _ = self._decode(raw)
        if state is not None:
            return state
        with self._locked():
            state, _raw = self._load_locked()
            return state

    def update(
        self, fn: Callable[[dict[str, Any]], dict[str, Any] | None], action: str = "update"
    ) -> dict[str, Any]:
        """Apply `fn` (mutating its argument or returning a new state) under the lock and save the result.

        `fn` gets a private copy, so when it raises or the result is invalid nothing is written.
        """
        with self._locked():
            current, current_raw = self._load_locked()
            work = json.loads(current_raw)  # a private copy: decoding again is faster than deepcopy
            result = fn(work)
            new = work if result is None else result
            if not isinstance(new, dict):
                raise FixloopError(
                    "STATE_INVALID", f"The state update returned {type(new).__name__}, not an object."
                )
            self._require_valid(new)
            changed = _changed_keys(current, new)
            if not changed:
                return new
            data = encode_state(new)
            self._write_io(self.backup_path, current_raw)
            self._write_io(self.path, data)
            self._record_history(action, changed)
            return new

    def restore(self) -> dict[str, Any]:
        """Roll the state back to the backup (the state before the latest write)."""
        with self._locked():
            backup = self._load_backup()
            if backup is None:
                raise FixloopError("NO_BACKUP", f"No usable backup {self.backup_path}.", path=str(self.path))
            state, raw = backup
            current_raw = self._read_bytes_or_none(self.path)
            current, _ = self._decode(current_raw) if current_raw is not None else (None, [])
            self._write_io(self.path, raw)
            self._record_history("restore", _changed_keys(current or {}, state), reason="requested")
            return state

    def record_error(self, action: str, message: str) -> dict[str, Any]:
        """Append to `errors`, count it, and fail the run at MAX_ERRORS."""

        def add(state: dict[str, Any]) -> None:
            errors = state.get("errors")
            if not isinstance(errors, list):
                errors = []
            errors.append(
                {"ts": utc_timestamp_ms(self.clock()), "action": action, "message": redact(message)}
            )
            state["errors"] = errors
            count = state.get("error_count")
            state["error_count"] = (
                count if isinstance(count, int) and not isinstance(count, bool) else 0
            ) + 1
            if state["error_count"] >= MAX_ERRORS:
                state["status"] = "failed"

        return self.update(add, action="record_error")

    def history(self) -> list[dict[str, Any]]:
        return json_objects(self._read_bytes_or_none(self.history_path) or b"")

    # ---- internals ----------------------------------------------------------------------------

    def _locked(self) -> AbstractContextManager[None]:
        return _SweepingLock(file_lock(self.path, timeout=self.lock_timeout), self.path.parent)

    def _problems(self, doc: dict[str, Any]) -> list[str]:
        return self.validate(doc) if self.validate is not None else []

    def _require_valid(self, doc: dict[str, Any]) -> None:
        problems = self._problems(doc)
        if problems:
            raise FixloopError(
                "STATE_INVALID", f"The state is invalid: {problems[0]}", errors=problems, path=str(self.path)
            )

    def _decode(self, raw: bytes) -> tuple[dict[str, Any] | None, list[str]]:
        """The state in `raw` and no problems, or None and what is wrong with it."""
        try:
            doc = json.loads(raw)
        except (ValueError, RecursionError) as error:
            return None, [f"not valid JSON: {error}"]
        if not isinstance(doc, dict):
            return None, [f"expected a JSON object, got {_json_type(doc)}"]
        problems = self._problems(doc)
        return (None, problems) if problems else (doc, [])

    def _read_bytes(self, path: Path) -> bytes:
        raw = self._read_bytes_or_none(path)
        if raw is None:
            raise FixloopError("RUN_NOT_FOUND", f"No state at {path}.", path=str(path))
        return raw

    def _read_bytes_or_none(self, path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise FixloopError(
                "STATE_UNREADABLE", f"Cannot read {path}: {error.strerror or error}.", path=str(path)
            ) from None

    def _load_backup(self) -> tuple[dict[str, Any], bytes] | None:
        raw = self._read_bytes_or_none(self.backup_path)
        if raw is None:
            return None
        state, _ = self._decode(raw)
        return None if state is None else (state, raw)

    def _load_locked(self) -> tuple[dict[str, Any], bytes]:
        """Read under the lock; restore from the backup when the file is corrupt."""
        raw = self._read_bytes(self.path)
        state, problems = self._decode(raw)
        if state is not None:
            return state, raw
        backup = self._load_backup()
        if backup is None:
            raise FixloopError(
                "STATE_CORRUPT",
                f"State {self.path} is corrupt and has no usable backup: {problems[0]}",
                path=str(self.path),
                errors=problems,
            )
        state, backup_raw = backup
        self._write_io(self.path, backup_raw)
        self._record_history("restore", sorted(state), reason=f"corrupt: {problems[0]}")
        return state, backup_raw

    def _write_io(self, path: Path, data: bytes) -> None:
        try:
            write_atomic(path, data)
        except OSError as error:
            raise FixloopError(
                "STATE_WRITE_FAILED", f"Cannot write {path}: {error.strerror or error}.", path=str(path)
            ) from None

    def _record_history(self, action: str, changed: list[str], **extra: Any) -> None:
        if self.history_limit <= 0:
            return
        record = {"ts": utc_timestamp_ms(self.clock()), "action": action, "changed": changed, **extra}
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")
        existing = (self._read_bytes_or_none(self.history_path) or b"").splitlines()
        kept = [*existing[max(0, len(existing) - self.history_limit + 1) :], line]
        self._write_io(self.history_path, b"\n".join(kept) + b"\n")


class _SweepingLock:
    """The state's lock; once held, the temporary files of writers killed mid-write are removed."""

    def __init__(self, lock: file_lock, directory: Path) -> None:
        self.lock = lock
        self.directory = directory

    def __enter__(self) -> None:
        self.lock.__enter__()
        sweep_stale_temps(self.directory)

    def __exit__(self, *exc: Any) -> None:
        self.lock.__exit__(*exc)


def _changed_keys(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    missing = object()
    return sorted(key for key in {*before, *after} if before.get(key, missing) != after.get(key, missing))
