"""The values of a task's option lines: `files: a.py, src/b.py`, `test: <command>`, `depends: 2, 3`."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"`([^`]*)`|([^\s,;`]+)")
_ANNOTATION = re.compile(r"(?:(?<=\s)|^)\([^()`]*\)(?=[\s,;]|$)")  # "(new)" after a path, not app/(auth)/x
_LINE_REFERENCE = re.compile(r":\d+(?:-\d+)?$")  # src/a.py:12-40
_CONNECTIVES = {"and", "&", "+"}
_WHOLE_CODE_SPAN = re.compile(r"^(`+)([^`]+)\1$")
_DEPENDENCY = re.compile(r"\(?(?:T|#|task)?(\d{1,9})\)?\.?", re.IGNORECASE)
_NO_DEPENDENCIES = {"none", "nothing", "-", "n/a"}


def parse_files(value: str) -> list[str]:
    """Paths separated by commas, semicolons or spaces; `backticks` keep a path with spaces whole."""
    paths: list[str] = []
    for match in _TOKEN.finditer(_ANNOTATION.sub(" ", value)):
        quoted, bare = match.group(1), match.group(2)
        if quoted is not None:
            path = quoted.strip()
        elif bare.lower() in _CONNECTIVES:
            continue
        else:
            path = bare.strip("\"'").rstrip(".")
        path = _LINE_REFERENCE.sub("", path)
        if path and path not in paths:
            paths.append(path)
    return paths


def parse_test(value: str) -> str | None:
    """The command or test id, without backticks around the whole of it; None when empty."""
    value = value.strip()
    match = _WHOLE_CODE_SPAN.match(value)
    if match is not None:
        value = match.group(2).strip()
    return value or None


def parse_depends(value: str) -> tuple[list[int], list[str]]:
    """(ids, words that are not ids) of `2, 3`, `T2 and T3`, `#2`, `tasks 2, 3`, `none`."""
    ids: list[int] = []
    unknown: list[str] = []
    for token in re.split(r"[\s,;]+", value.replace("`", " ")):
        lowered = token.lower()
        if not token or lowered in _CONNECTIVES | {"task", "tasks"} | _NO_DEPENDENCIES:
            continue
        match = _DEPENDENCY.fullmatch(token)
        if match is None:
            unknown.append(token)
        elif int(match.group(1)) not in ids:
            ids.append(int(match.group(1)))
    return ids, unknown


def format_files(paths: tuple[str, ...]) -> str:
    """Paths as parse_files reads them back: bare where that is safe, else in backticks."""
    return ", ".join(path if parse_files(path) == [path] else f"`{path}`" for path in paths)


def format_test(test: str) -> str:
    return test if parse_test(test) == test else f"`{test}`"
