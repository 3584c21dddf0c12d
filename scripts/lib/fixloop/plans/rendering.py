"""Writing a Plan as Markdown that parses back to the same plan."""

from __future__ import annotations

from fixloop.plans import syntax
from fixloop.plans.model import Plan, Task
from fixloop.plans.options import format_files, format_test
from fixloop.plans.problems import Problem, plan_invalid

BODY_INDENT = "    "


def render(plan: Plan) -> str:
    """The plan in the canonical form: `# title`, section headings, then `3. [ ] text` items.

    Section headings start at level 2 (`## Phase 1`), so that none becomes the title; at level 1 under a title
    when sections nest six deep. Each task lists its files, test and depends lines, then its body, indented.
    """
    deepest = max((len(task.section) for task in plan.tasks), default=0)
    first_level = 1 if plan.title is not None and deepest > 5 else 2
    lines: list[str] = [] if plan.title is None else [_heading(1, plan.title), ""]
    current: tuple[str, ...] = ()
    for task in plan.tasks:
        if task.section != current:
            headings = _section_headings(plan, task, current, first_level)
            lines.extend(headings[1:] if not lines or not lines[-1] else headings)
            current = task.section
        lines.extend(_task_lines(task))
    return "\n".join(lines) + "\n"


def _heading(level: int, text: str) -> str:
    return f"{'#' * level} {text}".rstrip()


def _section_headings(plan: Plan, task: Task, current: tuple[str, ...], first_level: int) -> list[str]:
    shared = 0
    while shared < min(len(current), len(task.section)) and current[shared] == task.section[shared]:
        shared += 1
    if not task.section or first_level + len(task.section) - 1 > 6:
        # no heading leads back to no section, and Markdown has six levels
        problem = Problem(task.line or None, f"task {task.id}'s section cannot be written")
        raise plan_invalid([problem], plan.source)
    headings = [""]
    # back in a parent section (the path is a prefix of the current one): its heading is written again
    for depth in range(min(shared, len(task.section) - 1), len(task.section)):
        headings.extend([_heading(first_level + depth, task.section[depth]), ""])
    return headings


def _task_lines(task: Task) -> list[str]:
    checkbox = "[x]" if task.done else "[ ]"
    title = task.title
    if syntax.explicit_id(title)[0] is not None:  # keep a title like "T4: x" from being read as an id
        title = f"(T{task.id}) {title}"
    lines = [f"{task.id}. {checkbox} {title}"]
    if task.files:
        lines.append(f"{BODY_INDENT}files: {format_files(task.files)}")
    if task.test is not None:
        lines.append(f"{BODY_INDENT}test: {format_test(task.test)}")
    if task.depends:
        lines.append(f"{BODY_INDENT}depends: {', '.join(str(task_id) for task_id in task.depends)}")
    if task.body:
        lines.extend((BODY_INDENT + line).rstrip() for line in task.body.split("\n"))
    return lines
