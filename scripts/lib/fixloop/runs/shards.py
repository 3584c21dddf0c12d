"""A large change split into shards for a CI matrix (`fixloop review shards`): each shard at most
`max_files` files, related files together: a directory's files stay in one shard when they fit, and a test
goes with the code it tests (test_x.py / x_test.py / x_test.go / x.test.ts / x.spec.js -> x.*)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

SPEC_NAME = re.compile(r"\.(?:test|spec)\.[^.]+$")  # x.test.ts, x.spec.js
TEST_BASE = re.compile(r"^test_(?P<a>.+)$|^(?P<b>.+?)(?:_test|Tests?)$")  # test_x, x_test, XTest, XTests


def tested_stem(path: str) -> str | None:
    """The stem of the code a test file tests (None: not a test file by its name)."""
    name = PurePosixPath(path).name
    base = name.split(".", 1)[0]
    if SPEC_NAME.search(name):
        return base
    match = TEST_BASE.match(base)
    return None if match is None else match["a"] or match["b"]


def groups(files: Sequence[str]) -> list[list[str]]:
    """The files in groups that belong together, sorted: by directory, each test file moved to the group of
    the one changed code file it tests (same stem, not itself a test) when there is exactly one."""
    by_stem: dict[str, list[str]] = {}
    for path in files:
        if tested_stem(path) is None:
            by_stem.setdefault(PurePosixPath(path).name.split(".", 1)[0], []).append(path)
    grouped: dict[str, list[str]] = {}
    for path in sorted(set(files)):
        stem = tested_stem(path)
        code = by_stem.get(stem, []) if stem is not None else []
        home = code[0] if len(code) == 1 else path
        grouped.setdefault(str(PurePosixPath(home).parent), []).append(path)
    return [sorted(members) for _key, members in sorted(grouped.items())]


def plan_shards(
    files: Sequence[str],
    max_files: int,
    max_lines: int | None = None,
    lines: Mapping[str, int] | None = None,
) -> list[list[str]]:
    """Shards of at most `max_files` files and, with `max_lines`, at most that many `lines` in all (a file
    larger than that is a shard alone): groups packed in order, a group larger than a shard split in runs
    (a test kept next to its code, as the group sorts them apart only by name)."""
    if max_files < 1:
        raise ValueError("max_files must be at least 1")
    limit = max_lines if max_lines is not None else 0
    size = lines or {}

    def weight(members: Sequence[str]) -> int:
        return sum(max(0, size.get(name, 0)) for name in members) if limit else 0

    shards: list[list[str]] = []
    current: list[str] = []
    current_lines = 0
    for group in groups(files):
        for piece in _pieces(group, max_files, limit, size):
            piece_lines = weight(piece)
            too_many = len(current) + len(piece) > max_files
            if current and (too_many or (limit and current_lines + piece_lines > limit)):
                shards.append(current)
                current, current_lines = [], 0
            current = [*current, *piece]
            current_lines += piece_lines
    if current:
        shards.append(current)
    return shards


def _pieces(group: list[str], max_files: int, limit: int, size: Mapping[str, int]) -> list[list[str]]:
    """A group cut into runs that each fit a shard (by files, and by lines when `limit` is set)."""
    pieces: list[list[str]] = []
    piece: list[str] = []
    piece_lines = 0
    for name in group:
        lines = max(0, size.get(name, 0)) if limit else 0
        if piece and (len(piece) >= max_files or (limit and piece_lines + lines > limit)):
            pieces.append(piece)
            piece, piece_lines = [], 0
        piece.append(name)
        piece_lines += lines
    if piece:
        pieces.append(piece)
    return pieces
