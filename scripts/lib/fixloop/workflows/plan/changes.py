"""What a batch changed in the project, measured by the engine, and checking finished tasks off in the plan.

Before each implementer call the engine begins the batch's change (store.edits.begin: a snapshot of the
project and the touch window `plan-batch-<n>`); afterwards the files that differ are the batch's changes. In
a git work tree that sees every file; outside git only the files the tasks name are snapshotted, so the
files the implementer says it changed are added. The plan file itself is never counted: the engine writes it.

A task the implementer says is done counts only when the facts back it (`check_claims`): a fixloop agent's
recorded edit (a `wrote` line of the batch's window) changed a file of the batch, and, when the task names
files, one of those. Otherwise it is unverified (TASK_UNVERIFIED). Runs outside Claude Code (no session: no
hooks, no ledger) are not checked. Work a resumed run finds already there counts too: the files the stopped
runs it resumes changed (their recorded edits, or what the engine measured when they were not checked).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.plans import mark_done, read_text
from fixloop.store import edits, snapshot
from fixloop.store.atomic import write_atomic
from fixloop.workflows.claims import TASK_UNVERIFIED
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.plan.record import absolute_path
from fixloop.workflows.plan.review import EXECUTE, phase_3_files, resumed_runs
from fixloop.workflows.plan.statuses import ids_text

SNAPSHOT_DIR = "plan-batch"
UNVERIFIED_CLAIM = "unverified"  # an answer's task status once the engine refused its `done`


def take_snapshot(ctx: PhaseContext, files: Iterable[str], number: int) -> dict[str, Any] | None:
    """The project's snapshot before batch `number`'s implementer call, with its touch window open; None
    (and a warning) if it fails."""
    otherwise = "The files changed are taken from the implementer's answer."
    return ctx.begin_edits(f"{SNAPSHOT_DIR}-{number}", files, f"batch {number}", otherwise)


def claimed_files(document: Mapping[str, Any] | None) -> set[str]:
    """Every file the implementer's answer says it changed, for the batch and for each task."""
    if document is None:
        return set()
    files = {str(path) for path in document.get("files_modified") or []}
    for item in document.get("tasks") or []:
        files.update(str(path) for path in item.get("files") or [])
    return files


def changed_files(
    ctx: PhaseContext, taken: Mapping[str, Any] | None, document: Mapping[str, Any] | None, plan: str
) -> list[str]:
    """The files changed since `taken` (see the module's rules), without the plan file."""
    claimed = claimed_files(document)
    measured: set[str] | None = None
    if taken is not None:
        try:
            measured = set(snapshot.changed_since(taken))
        except FixloopError as error:
            ctx.warn("SNAPSHOT_FAILED", f"Cannot compare the project with its snapshot: {error.message}")
    if measured is None:
        files = claimed
    elif taken is not None and taken.get("kind") == "git":
        files = measured
    else:
        files = measured | {path for path in claimed if (ctx.root / path).exists()}
    return sorted(path for path in files if path != plan)


def edited_files(
    ctx: PhaseContext, taken: Mapping[str, Any] | None, changed: Iterable[str]
) -> list[str] | None:
    """The `changed` files a fixloop agent's recorded edit wrote in the window of `taken` (which closes);
    None when claims are not checked (no snapshot, or a run outside Claude Code)."""
    if taken is None:
        return None
    edits.end(taken)
    if not ctx.state.get("claude_session_id"):
        return None
    return sorted(set(edits.touched_since(taken)) & set(changed))


def resumed_edits(ctx: PhaseContext, plan: str) -> set[str]:
    """The files, still there, that the stopped runs this one resumes changed in carrying out the plan."""
    found: set[str] = set()
    for run in resumed_runs(ctx, plan):
        slot = ((run.get("flow") or {}).get("phases") or {}).get(str(EXECUTE)) or {}
        edited = (slot.get("data") or {}).get("edited")
        files = edited if isinstance(edited, list) else phase_3_files(run)
        found.update(str(path) for path in files if (ctx.root / str(path)).exists())
    return found - {plan}


def check_claims(
    ctx: PhaseContext,
    record: dict[str, Any],
    answer: dict[str, dict[str, Any]],
    edited: list[str] | None,
    batch_number: int,
) -> list[int]:
    """Turn each `done` the facts do not back into UNVERIFIED_CLAIM (see the module's rules), with its
    reason; a WARNING TASK_UNVERIFIED names them. The ids of the tasks so turned."""
    if edited is None:
        return []
    edited = sorted({*edited, *resumed_edits(ctx, str(record["path"]))})
    named = {int(item["id"]): set(item.get("files") or []) for item in record.get("tasks") or []}
    refused: list[int] = []
    for key, item in answer.items():
        if item["status"] != "done":
            continue
        files = named.get(int(key)) or set()
        if not edited:
            why = "no file of the batch was changed by a recorded edit"
        elif files and not files & set(edited):
            why = f"none of its files ({', '.join(sorted(files))}) was changed by a recorded edit"
        else:
            continue
        item.update(
            status=UNVERIFIED_CLAIM, reason=f"the implementer said done, but {why} ({TASK_UNVERIFIED})"
        )
        refused.append(int(key))
    if refused:
        ctx.warn(
            TASK_UNVERIFIED,
            f"Batch {batch_number}: the task implementer said {ids_text(sorted(refused))} done, but no "
            "recorded edit of their files changed them; not counted as done, not checked off.",
            task_ids=sorted(refused),
            batch=batch_number,
        )
    return sorted(refused)


def check_off(ctx: PhaseContext, record: dict[str, Any], task_ids: list[int]) -> bool:
    """Check the tasks off (`[x]`) in the plan file, changing nothing else in it; a warning when it fails."""
    if not task_ids:
        return True
    path = absolute_path(ctx, record)
    try:
        text = read_text(path)
        marked = mark_done(text, task_ids, source=str(record["path"]))
        if marked != text:
            mode = os.stat(path).st_mode & 0o7777
            write_atomic(path, marked.encode("utf-8"))
            os.chmod(path, mode)
    except (FixloopError, OSError) as error:
        ctx.warn(
            "PLAN_NOT_CHECKED_OFF",
            f"Task(s) {ids_text(task_ids)} are done, but could not be checked off in {record['path']}: "
            f"{getattr(error, 'message', error)}",
            task_ids=task_ids,
        )
        return False
    return True
