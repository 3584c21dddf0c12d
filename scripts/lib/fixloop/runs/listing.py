"""Finding a project's runs: every run on disk, newest first, and the name `latest` for the newest.

Every command that takes a RUN resolves it here (`resolve_run`), so `latest` means the same run
everywhere: the run started most recently (its `started_at_ms`), whatever session started it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.core.ids import check_run_id, is_run_id
from fixloop.runs.lifecycle import load_run
from fixloop.store import layout

LATEST = "latest"


@dataclass(frozen=True)
class UnreadableRun:
    run_id: str
    code: str
    message: str


@dataclass(frozen=True)
class RunStates:
    states: list[dict[str, Any]]  # newest first
    unreadable: list[UnreadableRun]


def run_ids(root: Path) -> list[str]:
    """The ids of the runs that have a state file, in no particular order."""
    directory = layout.runs_dir(root)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return [name for name in names if is_run_id(name) and os.path.isfile(layout.state_path(root, name))]


def _started_key(state: dict[str, Any]) -> tuple[int, str, str]:
    started = state.get("started_at_ms")
    ms = started if isinstance(started, int) and not isinstance(started, bool) else 0
    return ms, str(state.get("created_at") or ""), str(state.get("run_id") or "")


def run_states(root: Path) -> RunStates:
    """Every run's state, newest first; a state that cannot be read is listed apart, never fatal."""
    states: list[dict[str, Any]] = []
    unreadable: list[UnreadableRun] = []
    for run_id in sorted(run_ids(root)):
        try:
            states.append(load_run(root, run_id))
        except FixloopError as error:
            unreadable.append(UnreadableRun(run_id, error.code, error.message))
    states.sort(key=_started_key, reverse=True)
    return RunStates(states, unreadable)


def newest_run_id(root: Path) -> str:
    """The id of the run started most recently; NO_RUNS when the project has none."""
    found = run_states(root).states
    if not found:
        raise FixloopError(
            "NO_RUNS",
            f"No run in {Path(layout.runs_dir(root))}: start one first (e.g. /fixloop:review).",
            runs_dir=str(Path(layout.runs_dir(root))),
        )
    return str(found[0]["run_id"])


def resolve_alias(root: Path, value: str) -> str:
    """`latest` as the newest run's id; anything else unchanged (a run id, or a log file path)."""
    return newest_run_id(root) if value == LATEST else value


def resolve_run(root: Path, value: str) -> str:
    """A RUN argument: a run id, or `latest` for the run started most recently (INVALID_RUN_ID
    otherwise)."""
    resolved = resolve_alias(root, value)
    try:
        return check_run_id(resolved)
    except FixloopError as error:
        raise FixloopError(
            error.code,
            f"{error.message[:-1]} or {LATEST!r}.",
            **error.details,
        ) from None
