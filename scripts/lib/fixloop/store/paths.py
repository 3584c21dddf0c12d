"""Where fixloop keeps things inside a project, and checks on paths that users pass in."""

from __future__ import annotations

import re
from pathlib import Path

from fixloop.core.errors import FixloopError
from fixloop.core.ids import check_run_id, is_run_id
from fixloop.store import layout

STATE_FILE = layout.STATE_FILE
WORKFLOW_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
# Characters a shell would act on; a path holding one is refused rather than quoted.
_SHELL_METACHARACTERS = frozenset(";|&$`<>\n\r\x00")
is_session_id = layout.is_session_id
run_for_session = layout.run_for_session


def project_root(start: Path | None = None) -> Path:
    """$CLAUDE_PROJECT_DIR if set; else the nearest directory holding `.git` at or above `start`
    (default: the working directory); else `start` itself."""
    return Path(layout.project_root(start))


def fixloop_dir(root: Path) -> Path:
    return Path(layout.fixloop_dir(root))


def runs_dir(root: Path) -> Path:
    return Path(layout.runs_dir(root))


def run_dir(root: Path, run_id: str) -> Path:
    return Path(layout.run_dir(root, run_id))


def state_path(root: Path, run_id: str) -> Path:
    return Path(layout.state_path(root, run_id))


def logs_dir(root: Path, workflow: str) -> Path:
    if not WORKFLOW_PATTERN.fullmatch(workflow):
        raise FixloopError(
            "INVALID_WORKFLOW",
            f"Invalid workflow name {workflow!r}: use letters, digits, '-' and '_'.",
            received=workflow,
        )
    return root / ".claude" / "logs" / "fixloop" / workflow


def session_index_dir(root: Path) -> Path:
    return Path(layout.session_index_dir(root))


def bind_session(root: Path, claude_session_id: str, run_id: str) -> Path:
    """Record `run_id` as the active run of a Claude Code session; returns the index file."""
    if not is_session_id(claude_session_id):
        raise FixloopError(
            "INVALID_SESSION_ID",
            "Invalid Claude Code session id: expected 1-128 of A-Z a-z 0-9 _ -.",
            received=claude_session_id,
        )
    check_run_id(run_id)
    from fixloop.store.statestore import atomic_write_bytes  # only writers pay for this import

    target = session_index_dir(root) / claude_session_id
    atomic_write_bytes(target, f"{run_id}\n".encode("ascii"))
    return target


def resolve_inside(root: Path, user_path: str | Path) -> Path:
    """The absolute path `user_path` names, relative to `root` unless absolute, refused unless it stays
    inside `root` (after `..` and symbolic links are resolved) and is free of shell metacharacters."""
    text = str(user_path)
    if not text.strip():
        raise _outside(user_path, "empty path")
    unsafe = sorted(set(text) & _SHELL_METACHARACTERS)
    if unsafe:
        raise _outside(user_path, f"shell metacharacters {''.join(unsafe)!r}")
    real_root = root.resolve()
    candidate = Path(text)
    resolved = (candidate if candidate.is_absolute() else real_root / candidate).resolve()
    if resolved != real_root and real_root not in resolved.parents:
        raise _outside(user_path, f"outside the project {real_root}")
    return resolved


def _outside(user_path: str | Path, reason: str) -> FixloopError:
    return FixloopError(
        "PATH_OUTSIDE_PROJECT",
        f"Refused path {str(user_path)!r}: {reason}.",
        received=str(user_path),
        reason=reason,
    )


def resolve_run_or_file(root: Path, value: str) -> Path:
    """A JSONL log named by a run id (its state's logging.log_files.jsonl) or by a path in the project."""
    if is_run_id(value):
        from fixloop.store.statestore import StateStore

        try:
            state = StateStore(state_path(root, value)).read()
        except FixloopError as error:
            if error.code == "RUN_NOT_FOUND":
                raise FixloopError(
                    "RUN_NOT_FOUND", f"No run {value} in {runs_dir(root)}.", run_id=value
                ) from None
            raise
        logging = state.get("logging")
        log_files = logging.get("log_files") if isinstance(logging, dict) else None
        jsonl = log_files.get("jsonl") if isinstance(log_files, dict) else None
        if not isinstance(jsonl, str) or not jsonl:
            raise FixloopError("NO_LOG", f"Run {value} has no JSONL log.", run_id=value)
        path = resolve_inside(root, jsonl)
        if not path.is_file():
            raise FixloopError(
                "NO_LOG", f"The log of run {value} is missing: {path}.", run_id=value, path=str(path)
            )
        return path
    path = resolve_inside(root, value)
    if path.suffix != ".jsonl":
        raise FixloopError(
            "INVALID_LOG_PATH", f"{value!r} is neither a run id nor a .jsonl file.", received=value
        )
    if not path.is_file():
        raise FixloopError("LOG_NOT_FOUND", f"No log file {path}.", received=value, path=str(path))
    return path
