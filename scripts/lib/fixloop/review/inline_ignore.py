"""Inline suppressions: a `fixloop: ignore` or `fixloop: ignore[category, ...]` mark in the code.

The mark counts on the finding's line or on the line above it, in any comment syntax (`#`, `//`, `/* */`,
`<!-- -->`, `--`, `;` ...): the engine looks for the mark's text, not for a comment. A bare `ignore` covers
every category; `ignore[a, b]` covers the categories named, compared by category_key (`logic error`,
`Logic_Error` and `logic-error` are one category).

A change must not silence its own review: a mark counts only where it already was before the change, on
a line of the same text in the file at the review's base (`git show BASE:./FILE`; the base is the run's
diff base, else HEAD). A mark the change added (a new file, a new or edited marked line, a mark a fixer
wrote) does not drop the finding: the round names it (`inline_marks_refused`) and the final message says
how to accept the finding (the baseline) or the mark (commit it before the review). In a project that is
not a git repository there is no base to compare with, and marks count as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.store import gitfiles, layout

MAX_FILE_BYTES = 4_000_000
ALL_CATEGORIES = "*"
COUNTED = "counted"  # a mark that was there before the change: the finding is dropped
NEW = "new"  # a mark the change added: the finding stays, and the round names the mark
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


class BaseMarks:
    """The marked lines (stripped) of each file at the review's base, each file read at most once.

    `marked(file)` is None when there is no base to compare with (not a git repository): marks count then.
    """

    def __init__(self, project_dir: Path | None, base: str | None) -> None:
        self.project_dir = project_dir
        self.base = base or "HEAD"
        self._commit: str | bool | None = False  # False: not resolved yet; None: no base
        self._files: dict[str, set[str]] = {}

    def _resolve(self) -> str | None:
        if self._commit is False:
            self._commit = None
            if self.project_dir is not None and gitfiles.is_repository(self.project_dir):
                try:
                    self._commit = gitfiles.check_base(self.project_dir, self.base)
                except FixloopError:
                    self._commit = ""  # a repository without that commit (none yet): every mark is new
        return self._commit if isinstance(self._commit, str) else None

    def marked(self, file: str) -> set[str] | None:
        commit = self._resolve()
        if commit is None:
            return None
        cached = self._files.get(file)
        if cached is None:
            cached = self._read(commit, file) if commit else set()
            self._files[file] = cached
        return cached

    def _read(self, commit: str, file: str) -> set[str]:
        assert self.project_dir is not None
        try:
            shown = gitfiles.run_git(self.project_dir, "show", f"{commit}:./{file}", check=False)
        except FixloopError:
            return set()
        if shown.returncode != 0 or len(shown.stdout) > MAX_FILE_BYTES:
            return set()
        lines = shown.stdout.decode("utf-8", "replace").splitlines()
        return {line.strip() for line in lines if marked_categories(line)}


def inline_mark(issue: Mapping[str, Any], sources: SourceLines, base: BaseMarks | None = None) -> str | None:
    """COUNTED when a mark at the finding's line (or the line above) covers its category and was there
    before the change (see the module), NEW when only marks the change added cover it, else None."""
    lines = sources.lines(str(issue.get("file") or ""))
    if not lines:
        return None
    category = category_key(str(issue.get("category") or ""))
    covering = [
        lines[number - 1]
        for number in _in_range(issue, lines)
        if _covers(marked_categories(lines[number - 1]), category)
    ]
    if not covering:
        return None
    before = base.marked(str(issue.get("file") or "")) if base is not None else None
    if before is None or any(line.strip() in before for line in covering):
        return COUNTED
    return NEW


def inline_ignored(issue: Mapping[str, Any], sources: SourceLines, base: BaseMarks | None = None) -> bool:
    """Whether a mark at the finding's line (or the line above) covers its category and counts."""
    return inline_mark(issue, sources, base) == COUNTED


def _in_range(issue: Mapping[str, Any], lines: list[str]) -> Iterable[int]:
    return (number for number in _finding_lines(issue) if number <= len(lines))


def _covers(covered: set[str], category: str) -> bool:
    return ALL_CATEGORIES in covered or category in covered
