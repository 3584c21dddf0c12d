"""The config's `review_include` / `review_exclude` globs, applied to project-relative POSIX paths.

Syntax: `*` matches within one folder name, `**` any number of folders, `?` one character, `[abc]` /
`[!abc]` one of (or none of) a set. A glob without a `/` matches a name in any folder (`*.min.js`); a glob
with one matches from the project root (`src/**/*.py`, `/setup.py`). A glob that matches
a folder matches everything in it (`vendor`, `build/`). A file is reviewed when it matches some include
glob (or there are none) and no exclude glob.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache


def _class(glob: str, start: int) -> tuple[str, int] | None:
    """The regex of the `[...]` set starting at `start`, and the index after it; None when unclosed."""
    index = start + 1
    if index < len(glob) and glob[index] in "!^":
        index += 1
    if index < len(glob) and glob[index] == "]":
        index += 1
    end = glob.find("]", index)
    if end == -1:
        return None
    body = glob[start + 1 : end]
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    escaped = body.replace("\\", "\\\\").replace("[", "\\[")
    return ("[^/" if negate else "[") + escaped + "]", end + 1


def _translate(glob: str) -> str:
    parts: list[str] = []
    index = 0
    while index < len(glob):
        char = glob[index]
        if glob.startswith("**/", index):
            parts.append("(?:[^/]*/)*")
            index += 3
        elif glob.startswith("**", index):
            parts.append(".*")
            index += 2
        elif char == "*":
            parts.append("[^/]*")
            index += 1
        elif char == "?":
            parts.append("[^/]")
            index += 1
        elif char == "[" and (found := _class(glob, index)) is not None:
            parts.append(found[0])
            index = found[1]
        else:
            parts.append(re.escape(char))
            index += 1
    return "".join(parts)


def normalize_glob(glob: str) -> str:
    """The glob as matched: `\\` as `/`, no `./` or `/` in front, no `/` at the end, `**/` before a name
    without a `/`."""
    value = glob.strip().replace("\\", "/")
    while value.startswith("./"):
        value = value[2:]
    anchored = value.startswith("/")
    value = value.lstrip("/").rstrip("/")
    if not anchored and "/" not in value and not value.startswith("**"):
        value = "**/" + value
    return value


@lru_cache(maxsize=256)
def compile_glob(glob: str) -> re.Pattern[str]:
    return re.compile(_translate(normalize_glob(glob)), re.DOTALL)


def _prefixes(path: str) -> list[str]:
    """`a/b/c.py` -> [`a/b/c.py`, `a/b`, `a`]: the path and every folder above it."""
    parts = path.split("/")
    return ["/".join(parts[:count]) for count in range(len(parts), 0, -1)]


def matches(path: str, glob: str) -> bool:
    """Whether `glob` matches the project-relative POSIX `path` or a folder that holds it."""
    pattern = compile_glob(glob)
    return any(pattern.fullmatch(item) for item in _prefixes(path))


@dataclass(frozen=True)
class PathFilter:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def of(cls, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> PathFilter:
        return cls(tuple(include), tuple(exclude))

    @property
    def active(self) -> bool:
        return bool(self.include or self.exclude)

    def keeps(self, path: str) -> bool:
        if self.include and not any(matches(path, glob) for glob in self.include):
            return False
        return not any(matches(path, glob) for glob in self.exclude)

    def split(self, paths: Sequence[str]) -> tuple[list[str], list[str]]:
        """(kept, left out), each in the order given."""
        kept: list[str] = []
        left_out: list[str] = []
        for path in paths:
            (kept if self.keeps(path) else left_out).append(path)
        return kept, left_out
