"""What a parsed plan is: its title, its tasks and where it came from."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Task:
    """One task of a plan.

    `section` is the path of headings above the task, without the plan's title heading. `line` is the 1-based
    line of the task's item in the plan text. `body` holds the task's indented continuation lines (without
    its files/test/depends lines), dedented.
    """

    id: int
    title: str
    section: tuple[str, ...] = ()
    line: int = 0
    done: bool = False
    files: tuple[str, ...] = ()
    test: str | None = None
    depends: tuple[int, ...] = ()
    body: str = ""


@dataclass(frozen=True)
class Plan:
    title: str | None
    tasks: tuple[Task, ...]
    source: str | None = None

    @property
    def pending(self) -> tuple[Task, ...]:
        return tuple(task for task in self.tasks if not task.done)

    def task(self, task_id: int) -> Task | None:
        return next((task for task in self.tasks if task.id == task_id), None)
