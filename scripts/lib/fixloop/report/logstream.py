"""A JSONL run log read as a stream, its events in time order, in memory bounded whatever its size.

`scan_log` reads the file once, up to its size when opened (lines appended later are not part of the
answer), parsing each line: damaged lines go to a spool in file order, the selected events into chunks of
at most CHUNK_BYTES (and CHUNK_EVENTS). A chunk already in time order, as a log's events almost always are,
is kept as its byte range of the log; consecutive such chunks join into one. Only a chunk out of order is
sorted, and written to a temporary file unless it is the last. `LogScan.events()` then merges these sorted
sources (heapq.merge), parsing each event again as it is handed out: the order is exactly that of a stable
sort of the whole log by `ts` (ties keep their file order), in time linear in the log's size and memory of
one chunk plus one read block per source.
"""

from __future__ import annotations

import heapq
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from fixloop.core import jsoncodec
from fixloop.core.errors import FixloopError
from fixloop.store.jsonl import MAX_LINE_BYTES, file_lines

CHUNK_BYTES = 16 * 1024 * 1024
CHUNK_EVENTS = 100_000
SOURCE_BLOCK_BYTES = 64 * 1024  # read block of each merged source: many sources, small blocks
SPOOL_BYTES = 1024 * 1024  # damaged lines kept in memory up to this much, then in a temporary file
_PREVIEW_CHARS = 80

Select = Callable[[dict[str, Any]], bool]
Timed = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class CorruptLine:
    line: int  # 1-based
    reason: str
    preview: str


def parse_line(number: int, raw: bytes | None) -> dict[str, Any] | CorruptLine | None:
    """The event on line `number`, what is wrong with it, or None for a blank line."""
    if raw is None:
        return CorruptLine(number, f"line longer than {MAX_LINE_BYTES} bytes", "")
    if not raw or raw.isspace():
        return None
    text = raw.decode("utf-8", "replace")
    try:
        event = jsoncodec.loads(text)
    except json.JSONDecodeError as error:
        return CorruptLine(number, f"invalid JSON: {error.msg}", text[:_PREVIEW_CHARS])
    except (ValueError, RecursionError):
        return CorruptLine(number, "invalid JSON: nested too deeply", text[:_PREVIEW_CHARS])
    if type(event) is not dict:
        return CorruptLine(number, "not a JSON object", text[:_PREVIEW_CHARS])
    if not (
        type(event.get("ts")) is str and type(event.get("level")) is str and type(event.get("type")) is str
    ):
        return CorruptLine(number, "missing ts, level or type", text[:_PREVIEW_CHARS])
    return event


def _events(fd: int, start: int, end: int, select: Select | None) -> Iterator[Timed]:
    """The selected events of the bytes [start, end) of `fd`, in their order there, with their ts."""
    for _offset, raw in file_lines(fd, start, end, block=SOURCE_BLOCK_BYTES, max_line=MAX_LINE_BYTES):
        event = parse_line(0, raw)
        if isinstance(event, dict) and (select is None or select(event)):
            yield event["ts"], event


class Spool:
    """A list of JSON values in memory up to SPOOL_BYTES, then in a temporary file: append, then iterate
    (as often as wanted). Close it to remove the file."""

    def __init__(self) -> None:
        self._file: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - close()
        self.count = 0

    def append(self, value: Any) -> None:
        self._file.write(json.dumps(value, ensure_ascii=True).encode("ascii") + b"\n")
        self.count += 1

    def __iter__(self) -> Iterator[Any]:
        self._file.flush()
        self._file.seek(0)
        for raw in self._file:
            yield json.loads(raw)

    def close(self) -> None:
        self._file.close()


@dataclass
class _Range:
    """Events of the log between two offsets, already in time order."""

    start: int
    end: int
    last_ts: str


class _Chunk:
    def __init__(self, start: int) -> None:
        self.start = start
        self.items: list[tuple[str, bytes]] = []
        self.size = 0
        self.in_order = True

    def add(self, ts: str, raw: bytes) -> None:
        if self.items and ts < self.items[-1][0]:
            self.in_order = False
        self.items.append((ts, raw))
        self.size += len(raw)

    def full(self) -> bool:
        return self.size >= CHUNK_BYTES or len(self.items) >= CHUNK_EVENTS


