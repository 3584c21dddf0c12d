"""Reading JSONL: whole small files (json_objects) and large files line by line in bounded memory."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fixloop.store.jsonl import file_lines, json_objects


def lines_of(
    path: Path, start: int = 0, end: int | None = None, **options: int
) -> list[tuple[int, bytes | None]]:
    fd = os.open(path, os.O_RDONLY)
    try:
        return list(file_lines(fd, start, os.fstat(fd).st_size if end is None else end, **options))
    finally:
        os.close(fd)


def test_json_objects_skips_torn_and_foreign_lines() -> None:
    assert json_objects(b'{"a":1}\n{"b":\n[1]\n\n{"c":2}') == [{"a": 1}, {"c": 2}]


def test_lines_with_the_offset_past_each(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"one\n\ntwo\r\nlast")
    assert lines_of(path) == [(4, b"one"), (5, b""), (10, b"two\r"), (14, b"last")]
    assert lines_of(path, block=2) == [(4, b"one"), (5, b""), (10, b"two\r"), (14, b"last")]
    assert lines_of(path, 5, 10) == [(10, b"two\r")]
    assert lines_of(path, 0, 0) == []


def test_a_line_over_the_limit_is_skipped_not_held(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"short\n" + b"x" * 50 + b"\nok\n" + b"y" * 30)
    assert lines_of(path, block=7, max_line=20) == [(6, b"short"), (57, None), (60, b"ok"), (90, None)]
    assert lines_of(path, block=100, max_line=20) == [(6, b"short"), (57, None), (60, b"ok"), (90, None)]


@given(
    data=st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\n\n", b"\xff", b"defgh"]), max_size=40).map(
        b"".join
    ),
    block=st.integers(1, 9),
    max_line=st.integers(1, 12),
)
def test_lines_match_a_split_of_the_whole_file(data: bytes, block: int, max_line: int) -> None:
    """Whatever the block size: the lines of data.split(b"\\n") (no empty last line), each too long one
    as None, and offsets that add up."""
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    expected: list[tuple[int, bytes | None]] = []
    offset = 0
    for part in parts:
        offset = min(offset + len(part) + 1, len(data))
        expected.append((offset, part if len(part) <= max_line else None))
    with tempfile.TemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        assert list(file_lines(handle.fileno(), 0, len(data), block=block, max_line=max_line)) == expected
