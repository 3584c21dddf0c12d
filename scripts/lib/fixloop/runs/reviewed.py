"""The last commit reviewed on each branch, for incremental reviews: `.claude/fixloop/reviewed.json`.

A /fixloop:review run that diffs against git notes its branch and HEAD commit here when it starts. Once it
has ended with a review done (success, partial or dry_run_complete), that commit becomes its branch's last
reviewed commit; a run that failed or was cancelled reviewed nothing and is forgotten. Runs are settled
lazily, by the next review that asks, so nothing depends on how a run ended. The file is fixloop's own
(git ignores the folder); an unreadable or unwritable one is treated as empty, which only makes the next
review fuller.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.core import jsoncodec
from fixloop.core.errors import FixloopError
from fixloop.runs.lifecycle import load_run
from fixloop.store import layout
from fixloop.store.atomic import write_atomic
from fixloop.store.ignored import keep_out_of_git
from fixloop.store.locking import file_lock

REVIEWED_FILE = "reviewed.json"
REVIEWED_STATUSES = ("success", "partial", "dry_run_complete")
MAX_PENDING = 100


@dataclass(frozen=True)
class LastReview:
    branch: str
    commit: str
    run_id: str
    ended_at_ms: int


def reviewed_path(root: Path) -> Path:
    return Path(layout.fixloop_dir(root)) / REVIEWED_FILE


def _read(path: Path) -> dict[str, Any]:
    try:
        document = jsoncodec.loads_document(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"version": 1, "branches": {}, "started": {}}
    if not isinstance(document, dict):
        document = {}
    branches = document.get("branches")
    started = document.get("started")
    return {
        "version": 1,
        "branches": branches if isinstance(branches, dict) else {},
        "started": started if isinstance(started, dict) else {},
    }


def _write(path: Path, document: dict[str, Any]) -> None:
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    write_atomic(path, text.encode("utf-8"), durable=False)


def _settle(root: Path, document: dict[str, Any]) -> bool:
    """Move the started runs that ended into `branches`; whether anything changed."""
    changed = False
    for run_id, noted in list(document["started"].items()):
        try:
            state = load_run(root, run_id)
        except FixloopError:
            state = {}
        status = state.get("status")
        if status == "running":
            continue
        del document["started"][run_id]
        changed = True
        ended = state.get("ended_at_ms")
        if status not in REVIEWED_STATUSES or not isinstance(noted, dict) or not isinstance(ended, int):
            continue
        branch, commit = noted.get("branch"), noted.get("commit")
        if not isinstance(branch, str) or not isinstance(commit, str):
            continue
        known = document["branches"].get(branch)
        if isinstance(known, dict) and int(known.get("ended_at_ms") or 0) > ended:
            continue
        document["branches"][branch] = {"commit": commit, "run_id": run_id, "ended_at_ms": ended}
    return changed


def _locked(root: Path) -> file_lock:
    layout.require_own_dir_inside(root, layout.fixloop_dir(root))
    keep_out_of_git(layout.fixloop_dir(root))
    return file_lock(reviewed_path(root))


def last_review(root: Path, branch: str) -> LastReview | None:
    """The commit the last ended review run of `branch` started from, if any."""
    path = reviewed_path(root)
    try:
        with _locked(root):
            document = _read(path)
            if _settle(root, document):
                _write(path, document)
        entry = document["branches"].get(branch)
        if not isinstance(entry, dict) or not isinstance(entry.get("commit"), str):
            return None
        return LastReview(branch, entry["commit"], str(entry.get("run_id") or ""), int(entry["ended_at_ms"]))
    except (OSError, FixloopError, KeyError, TypeError, ValueError):
        # A lock or disk problem, or a file edited by hand: review the whole branch rather than fail.
        return None


def note_started(root: Path, run_id: str, branch: str, commit: str) -> None:
    """Remember that run `run_id` reviews `branch` as of `commit` (it counts once it has ended)."""
    path = reviewed_path(root)
    try:
        with _locked(root):
            document = _read(path)
            started = document["started"]
            started[run_id] = {"branch": branch, "commit": commit}
            for stale in list(started)[:-MAX_PENDING]:
                del started[stale]
            _write(path, document)
    except (OSError, FixloopError):  # the run goes on; the branch's next review is only fuller
        return