class LogScan:
    """One read of a log: `count` selected events, `corrupt_count` damaged lines, then `events()` in time
    order and `corrupt_lines()` in file order, each as often as wanted. Close it (or use `with`) to remove
    its temporary files."""

    def __init__(self, path: Path, select: Select | None = None) -> None:
        self.path = path
        self.select = select
        self.count = 0
        self.corrupt_count = 0
        self._fd = _open(path)
        self._end = os.fstat(self._fd).st_size
        self._sources: list[_Range | IO[bytes] | list[tuple[str, bytes]]] = []
        self._corrupt = Spool()
        try:
            self._read()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> LogScan:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        for source in self._sources:
            if not isinstance(source, (_Range, list)):
                source.close()
        self._sources = []
        self._corrupt.close()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _read(self) -> None:
        chunk = _Chunk(0)
        line_start = 0
        lines = file_lines(self._fd, 0, self._end, max_line=MAX_LINE_BYTES)
        for number, (line_end, raw) in enumerate(lines, start=1):
            event = parse_line(number, raw)
            if isinstance(event, CorruptLine):
                self.corrupt_count += 1
                self._corrupt.append([event.line, event.reason, event.preview])
            elif event is not None and (self.select is None or self.select(event)):
                assert raw is not None
                self.count += 1
                if chunk.full():  # closed when the next event comes: the last chunk stays in memory
                    self._close_chunk(chunk, line_start, last=False)
                    chunk = _Chunk(line_start)
                chunk.add(event["ts"], raw)
            line_start = line_end
        self._close_chunk(chunk, self._end, last=True)

    def _close_chunk(self, chunk: _Chunk, end: int, *, last: bool) -> None:
        if not chunk.items:
            return
        if chunk.in_order:
            first_ts, last_ts = chunk.items[0][0], chunk.items[-1][0]
            previous = self._sources[-1] if self._sources else None
            if isinstance(previous, _Range) and previous.end == chunk.start and previous.last_ts <= first_ts:
                previous.end, previous.last_ts = end, last_ts
            else:
                self._sources.append(_Range(chunk.start, end, last_ts))
            return
        chunk.items.sort(key=itemgetter(0))  # stable: equal times keep their file order
        if last:
            self._sources.append(chunk.items)
            return
        spill = tempfile.TemporaryFile()  # noqa: SIM115 - a source until close()
        for _ts, raw in chunk.items:
            spill.write(raw + b"\n")
        spill.flush()
        self._sources.append(spill)

    def events(self) -> Iterator[dict[str, Any]]:
        """The selected events, sorted by ts; equal times in file order."""
        streams = [self._stream(source) for source in self._sources]
        merged = streams[0] if len(streams) == 1 else heapq.merge(*streams, key=itemgetter(0))
        for _ts, event in merged:
            yield event

    def _stream(self, source: _Range | IO[bytes] | list[tuple[str, bytes]]) -> Iterator[Timed]:
        if isinstance(source, _Range):
            return _events(self._fd, source.start, source.end, self.select)
        if isinstance(source, list):
            return (pair for pair in (_timed(raw) for _ts, raw in source) if pair is not None)
        source.seek(0)
        return _events(source.fileno(), 0, os.fstat(source.fileno()).st_size, None)

    def corrupt_lines(self) -> Iterator[CorruptLine]:
        for line, reason, preview in self._corrupt:
            yield CorruptLine(line, reason, preview)


def _timed(raw: bytes) -> Timed | None:
    event = parse_line(0, raw)
    return (event["ts"], event) if isinstance(event, dict) else None


def _open(path: Path) -> int:
    try:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise FixloopError("LOG_NOT_FOUND", f"No log file {path}.", path=str(path)) from None
    except OSError as error:
        raise FixloopError(
            "LOG_UNREADABLE", f"Cannot read {path}: {error.strerror or error}.", path=str(path)
        ) from None


def scan_log(path: Path, select: Select | None = None) -> LogScan:
    return LogScan(path, select)
