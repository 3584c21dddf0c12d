"""What a batch changed in the project, measured by the engine, and checking finished tasks off in the plan.

Before each implementer call the engine snapshots the project (store.snapshot); afterwards the files that
differ are the batch's changes. In a git work tree that sees every file; outside git only the files the
tasks name are snapshotted, so the files the implementer says it changed are added. The plan file itself
is never counted: the engine writes it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.plans import mark_done, read_text
from fixloop.store import layout, snapshot
from fixloop.store.atomic import write_atomic
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.plan.record import absolute_path
from fixloop.workflows.plan.statuses import ids_text

SNAPSHOT_DIR = "plan-batch"


def take_snapshot(ctx: PhaseContext, files: Iterable[str], number: int) -> dict[str, Any] | None:
    """The project's snapshot before batch `number`'s implementer call; None (and a warning) if it fails."""
    directory = Path(layout.run_dir(ctx.root, ctx.run_id)) / "snapshots" / f"{SNAPSHOT_DIR}-{number}"
    try:
        return snapshot.take(ctx.root, directory, sorted(set(files)), now_ms=ctx.now)
    except (FixloopError, OSError) as error:
        ctx.warn(
            "SNAPSHOT_FAILED",
            f"The project could not be snapshotted before batch {number}: {error}. The files changed are "
            "taken from the implementer's answer.",
        )
        return None


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
