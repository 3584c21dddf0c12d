"""Where `fixloop review report --output PATH` writes, and the write itself.

The path is the user's own, named on the command line, so it may be anywhere: a relative path is taken
from the project root, an absolute one as it is. It never reaches a shell. Refused: an empty path, a
directory, and anything inside a `.git` directory (the repository's own data). The file is replaced
atomically: a reader sees the old report or the new one, never half of one.
"""

from __future__ import annotations

import os
from pathlib import Path

from fixloop.core.errors import FixloopError
from fixloop.store.atomic import write_atomic

GIT_DIR_NAME = ".git"


def _refused(output: str, reason: str) -> FixloopError:
    return FixloopError(
        "INVALID_OUTPUT", f"Refused --output {output!r}: {reason}.", received=output, reason=reason
    )


def _inside_git_dir(path: str) -> bool:
    # casefold: on a case-insensitive file system `.GIT/config` is the repository's config file
    parts = Path(path).parts[:-1]
    return any(part.casefold() == GIT_DIR_NAME for part in parts)


def report_destination(root: Path, output: str) -> Path:
    """The absolute file `output` names (relative paths from `root`; a symbolic link is written
    through), or INVALID_OUTPUT."""
    if not output.strip():
        raise _refused(output, "empty path")
    if "\x00" in output:
        raise _refused(output, "NUL character in the path")
    given = os.path.normpath(os.path.join(root, os.path.expanduser(output)))
    resolved = os.path.realpath(given)
    if _inside_git_dir(given) or _inside_git_dir(resolved):
        raise _refused(output, f"inside a {GIT_DIR_NAME} directory")
    if os.path.isdir(resolved):
        raise _refused(output, "a directory")
    return Path(resolved)


def write_report(target: Path, text: str) -> None:
    """Replace `target` with `text` (UTF-8), creating its directory; OUTPUT_UNWRITABLE on failure."""
    try:
        write_atomic(target, text.encode("utf-8"))
    except OSError as error:
        raise FixloopError(
            "OUTPUT_UNWRITABLE",
            f"Cannot write {target}: {error.strerror or error}.",
            path=str(target),
        ) from None
