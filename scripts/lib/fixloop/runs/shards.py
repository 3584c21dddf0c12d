"""A large change split into shards for a CI matrix (`fixloop review shards`): each shard at most
`max_files` files, related files together: a directory's files stay in one shard when they fit, and a test
goes with the code it tests (test_x.py / x_test.py / x_test.go / x.test.ts / x.spec.js -> x.*)."""

from __future__ import annotations

import re
from collections.abc import Sequence
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


def plan_shards(files: Sequence[str], max_files: int) -> list[list[str]]:
    """Shards of at most `max_files` files: groups packed in order, a group larger than a shard split in
    runs of `max_files` (a test kept next to its code, as the group sorts them apart only by name)."""
    if max_files < 1:
        raise ValueError("max_files must be at least 1")
    shards: list[list[str]] = []
    current: list[str] = []
    for group in groups(files):
        if len(group) > max_files:
            pieces = [group[i : i + max_files] for i in range(0, len(group), max_files)]
        else:
            pieces = [group]
        for piece in pieces:
            if current and len(current) + len(piece) > max_files:
                shards.append(current)
                current = []
            current = [*current, *piece]
    if current:
        shards.append(current)
    return shards
