"""The run state's `plan` object, and the plan file it is about.

Keys: `path` (the plan file relative to the project, with `/`), `title` and `tasks` (one dict per task,
plan order) are set by the first phase of the run that reads the plan (phase 0, or a later one of a run
started there); `warnings` by phase 1; `batches` (task ids, batch by batch) by phase 2 or 3; `outcomes`
(task id -> its status, see workflows.plan.statuses) and `files_changed` by phase 3.

The plan file is the run's input and its memory: tasks checked `[x]` in it are done, so a run started
again on the same file carries on with the first task that is not.
"""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.plans import Plan, Task, batches, parse, read_text, resume_point
from fixloop.workflows.context import PhaseContext, RunState
from fixloop.workflows.outcomes import PhaseFailed
from fixloop.workflows.plan import statuses

PLAN_KEY = "plan"
COMMAND = "/fixloop:execute-plan"


def plan_record(state: RunState) -> dict[str, Any]:
    record = state.get(PLAN_KEY)
    if not isinstance(record, dict):
        record = {}
        state[PLAN_KEY] = record
    return record


def typed_path(state: RunState) -> str:
    """The plan file as the user named it (`inputs.plan`); quotes around one path are dropped."""
    text = str((state.get("inputs") or {}).get("plan") or "").strip()
    try:
        words = shlex.split(text)
    except ValueError:
        return text
    return words[0] if len(words) == 1 else text


def plan_file(root: Path, typed: str) -> tuple[Path, str]:
    """(absolute path, path relative to the project) of the plan file the user named.

    PLAN_NOT_FOUND when none is named; PLAN_OUTSIDE_PROJECT for a path that leads out of the project (the
    engine writes the file when it checks tasks off)."""
    if not typed:
        raise FixloopError(
            "PLAN_NOT_FOUND", f"Name the plan file to carry out: {COMMAND} PLAN_PATH.", path=None
        )
    project = root.resolve()
    given = Path(typed)
    resolved = (given if given.is_absolute() else project / given).resolve()
    if resolved != project and project not in resolved.parents:
        raise FixloopError(
            "PLAN_OUTSIDE_PROJECT",
            f"The plan file {typed} is outside the project {project}: fixloop checks tasks off in the plan "
            "file, so it must be a file of the project.",
            path=typed,
        )
    return resolved, resolved.relative_to(project).as_posix()


def failure(error: FixloopError) -> PhaseFailed:
    """A plan error as the phase's failure, with its details (line, problems, path)."""
    return PhaseFailed(error.code, error.message, details={**error.details, "recoverable": False})


def task_dict(task: Task) -> dict[str, Any]:
    fields = dataclasses.asdict(task)
    return {**fields, "section": list(task.section), "files": list(task.files), "depends": list(task.depends)}


def task_of(stored: dict[str, Any]) -> Task:
    return Task(
        id=int(stored["id"]),
        title=str(stored["title"]),
        section=tuple(stored.get("section") or ()),
        line=int(stored.get("line") or 0),
        done=bool(stored.get("done")),
        files=tuple(stored.get("files") or ()),
        test=stored.get("test"),
        depends=tuple(int(item) for item in stored.get("depends") or ()),
        body=str(stored.get("body") or ""),
    )


def plan_of(record: dict[str, Any]) -> Plan:
    return Plan(record.get("title"), tuple(task_of(item) for item in record["tasks"]), record.get("path"))


def read_plan(ctx: PhaseContext) -> dict[str, Any] | PhaseFailed:
    """Read the plan file into the run's record (title, tasks, every task's first status)."""
    try:
        absolute, relative = plan_file(ctx.root, typed_path(ctx.state))
    except FixloopError as error:
        return failure(error)
    try:
        plan = parse(read_text(absolute), source=relative)
    except FixloopError as error:
        if error.code == "PLAN_INVALID" and "problems" in error.details:
            message = f"The plan {relative} cannot be read: {error.message}."
            return PhaseFailed(error.code, message, details={**error.details, "recoverable": False})
        return failure(error)
    record = plan_record(ctx.state)
    record.update(path=relative, title=plan.title, tasks=[task_dict(task) for task in plan.tasks])
    statuses.start(record)
    return record


def loaded(ctx: PhaseContext) -> dict[str, Any] | PhaseFailed:
    """The run's record with its plan, read from the file when no phase of this run has read it yet."""
    record = plan_record(ctx.state)
    return record if "tasks" in record else read_plan(ctx)


def batched(ctx: PhaseContext) -> dict[str, Any] | PhaseFailed:
    """The run's record with its batches, cut from the pending tasks when phase 2 did not run."""
    record = loaded(ctx)
    if isinstance(record, PhaseFailed) or "batches" in record:
        return record
    try:
        groups = batches(plan_of(record))
    except FixloopError as error:
        return failure(error)
    record["batches"] = [[task.id for task in group] for group in groups]
    return record


def resume_at(record: dict[str, Any]) -> int | None:
    """The task a run started again on this plan begins with: the first task, in execution order, that is
    not finished (done or already done)."""
    plan = plan_of(record)
    finished = {
        task.id: statuses.outcome(record, task.id).get("status") in statuses.FINISHED for task in plan.tasks
    }
    marked = Plan(plan.title, tuple(dataclasses.replace(task, done=finished[task.id]) for task in plan.tasks))
    try:
        task = resume_point(marked)
    except FixloopError:
        return statuses.first_unfinished(record)
    return None if task is None else task.id


def tasks_by_id(record: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {int(item["id"]): item for item in record.get("tasks") or []}


def absolute_path(ctx: PhaseContext, record: dict[str, Any]) -> Path:
    return ctx.root.resolve() / str(record["path"])
