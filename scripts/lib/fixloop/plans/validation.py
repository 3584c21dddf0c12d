"""Checking a parsed plan against the project: empty and repeated tasks, the files tasks name, cycles."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fixloop.plans.cycles import dependency_cycles, describe_cycle
from fixloop.plans.model import Plan, Task

# words that say a task brings files into being, so its files need not exist yet
_CREATES = re.compile(
    r"\b(?:creat\w*|add|adds|added|adding|new|writes?|writing|wrote|written|generat\w*|scaffold\w*|introduc\w*)\b",
    re.IGNORECASE,
)
_PLACEHOLDERS = {"todo", "tbd", "tba", "fixme", "xxx", "wip", "task", "placeholder"}
_GLOB_CHARACTERS = set("*?[")


@dataclass(frozen=True)
class Finding:
    task_id: int | None
    line: int | None
    code: str
    message: str


@dataclass(frozen=True)
class Validation:
    problems: tuple[Finding, ...]  # the plan cannot be carried out as written
    warnings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def validate(plan: Plan, root: Path | str) -> Validation:
    """Problems and warnings of a plan for the project at `root` (each with its task, line and code).

    Problems: PLAN_TASK_EMPTY, PLAN_FILE_MISSING, PLAN_FILE_OUTSIDE_ROOT, PLAN_DEPENDENCY_CYCLE.
    Warnings: PLAN_TASK_DUPLICATE, PLAN_FILE_TO_CREATE, PLAN_DONE_BEFORE_DEPENDENCY.
    """
    by_id = {task.id: task for task in plan.tasks}
    problems: list[Finding] = []
    warnings: list[Finding] = []
    _check_titles(plan, problems, warnings)
    for task in plan.tasks:
        for dependency in task.depends:
            if task.done and dependency in by_id and not by_id[dependency].done:
                message = f"task {task.id} is done but task {dependency}, which it depends on, is not"
                warnings.append(_finding(task, "PLAN_DONE_BEFORE_DEPENDENCY", message))
    _check_files(plan, by_id, Path(root).resolve(), problems, warnings)
    pending_graph = {
        task.id: {dep for dep in task.depends if dep not in by_id or not by_id[dep].done}
        for task in plan.pending
    }
    for cycle in dependency_cycles(pending_graph):
        problems.append(_finding(by_id[cycle[0]], "PLAN_DEPENDENCY_CYCLE", describe_cycle(cycle)))
    return Validation(tuple(problems), tuple(warnings))


def normalized_title(title: str) -> str:
    """A title without case, Markdown emphasis, code marks, extra spaces or end punctuation."""
    words = re.sub(r"[*_`~]+", "", title).casefold().split()
    return " ".join(words).rstrip(".:;!?,") if any(char.isalnum() for char in title) else ""


def creates_files(task: Task) -> bool:
    return _CREATES.search(f"{task.title}\n{task.body}") is not None


def _check_titles(plan: Plan, problems: list[Finding], warnings: list[Finding]) -> None:
    first_by_title: dict[str, Task] = {}
    for task in plan.tasks:
        key = normalized_title(task.title)
        if not key or key in _PLACEHOLDERS:
            message = f'task {task.id} says nothing to do: "{task.title}"'
            problems.append(_finding(task, "PLAN_TASK_EMPTY", message))
        elif key in first_by_title:
            first = first_by_title[key]
            message = f"task {task.id} repeats task {first.id} (line {first.line}): {task.title}"
            warnings.append(_finding(task, "PLAN_TASK_DUPLICATE", message))
        else:
            first_by_title[key] = task


def _check_files(
    plan: Plan, by_id: dict[int, Task], root: Path, problems: list[Finding], warnings: list[Finding]
) -> None:
    """Each file a pending task names exists, or that task, an earlier one or a dependency creates it."""
    created: set[str] = set()
    for task in plan.pending:
        creates = creates_files(task)
        dependencies = [by_id[dep] for dep in task.depends if dep in by_id]
        created_by_dependency = {path for dep in dependencies if creates_files(dep) for path in dep.files}
        for path in task.files:
            state = _file_state(root, path)
            if state == "outside":
                message = f"task {task.id} names {path}, which is outside the project"
                problems.append(_finding(task, "PLAN_FILE_OUTSIDE_ROOT", message))
            elif state == "exists" or path in created or path in created_by_dependency:
                continue
            elif creates:
                created.add(path)
                warnings.append(_finding(task, "PLAN_FILE_TO_CREATE", f"task {task.id} creates {path}"))
            else:
                message = f"task {task.id} names {path}, which does not exist"
                problems.append(_finding(task, "PLAN_FILE_MISSING", message))


def _file_state(root: Path, path: str) -> Literal["exists", "missing", "outside"]:
    """Whether the path exists under root; "outside" when it leads out of root (symlinks followed)."""
    try:
        resolved = (root / path).resolve()
        if resolved != root and root not in resolved.parents:
            return "outside"
        relative = resolved.relative_to(root).as_posix()
        if _GLOB_CHARACTERS & set(relative):
            found = next(iter(root.glob(relative)), None) is not None
        else:
            found = resolved.exists()
    except (OSError, ValueError):  # a loop of symlinks, a NUL byte, a name too long
        return "missing"
    return "exists" if found else "missing"


def _finding(task: Task, code: str, message: str) -> Finding:
    return Finding(task.id, task.line or None, code, message)
