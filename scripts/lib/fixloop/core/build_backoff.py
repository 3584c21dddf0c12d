"""The wait between failed builds of the engine's environment: one unreachable package index costs one
failed build, not one per command. Standard library only (scripts/bootstrap.py runs before any venv).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

FAILED_BUILD = "venv-build-failed.json"
FIRST_BACKOFF_S = 300
MAX_BACKOFF_S = 6 * 3600


def _failed_build(data: Path) -> dict[str, object]:
    try:
        record = json.loads((data / FAILED_BUILD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def backoff_left(data: Path, digest: str, now: float | None = None) -> tuple[float, str]:
    """(seconds before the next build may start, why the last one failed); (0, "") when it may start now.

    Only a failure for the same requirements counts, and FIXLOOP_FORCE_BUILD lifts the wait."""
    if os.environ.get("FIXLOOP_FORCE_BUILD"):
        return 0.0, ""
    record = _failed_build(data)
    failures, at, reason = record.get("failures"), record.get("failed_at"), record.get("reason")
    if record.get("requirements") != digest or not isinstance(failures, int) or not isinstance(at, float):
        return 0.0, ""
    wait = min(FIRST_BACKOFF_S * 2 ** max(0, failures - 1), MAX_BACKOFF_S)
    left = at + wait - (time.time() if now is None else now)
    return (left, str(reason)) if left > 0 else (0.0, "")


def note_failure(data: Path, digest: str, reason: str) -> None:
    """Put a failed build on record; failures in a row for the same requirements lengthen the wait."""
    previous = _failed_build(data)
    failures = previous.get("failures") if previous.get("requirements") == digest else 0
    record = {
        "requirements": digest,
        "failed_at": time.time(),
        "failures": (failures if isinstance(failures, int) else 0) + 1,
        "reason": reason,
    }
    temp = data / f".{FAILED_BUILD}.{os.getpid()}.tmp"
    temp.write_text(json.dumps(record) + "\n", encoding="utf-8")
    os.replace(temp, data / FAILED_BUILD)
