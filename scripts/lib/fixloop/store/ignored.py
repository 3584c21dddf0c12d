"""fixloop's own folders in a project keep themselves out of git: each holds a `.gitignore` of `*`.

Standard library only: the prompt hook creates the session folder too.
"""

from __future__ import annotations

import os

IGNORE_FILE = ".gitignore"
IGNORE_TEXT = b"# fixloop's run state and logs: kept out of git by fixloop itself.\n*\n"


def keep_out_of_git(directory: str) -> None:
    """Create `directory` if needed and a `.gitignore` ignoring everything in it, unless one is there.

    An existing `.gitignore` is the user's choice and is left as it is; an I/O failure is raised.
    """
    os.makedirs(directory, exist_ok=True)
    try:
        fd = os.open(os.path.join(directory, IGNORE_FILE), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return
    try:
        os.write(fd, IGNORE_TEXT)
    finally:
        os.close(fd)
