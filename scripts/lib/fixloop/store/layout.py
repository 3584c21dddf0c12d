"""Where fixloop keeps a run inside a project, as plain path strings.

Hooks find the run of a session on every fixloop subagent call, so this module uses os.path and string
checks only (no pathlib, no `re`). fixloop.store.paths gives the same places as Path objects to the engine.
"""

from __future__ import annotations

import os

from fixloop.core.errors import FixloopError
from fixloop.core.ids import check_run_id, is_run_id

STATE_FILE = "state.json"
SESSION_ID_MAX_LENGTH = 128
_SESSION_ID_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

WORKFLOW_NAME_MAX_LENGTH = 64
_WORKFLOW_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
# Characters a shell would act on; a path holding one is refused rather than quoted.
_SHELL_METACHARACTERS = frozenset(";|&$`<>\n\r\x00")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

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


def logs_dir(root: PathText, workflow: str) -> str:
    if not (
        0 < len(workflow) <= WORKFLOW_NAME_MAX_LENGTH
        and _WORKFLOW_CHARACTERS.issuperset(workflow)
        and workflow[0] not in "_-"
    ):
        raise FixloopError(
            "INVALID_WORKFLOW",
            f"Invalid workflow name {workflow!r}: use letters, digits, '-' and '_'.",
            received=workflow,
        )
    return os.path.join(root, ".claude", "logs", "fixloop", workflow)


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


def bind_session(root: PathText, claude_session_id: str, run_id: str) -> str:
    """Record `run_id` as the active run of a Claude Code session; returns the index file."""
    if not is_session_id(claude_session_id):
        raise FixloopError(
            "INVALID_SESSION_ID",
            "Invalid Claude Code session id: expected 1-128 of A-Z a-z 0-9 _ -.",
            received=claude_session_id,
        )
    check_run_id(run_id)
    from fixloop.store.atomic import write_atomic  # only writers pay for this import

    require_own_dir_inside(root, session_index_dir(root))
    target = os.path.join(session_index_dir(root), claude_session_id)
    write_atomic(target, f"{run_id}\n".encode("ascii"))
    return target


def prompt_path(root: PathText, claude_session_id: str) -> str:
    """Where the UserPromptSubmit hook keeps a session's last `/fixloop:` prompt (a JSON document); a
    session id holds no dot, so this is never a session index file."""
    if not is_session_id(claude_session_id):
        raise FixloopError(
            "INVALID_SESSION_ID",
            "Invalid Claude Code session id: expected 1-128 of A-Z a-z 0-9 _ -.",
            received=claude_session_id,
        )
    return os.path.join(session_index_dir(root), f"{claude_session_id}.prompt")


def resolve_inside(root: PathText, user_path: PathText) -> Path:
    """The absolute path `user_path` names, relative to `root` unless absolute, refused unless it stays
    inside `root` (after `..` and symbolic links are resolved) and is free of shell metacharacters."""
    from pathlib import Path

    text = os.fspath(user_path)
    if not text.strip():
        raise _outside(text, "empty path")
    unsafe = sorted(set(text) & _SHELL_METACHARACTERS)
    if unsafe:
        raise _outside(text, f"shell metacharacters {''.join(unsafe)!r}")
    real_root = Path(root).resolve()
    candidate = Path(text)
    resolved = (candidate if candidate.is_absolute() else real_root / candidate).resolve()
    if resolved != real_root and real_root not in resolved.parents:
        raise _outside(text, f"outside the project {real_root}")
    return resolved


def require_own_dir_inside(root: PathText, directory: PathText) -> None:
    """Refuse (FIXLOOP_DIR_OUTSIDE_PROJECT) one of fixloop's folders in the project (`.claude/fixloop`, a
    run's folder, `.claude/logs/fixloop/<workflow>`, ...) that a symbolic link anywhere on its way
    (`.claude` included), or directly in it (`runs`, `sessions`, a run's `tasks` or `snapshots`), sends
    outside it: a repository, or a command run in it, could otherwise make fixloop write wherever it likes.
    Deeper folders are fixloop's own: it empties them with shutil.rmtree, which refuses a link."""
    _require_inside(root, directory)
    try:
        entries = list(os.scandir(directory))
    except OSError:  # not there yet (or not a folder): nothing in it can lead anywhere
        return
    for entry in entries:
        if entry.is_symlink():
            _require_inside(root, entry.path)


def _require_inside(root: PathText, directory: PathText) -> None:
    # realpath follows every link on the way, dangling ones included, so a folder not yet created counts
    real_root = os.path.realpath(root)
    resolved = os.path.realpath(directory)
    if resolved != real_root and not resolved.startswith(real_root.rstrip(os.sep) + os.sep):
        raise FixloopError(
            "FIXLOOP_DIR_OUTSIDE_PROJECT",
            f"{directory} leads outside the project (to {resolved}) through a symbolic link; fixloop writes "
            "its state and logs only inside the project. Remove the link.",
            path=os.fspath(directory),
            resolved=resolved,
        )


def _outside(user_path: str, reason: str) -> FixloopError:
    return FixloopError(
        "PATH_OUTSIDE_PROJECT",
        f"Refused path {user_path!r}: {reason}.",
        received=user_path,
        reason=reason,
    )
