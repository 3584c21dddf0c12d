"""Finding a project's runs: every run on disk, newest first, and the name `latest` for the newest.

Every command that takes a RUN resolves it here (`resolve_run`), so `latest` means the same run
everywhere: the run started most recently (its `started_at_ms`), whatever session started it.

The facts come from the run index (store.runindex): a state is parsed only when it is new or changed
since the index last read it, so listing a project's runs costs a directory listing and a stat per run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from fixloop.core.errors import FixloopError
from fixloop.core.ids import check_run_id, is_run_id
from fixloop.runs.lifecycle import load_run
from fixloop.store import layout, runindex

LATEST = "latest"
# What a caller adds to the facts of a run it lists (report.runlist: why it stopped, what remains).
ExtraFacts = Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class UnreadableRun:
    run_id: str
    code: str
    message: str


@dataclass(frozen=True)
class ListedRuns:
    facts: list[dict[str, Any]]  # newest first: run_facts of each run, with the extra facts when asked
    unreadable: list[UnreadableRun]  # by run id


def run_ids(root: Path) -> list[str]:
    """The ids of the runs that have a state file, in no particular order."""
    directory = layout.runs_dir(root)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return [name for name in names if is_run_id(name) and os.path.isfile(layout.state_path(root, name))]


def run_facts(state: Mapping[str, Any]) -> dict[str, Any]:
    """What the index keeps of every run: enough to sort the runs, filter them and name their times."""
    started = state.get("started_at_ms")
    ended = state.get("ended_at_ms")
    return {
        "run_id": state["run_id"],
        "workflow": state.get("workflow"),
        "status": state.get("status"),
        "created_at": state.get("created_at"),
        "started_at_ms": started if _is_int(started) else None,
        "ended_at_ms": ended if _is_int(ended) else None,
    }


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _started_key(facts: Mapping[str, Any]) -> tuple[int, str, str]:
    started = facts.get("started_at_ms")
    return (
        started if _is_int(started) else 0,
        str(facts.get("created_at") or ""),
        str(facts.get("run_id") or ""),
    )


def listed_runs(root: Path, extra: ExtraFacts | None = None) -> ListedRuns:
    """Every run's facts, newest first (with `extra`'s when given); a state that cannot be read is listed
    apart, never fatal. Reads only the states the run index cannot vouch for, then saves the index."""
    kept = runindex.load(root)
    entries: dict[str, dict[str, Any]] = {}
    unreadable: list[UnreadableRun] = []
    for run_id in sorted(run_ids(root)):
        read_at = runindex.now_ns()
        current = runindex.signature(layout.state_path(root, run_id))
        if current is None:
            continue  # deleted while we looked
        entry = kept.get(run_id)
        if (
            entry is not None
            and runindex.trusted(entry, current)
            and entry["facts"].get("run_id") == run_id
            and (extra is None or "extra" in entry["facts"])
        ):
            entries[run_id] = entry
            continue
        try:
            state = load_run(root, run_id)
            facts = run_facts(state)
            if extra is not None:
                facts["extra"] = extra(state)
        except FixloopError as error:
            unreadable.append(UnreadableRun(run_id, error.code, error.message))
            continue
        entries[run_id] = runindex.new_entry(current, read_at, facts)
    if entries != kept:
        runindex.save(root, entries)
    newest_first = sorted((entry["facts"] for entry in entries.values()), key=_started_key, reverse=True)
    return ListedRuns(newest_first, unreadable)


def newest_run_id(root: Path) -> str:
    """The id of the run started most recently; NO_RUNS when the project has none."""
    found = listed_runs(root).facts
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
