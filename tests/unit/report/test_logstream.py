"""Log events streamed in time order: exactly a stable sort of the whole log by ts, whatever the chunks,
with damaged lines reported in file order and temporary files only for chunks out of order."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixloop.report import logstream
from fixloop.report.logstream import CorruptLine, scan_log

TIMES = [f"2025-12-06T10:00:0{second}.000Z" for second in range(6)]


def event(number: int, ts: str, level: str = "I", kind: str = "STEP") -> dict[str, Any]:
    return {"ts": ts, "level": level, "type": kind, "session_id": "a1b2c3d4", "n": number}


def line(item: dict[str, Any] | bytes) -> bytes:
    return item if isinstance(item, bytes) else json.dumps(item, separators=(",", ":")).encode()


def write(path: Path, items: Sequence[dict[str, Any] | bytes]) -> None:
    path.write_bytes(b"".join(line(item) + b"\n" for item in items))


@pytest.fixture
def spills(monkeypatch: pytest.MonkeyPatch) -> list[IO[bytes]]:
    """The temporary files the scans make for chunks out of order (unnamed files: the list is the way to
    see them)."""
    made: list[IO[bytes]] = []
    original = tempfile.TemporaryFile

    def recorded() -> IO[bytes]:
        handle = original()
        made.append(handle)
        return handle

    monkeypatch.setattr(tempfile, "TemporaryFile", recorded)
    return made


def small_chunks(monkeypatch: pytest.MonkeyPatch, events: int) -> None:
    monkeypatch.setattr(logstream, "CHUNK_EVENTS", events)


def test_an_ordered_log_is_streamed_from_the_file_itself(
    tmp_path: Path, spills: list[IO[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    small_chunks(monkeypatch, 2)
    monkeypatch.setattr(logstream, "SPOOL_BYTES", 0)  # damaged lines go to a file at once
    items = [event(number, TIMES[number // 2]) for number in range(11)]
    write(tmp_path / "run.jsonl", items)
    with scan_log(tmp_path / "run.jsonl") as scan:
        assert spills == []  # six chunks in order: no copy of any
        assert list(scan.events()) == items
        assert list(scan.events()) == items  # as often as wanted
        assert (scan.count, scan.corrupt_count) == (11, 0)


def test_chunks_out_of_order_are_sorted_spilled_and_merged(
    tmp_path: Path, spills: list[IO[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    small_chunks(monkeypatch, 3)
    order = [5, 4, 0, 1, 2, 3, 0, 5, 1]  # ties across chunks keep their file order
    items = [event(number, TIMES[slot]) for number, slot in enumerate(order)]
    write(tmp_path / "run.jsonl", items)
    with scan_log(tmp_path / "run.jsonl") as scan:
        assert list(scan.events()) == sorted(items, key=lambda item: item["ts"])
    # chunks [5 4 0] and [0 5 1] out of order: the first waits in a file, the last in memory; [1 2 3] is
    # read from the log itself
    assert len(spills) == 1
    assert spills[0].closed


def test_damaged_lines_in_file_order_and_events_filtered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_chunks(monkeypatch, 2)
    monkeypatch.setattr(logstream, "MAX_LINE_BYTES", 200)
    items: list[dict[str, Any] | bytes] = [
        event(0, TIMES[3], "E", "ERROR"),
        b"not json",
        event(1, TIMES[1]),
        b"   ",
        b'{"ts": 5, "level": "I", "type": "X"}',
        b'{"ts": "' + b"9" * 300 + b'", "level": "E", "type": "ERROR"}',
        event(2, TIMES[0], "E", "AGENT_FAILURE"),
        b"[]",
        event(3, TIMES[2], "E", "ERROR"),
    ]
    write(tmp_path / "run.jsonl", items)
    with scan_log(tmp_path / "run.jsonl", lambda item: item["level"] == "E") as scan:
        assert [item["n"] for item in scan.events()] == [2, 3, 0]
        assert (scan.count, scan.corrupt_count) == (3, 4)
        assert list(scan.corrupt_lines()) == [
            CorruptLine(2, "invalid JSON: Expecting value", "not json"),
            CorruptLine(5, "missing ts, level or type", '{"ts": 5, "level": "I", "type": "X"}'),
            CorruptLine(6, "line longer than 200 bytes", ""),
            CorruptLine(8, "not a JSON object", "[]"),
        ]


def test_lines_appended_during_a_scan_are_not_part_of_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    write(path, [event(0, TIMES[1]), event(1, TIMES[0])])
    with scan_log(path) as scan:
        with path.open("ab") as log:
            log.write(line(event(2, TIMES[0])) + b"\n")
        assert [item["n"] for item in scan.events()] == [1, 0]
        assert scan.count == 2


LINES = st.one_of(
    st.tuples(st.sampled_from(TIMES), st.sampled_from("IEW")),
    st.sampled_from([b"", b"{", b"[1]", b'{"ts":"x"}', b"\xff"]),
)


@settings(max_examples=150, deadline=None)
@given(
    drawn=st.lists(LINES, max_size=40),
    chunk=st.integers(1, 6),
    only_errors=st.booleans(),
)
def test_any_log_streams_as_a_stable_sort_of_the_whole_log(
    drawn: list[tuple[str, str] | bytes], chunk: int, only_errors: bool
) -> None:
    items: list[dict[str, Any] | bytes] = [
        value if isinstance(value, bytes) else event(number, value[0], value[1])
        for number, value in enumerate(drawn)
    ]
    events = [item for item in items if isinstance(item, dict) and (not only_errors or item["level"] == "E")]
    damaged = [
        number for number, item in enumerate(items, start=1) if isinstance(item, bytes) and item != b""
    ]
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(logstream, "CHUNK_EVENTS", chunk)
        path = Path(folder) / "run.jsonl"
        write(path, items)
        select = (lambda item: item["level"] == "E") if only_errors else None
        with scan_log(path, select) as scan:
            assert list(scan.events()) == sorted(events, key=lambda item: item["ts"])
            assert scan.count == len(events)
            assert [corrupt.line for corrupt in scan.corrupt_lines()] == damaged
