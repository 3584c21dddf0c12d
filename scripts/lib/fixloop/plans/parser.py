"""Reading a plan's Markdown into a Plan: one pass over the lines, then ids and dependencies are checked."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from fixloop.plans import syntax
from fixloop.plans.model import Plan, Task
from fixloop.plans.options import parse_depends, parse_files, parse_test
from fixloop.plans.problems import Problem, plan_invalid

BOM = "\ufeff"
# A plan is carried out a batch of agents at a time: far fewer tasks than this make a day's work. Reading
# stops at the task past it, so a huge plan costs milliseconds and little memory, never the whole file's.
MAX_PLAN_TASKS = 1000


class _TooManyTasks(Exception):
    def __init__(self, line: int) -> None:
        self.line = line


@dataclass(frozen=True)
class TaskSpot:
    """Where a task's item sits in the text: what mark_done edits."""

    line_index: int  # 0-based
    mark_column: int | None  # the checkbox's mark character; None for a numbered item without one
    text_column: int


@dataclass
class _Draft:
    line: int
    item: syntax.Item
    section: tuple[str, ...]
    spot: TaskSpot
    explicit_id: int | None
    title: str
    files: list[str] = field(default_factory=list)
    test: str | None = None
    test_line: int = 0
    depends: list[tuple[int, int]] = field(default_factory=list)  # (id, line of the depends line)
    body: list[str] = field(default_factory=list)


@dataclass
class _Fence:
    marker: str
    line: int
    in_task: bool


class _Scanner:
    def __init__(self) -> None:
        self.title: str | None = None
        self.seen_heading = False
        self.headings: list[tuple[int, str]] = []
        self.drafts: list[_Draft] = []
        self.current: _Draft | None = None
        self.blank_lines = 0  # held until the next line says whether the task goes on
        self.fence: _Fence | None = None
        self.problems: list[Problem] = []

    def feed(self, index: int, line: str, column_offset: int) -> None:
        number = index + 1
        if self.fence is not None:
            self._inside_fence(line)
            return
        if not line.strip():
            self.blank_lines += 1
            return
        marker = syntax.fence_opening(line)
        current = self.current
        if current is not None and syntax.indent_width(line) > current.item.indent:
            current.body.extend([""] * self.blank_lines)
            self.blank_lines = 0
            if marker is not None:
                self.fence = _Fence(marker, number, in_task=True)
                current.body.append(line)
            elif (found := syntax.option(line)) is not None:
                self._option(current, number, *found)
            else:
                current.body.append(line)
            return
        self.current, self.blank_lines = None, 0
        if marker is not None:
            self.fence = _Fence(marker, number, in_task=False)
        elif (found_heading := syntax.heading(line)) is not None:
            self._heading(*found_heading)
        elif (item := syntax.task_item(line)) is not None:
            self._start_task(index, item, column_offset)

    def finish(self) -> None:
        if self.fence is not None:
            self.problems.append(Problem(self.fence.line, "code fence opened here is never closed"))

    def _inside_fence(self, line: str) -> None:
        assert self.fence is not None
        if self.fence.in_task and self.current is not None:
            self.current.body.extend([""] * self.blank_lines)
            self.blank_lines = 0
            self.current.body.append(line)
        if syntax.closes_fence(line, self.fence.marker):
            self.fence = None

    def _heading(self, level: int, text: str) -> None:
        if not self.seen_heading and level == 1:
            self.title = text
        else:
            while self.headings and self.headings[-1][0] >= level:
                self.headings.pop()
            self.headings.append((level, text))
        self.seen_heading = True

    def _start_task(self, index: int, item: syntax.Item, column_offset: int) -> None:
        if len(self.drafts) == MAX_PLAN_TASKS:
            raise _TooManyTasks(index + 1)
        task_id, title = syntax.explicit_id(item.text)
        if not title:
            self.problems.append(Problem(index + 1, "task has no text"))
        spot = TaskSpot(
            index,
            None if item.mark_column is None else item.mark_column + column_offset,
            item.text_column + column_offset,
        )
        section = tuple(text for _, text in self.headings)
        self.current = _Draft(index + 1, item, section, spot, task_id, title)
        self.drafts.append(self.current)

    def _option(self, draft: _Draft, number: int, name: str, value: str) -> None:
        if name == "files":
            draft.files.extend(path for path in parse_files(value) if path not in draft.files)
        elif name == "test":
            test = parse_test(value)
            if test is not None and draft.test is not None:
                message = f"task has a second test line (the first is on line {draft.test_line})"
                self.problems.append(Problem(number, message))
            elif test is not None:
                draft.test, draft.test_line = test, number
        else:
            ids, unknown = parse_depends(value)
            for word in unknown:
                self.problems.append(Problem(number, f'depends lists "{word}", which is not a task id'))
            draft.depends.extend((task_id, number) for task_id in ids)


