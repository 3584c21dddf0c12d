"""Reading append-only JSONL files written by several processes (standard library only)."""

from __future__ import annotations

import os

from fixloop.core import jsoncodec

TYPE_CHECKING = False  # hooks import this module: typing is not loaded at run time
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

# A longer line is never held in memory: it comes as None (a log query reports it as damaged).
MAX_LINE_BYTES = 16 * 1024 * 1024
READ_BLOCK_BYTES = 1024 * 1024


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


def file_lines(
    fd: int,
    start: int,
    end: int,
    block: int = READ_BLOCK_BYTES,
    max_line: int = MAX_LINE_BYTES,
) -> Iterator[tuple[int, bytes | None]]:
    """The lines of the bytes [start, end) of the open file `fd`, split on \\n only, each with the offset just
    past it: (offset, line without its \\n). A line longer than `max_line` comes as (offset, None) and is
    skipped, never held. Reads with os.pread, so several of these can share one descriptor; memory is one
    block and one line whatever the file's size. `start` must be where a line begins."""
    position = start  # where the next read starts
    pending = b""  # the start of a line whose end is not read yet
    skipping = False  # inside a line longer than max_line
    while position < end:
        data = os.pread(fd, min(block, end - position), position)
        if not data:  # the file was cut short under us
            break
        line_end = position
        position += len(data)
        parts = data.split(b"\n")
        tail = parts.pop()
        for part in parts:
            line_end += len(part) + 1
            if pending:
                part, pending = pending + part, b""
            if skipping or len(part) > max_line:
                skipping = False
                yield line_end, None
            else:
                yield line_end, part
        if not skipping:
            pending += tail
            if len(pending) > max_line:
                pending, skipping = b"", True
    if skipping:
        yield position, None
    elif pending:
        yield position, pending
