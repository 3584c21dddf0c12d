"""Inline suppressions: a `fixloop: ignore` or `fixloop: ignore[category, ...]` mark in the code.

The mark counts on the finding's line or on the line above it, in any comment syntax (`#`, `//`, `/* */`,
`<!-- -->`, `--`, `;` ...): the engine looks for the mark's text, not for a comment. A bare `ignore` covers
every category; `ignore[a, b]` covers the categories named, compared by category_key (`logic error`,
`Logic_Error` and `logic-error` are one category).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.store import layout

MAX_FILE_BYTES = 4_000_000
ALL_CATEGORIES = "*"
_MARK = re.compile(r"fixloop:[ \t]*ignore(?:\[([^\]\r\n]*)\]|(?![\w-]))", re.IGNORECASE)
_SEPARATORS = re.compile(r"[\s_-]+")


def category_key(category: str) -> str:
    """A category as the project's rules compare it: lowercase, with spaces, underscores and hyphens alike
    (reviewers write `logic-error`, people `logic error` or `Logic_Error`)."""
    return _SEPARATORS.sub("-", category.strip().lower()).strip("-")


def marked_categories(text: str) -> set[str]:
    """The categories a line's marks cover: {"*"} for a bare mark, empty when the line has none."""
    covered: set[str] = set()
    for match in _MARK.finditer(text):
        names = match.group(1)
        if names is None:
            covered.add(ALL_CATEGORIES)
            continue
        covered.update(category_key(name) for name in names.split(",") if category_key(name))
    return covered


class SourceLines:
    """The lines of the project's files, each file read at most once (unreadable files have none)."""

    def __init__(self, project_dir: Path | None) -> None:
        self.project_dir = project_dir
        self._files: dict[str, list[str]] = {}

    def lines(self, file: str) -> list[str]:
        cached = self._files.get(file)
        if cached is None:
            cached = self._read(file)
            self._files[file] = cached
        return cached

    def _read(self, file: str) -> list[str]:
        if self.project_dir is None:
            return []
        try:
            path = layout.resolve_inside(self.project_dir, file)
            with path.open("rb") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
        except (FixloopError, OSError):
            return []
        if len(raw) > MAX_FILE_BYTES:
            return []
        return raw.decode("utf-8", "replace").splitlines()


def _finding_lines(issue: Mapping[str, Any]) -> list[int]:
    """The lines a finding stands at: its own and each reporting reviewer's, with the line above each."""
    starts: set[int] = set()
    for source in [issue, *(issue.get("sources") or [])]:
        value = source.get("line") if isinstance(source, Mapping) else None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            starts.add(value)
    return sorted({number for start in starts for number in (start, start - 1) if number >= 1})


def inline_ignored(issue: Mapping[str, Any], sources: SourceLines) -> bool:
    """Whether a mark at the finding's line (or the line above) covers its category."""
    lines = sources.lines(str(issue.get("file") or ""))
    if not lines:
        return False
    category = category_key(str(issue.get("category") or ""))
    return any(_covers(marked_categories(lines[number - 1]), category) for number in _in_range(issue, lines))


def _in_range(issue: Mapping[str, Any], lines: list[str]) -> Iterable[int]:
    return (number for number in _finding_lines(issue) if number <= len(lines))


def _covers(covered: set[str], category: str) -> bool:
    return ALL_CATEGORIES in covered or category in covered
