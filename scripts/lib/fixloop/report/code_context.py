"""The lines of code around a finding, read from the project when the report is made.

A finding names its file; that name comes from an agent, so it is read only when it stays inside the
project, is not under `.git`, and is not ignored by git (an ignored file may hold secrets no report should
carry). Secrets on the lines shown are masked all the same. A file that cannot be shown gives a note that
says why instead of lines.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from fixloop.core.errors import FixloopError
from fixloop.core.redact import redact
from fixloop.store import gitfiles

CONTEXT_LINES = 3
MAX_FILE_BYTES = 2_000_000
MAX_LINE_CHARS = 400


@dataclass(frozen=True)
class CodeLine:
    number: int
    text: str
    flagged: bool  # inside the finding's line range


@dataclass(frozen=True)
class CodeContext:
    lines: tuple[CodeLine, ...] = ()
    note: str | None = None  # why there are no lines


def _inside(root: Path, file: str) -> str | None:
    """`file` as a path relative to `root` after links are followed, or None when it leaves `root`."""
    if not file or "\0" in file:
        return None
    base = os.path.realpath(root)
    resolved = os.path.realpath(os.path.join(base, file))
    if os.path.commonpath([base, resolved]) != base:
        return None
    return Path(os.path.relpath(resolved, base)).as_posix()


def ignored_files(root: Path, files: Iterable[str]) -> set[str]:
    """Those of `files` that git ignores, as paths relative to `root` (links followed); none when `root`
    is not in a git work tree."""
    names = sorted({name for name in (_inside(root, file) for file in files) if name})
    if not names:
        return set()
    try:
        result = gitfiles.run_git(
            root,
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--",
            *(f":(literal){name}" for name in names),
            check=False,
        )
    except FixloopError:
        return set()
    if result.returncode != 0:
        return set()
    return {name for name in result.stdout.decode("utf-8", "surrogateescape").split("\0") if name}


def _source(root: Path, file: str, ignored: Collection[str]) -> Path | str:
    """The file to read, or the note that says why it is not read."""
    relative = _inside(root, file)
    if relative is None:
        return "not shown: the file is outside the project"
    if ".git" in Path(relative).parts:
        return "not shown: the file is inside .git"
    if relative in ignored:
        return "not shown: git ignores the file"
    path = Path(root).resolve() / relative
    if not path.is_file():
        return "not shown: the file does not exist now"
    return path


def code_context(
    root: Path,
    file: str,
    line: int | None,
    end_line: int | None = None,
    *,
    ignored: Collection[str] = (),
    around: int = CONTEXT_LINES,
) -> CodeContext:
    """The lines `line`..`end_line` of `file` with `around` lines either side; `ignored`: the files git
    ignores (ignored_files), which are not read."""
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        return CodeContext(note="no line given")
    source = _source(root, file, ignored)
    if isinstance(source, str):
        return CodeContext(note=source)
    try:
        with source.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        return CodeContext(note=f"not shown: {error.strerror or error}")
    if len(data) > MAX_FILE_BYTES:
        return CodeContext(note="not shown: the file is too large")
    if b"\0" in data:
        return CodeContext(note="not shown: a binary file")
    text_lines = data.decode("utf-8", "replace").splitlines()
    if line > len(text_lines):
        return CodeContext(note=f"line {line} is past the end of the file ({len(text_lines)} lines now)")
    last = max(line, end_line if isinstance(end_line, int) else line)
    first_shown = max(1, line - around)
    last_shown = min(len(text_lines), last + around)
    return CodeContext(
        lines=tuple(
            CodeLine(number, redact(text_lines[number - 1][:MAX_LINE_CHARS]), line <= number <= last)
            for number in range(first_shown, last_shown + 1)
        )
    )
