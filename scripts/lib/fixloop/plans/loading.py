"""Reading a plan file: found, a regular file, at most 2 MB, UTF-8."""

from __future__ import annotations

from pathlib import Path

from fixloop.core.errors import FixloopError
from fixloop.plans.model import Plan
from fixloop.plans.parser import parse

MAX_PLAN_BYTES = 2 * 1024 * 1024


def read_text(path: Path | str) -> str:
    """The plan file's text, exactly as stored (for mark_done and writing back).

    PLAN_NOT_FOUND for a missing or unreadable file or a directory; PLAN_INVALID over 2 MB or not UTF-8.
    """
    plan_path = Path(path)
    if not plan_path.exists():
        raise FixloopError("PLAN_NOT_FOUND", f"No plan file at {plan_path}.", path=str(plan_path))
    if not plan_path.is_file():
        raise FixloopError("PLAN_NOT_FOUND", f"{plan_path} is not a file.", path=str(plan_path))
    try:
        with plan_path.open("rb") as stream:
            data = stream.read(MAX_PLAN_BYTES + 1)
    except OSError as error:
        message = f"Cannot read the plan file {plan_path}: {error.strerror or error}."
        raise FixloopError("PLAN_NOT_FOUND", message, path=str(plan_path)) from None
    if len(data) > MAX_PLAN_BYTES:
        message = f"The plan file {plan_path} is larger than 2 MB; split it into smaller plans."
        raise FixloopError("PLAN_INVALID", message, path=str(plan_path), max_bytes=MAX_PLAN_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        message = f"The plan file {plan_path} is not UTF-8 text (byte {error.start} cannot be read)."
        raise FixloopError("PLAN_INVALID", message, path=str(plan_path), offset=error.start) from None


def load(path: Path | str) -> Plan:
    """The plan in a file; errors as read_text, and PLAN_INVALID (naming every problem) from parse."""
    return parse(read_text(path), source=str(path))
