"""Where fixloop keeps a run inside a project, as plain path strings.

Hooks find the run of a session on every fixloop subagent call, so this module uses os.path and string
checks only (no pathlib, no `re`). fixloop.store.paths gives the same places as Path objects to the engine.
"""

from __future__ import annotations

import os

from fixloop.core.ids import check_run_id, is_run_id

STATE_FILE = "state.json"
SESSION_ID_MAX_LENGTH = 128
_SESSION_ID_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

TYPE_CHECKING = False
if TYPE_CHECKING:
    PathText = str | os.PathLike[str]


def project_root(start: PathText | None = None) -> str:
    """$CLAUDE_PROJECT_DIR if set; else the nearest directory holding `.git` at or above `start`
    (default: the working directory); else `start` itself. Always absolute, symbolic links resolved."""
    configured = os.environ.get("CLAUDE_PROJECT_DIR")
    if configured:
        return os.path.realpath(configured)
    base = os.path.realpath(start if start is not None else os.getcwd())
    directory = base
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return base
        directory = parent


def fixloop_dir(root: PathText) -> str:
    return os.path.join(root, ".claude", "fixloop")


def runs_dir(root: PathText) -> str:
    return os.path.join(fixloop_dir(root), "runs")


def run_dir(root: PathText, run_id: str) -> str:
    return os.path.join(runs_dir(root), check_run_id(run_id))


def state_path(root: PathText, run_id: str) -> str:
    return os.path.join(run_dir(root, run_id), STATE_FILE)


def session_index_dir(root: PathText) -> str:
    return os.path.join(fixloop_dir(root), "sessions")


def is_session_id(value: object) -> bool:
    """1-128 of A-Z a-z 0-9 _ - (a session id names a file in the session index)."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= SESSION_ID_MAX_LENGTH
        and _SESSION_ID_CHARACTERS.issuperset(value)
    )


def run_for_session(root: PathText, claude_session_id: str) -> str | None:
    """The active run of a Claude Code session, or None if unknown (or the session id is unsafe)."""
    if not is_session_id(claude_session_id):
        return None
    try:
        with open(os.path.join(session_index_dir(root), claude_session_id), "rb") as handle:
            value = handle.read().decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return value if is_run_id(value) else None