def scan(text: str, source: str | None = None) -> tuple[Plan, list[TaskSpot]]:
    """The plan and where each of its tasks sits; PLAN_INVALID naming every problem found."""
    scanner = _Scanner()
    try:
        for index, raw_line in enumerate(syntax.split_lines(text)):
            line = syntax.content_of(raw_line)
            offset = 1 if index == 0 and line.startswith(BOM) else 0
            scanner.feed(index, line[offset:], offset)
    except _TooManyTasks as stop:
        message = (
            f"the plan has more than {MAX_PLAN_TASKS} tasks: split it into plans of at most {MAX_PLAN_TASKS}"
        )
        raise plan_invalid([Problem(stop.line, message)], source) from None
    scanner.finish()
    problems = scanner.problems
    ids = _task_ids(scanner.drafts, problems)
    known = set(ids)
    tasks = [
        _task(draft, task_id, known, problems) for draft, task_id in zip(scanner.drafts, ids, strict=True)
    ]
    if not tasks:
        problems.append(Problem(None, "the plan has no tasks: write them as `- [ ] text` or `1. text` items"))
    if problems:
        raise plan_invalid(problems, source)
    return Plan(scanner.title, tuple(tasks), source), [draft.spot for draft in scanner.drafts]


def parse(text: str, source: str | None = None) -> Plan:
    return scan(text, source)[0]


def _task_ids(drafts: list[_Draft], problems: list[Problem]) -> list[int]:
    ids: list[int] = []
    first_line: dict[int, int] = {}
    for order, draft in enumerate(drafts, start=1):
        task_id = next(value for value in (draft.explicit_id, draft.item.number, order) if value is not None)
        if task_id in first_line:
            message = f"task id {task_id} used twice (first on line {first_line[task_id]})"
            problems.append(Problem(draft.line, message))
        else:
            first_line[task_id] = draft.line
        ids.append(task_id)
    return ids


def _task(draft: _Draft, task_id: int, known: set[int], problems: list[Problem]) -> Task:
    depends: list[int] = []
    for dependency, line in draft.depends:
        if dependency == task_id:
            problems.append(Problem(line, f"task {task_id} depends on itself"))
        elif dependency not in known:
            problems.append(Problem(line, f"depends on task {dependency}, which does not exist"))
        elif dependency not in depends:
            depends.append(dependency)
    return Task(
        id=task_id,
        title=draft.title,
        section=draft.section,
        line=draft.line,
        done=draft.item.done,
        files=tuple(draft.files),
        test=draft.test,
        depends=tuple(depends),
        body=_body(draft.body),
    )


def _body(lines: list[str]) -> str:
    dedented = [line.rstrip() for line in textwrap.dedent("\n".join(lines)).split("\n")]
    while dedented and not dedented[0]:
        dedented.pop(0)
    while dedented and not dedented[-1]:
        dedented.pop()
    return "\n".join(dedented)
