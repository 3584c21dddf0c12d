"""Which lines of a pull request's diff can carry a review comment, from the `patch` of each changed file.

GitHub takes a comment on the new side (`side: RIGHT`) at a line the diff shows: an added line or a
context line of a hunk. A line outside every hunk cannot be commented on: its finding goes into the summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def commentable_lines(patch: str) -> frozenset[int]:
    """The new-side line numbers that `patch` (one file's unified diff, hunks only) shows."""
    lines: set[int] = set()
    current: int | None = None
    for text in patch.splitlines():
        hunk = _HUNK.match(text)
        if hunk:
            current = int(hunk[1])
            continue
        if current is None or text.startswith("\\"):
            continue  # before the first hunk, or "\ No newline at end of file"
        if text.startswith("-"):
            continue
        lines.add(current)
        current += 1
    return frozenset(lines)


class DiffMap:
    """The changed files of a pull request and the lines of each that a comment can be put on."""

    def __init__(self, files: Iterable[Mapping[str, Any]]) -> None:
        self.lines: dict[str, frozenset[int]] = {}
        self.status: dict[str, str] = {}
        for item in files:
            name = str(item.get("filename") or "")
            if not name:
                continue
            patch = item.get("patch")
            self.lines[name] = commentable_lines(patch) if isinstance(patch, str) else frozenset()
            self.status[name] = str(item.get("status") or "")

    def covers(self, path: str, first: int, last: int) -> bool:
        """Whether every line from `first` to `last` of `path` is on the diff (one comment may span them)."""
        shown = self.lines.get(path)
        return bool(shown) and all(line in shown for line in range(first, last + 1))  # type: ignore[operator]
