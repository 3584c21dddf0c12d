"""A path an agent names, held to the repository: standard library only, so answer checking can use it
without loading the models."""

from __future__ import annotations

import re

MAX_PATH_CHARS = 1024

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:/")
# C0 and C1 controls, DEL, and the Unicode line and paragraph separators: each breaks a git command, a
# log line or a report row once a path holding it is stored.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def repo_relative_path(value: str) -> str:
    """`./src/a.py` -> `src/a.py`. Refused (ValueError): over MAX_PATH_CHARS characters, control characters,
    absolute paths, `..` parts, and paths inside a `.git` directory."""
    if len(value) > MAX_PATH_CHARS:
        raise ValueError(f"must be at most {MAX_PATH_CHARS} characters long (it has {len(value)})")
    control = _CONTROL.search(value)
    if control is not None:
        raise ValueError(
            f"must not hold control characters such as a NUL byte or a line break "
            f"(U+{ord(control.group()):04X} at character {control.start() + 1})"
        )
    path = value.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    if path.startswith("/") or _WINDOWS_DRIVE.match(path):
        raise ValueError("must be relative to the repository root, not absolute")
    parts = path.split("/")
    if ".." in parts:
        raise ValueError("must stay inside the repository (no '..' parts)")
    if any(part.lower() == ".git" for part in parts):
        raise ValueError("must not be inside a .git directory (git's own files are not the project's)")
    if path.strip("/") in ("", "."):
        raise ValueError("must name a file inside the repository")
    return path
