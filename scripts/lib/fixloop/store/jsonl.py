"""Reading append-only JSONL files written by several processes (standard library only)."""

from __future__ import annotations

from fixloop.core import jsoncodec

TYPE_CHECKING = False  # hooks import this module: typing is not loaded at run time
if TYPE_CHECKING:
    from typing import Any


def json_objects(raw: bytes) -> list[dict[str, Any]]:
    """Every line of `raw` that is a JSON object; a torn or foreign line is skipped, not fatal."""
    records: list[dict[str, Any]] = []
    for line in raw.splitlines():
        try:
            record = jsoncodec.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records
