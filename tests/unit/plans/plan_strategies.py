"""Hypothesis strategies for plans, and a writer that spells a plan in the many forms the format accepts."""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from fixloop.plans import Plan, Task

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\u00e9\u00df\u00fc\u4e2d\u0416"
WORD = st.text(alphabet=LETTERS + "0123456789", min_size=1, max_size=8)
TITLE_WORD = WORD | st.sampled_from(["`code`", "**bold**", "(note)", "a.b", "x,y", "#3", "50%", "[x]", "C#"])
PATH = st.builds(
    lambda parts, name, spaced: "/".join([*parts, name + (" copy" if spaced else "")]) + ".py",
    st.lists(st.text(alphabet="abcxyz_\u00fc", min_size=1, max_size=5), max_size=2),
    st.text(alphabet="abcdef_0123", min_size=1, max_size=6),
    st.booleans(),
)
TEST = st.lists(WORD | st.sampled_from(["-q", "-k", "tests/a.py::test_b", "&&", "|"]), min_size=1, max_size=4)
BODY_LINE = st.lists(TITLE_WORD, min_size=1, max_size=5).map(" ".join) | st.sampled_from(
    ["- [ ] a nested step", "  - detail", "1. first sub-step"]
)
PROPERTIES = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FENCED_BODY = ["```text", "- [ ] fenced, not a task", "files: not/an/option.py", "# not a heading", "```"]


@st.composite
def titles(draw: st.DrawFn) -> str:
    prefix = draw(st.sampled_from(["", "", "", "T4: ", "(T2) ", "Task 9: "]))
    return prefix + " ".join(draw(st.lists(TITLE_WORD, min_size=1, max_size=5)))


@st.composite
def bodies(draw: st.DrawFn) -> str:
    lines = draw(st.lists(BODY_LINE | st.just(""), max_size=4))
    if draw(st.booleans()):
        lines.extend(FENCED_BODY)
    while lines and (not lines[0] or lines[0].startswith(" ")):
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


@st.composite
def section_paths(draw: st.DrawFn, count: int) -> list[tuple[str, ...]]:
    """Section paths a plan's headings can produce, task by task: a task keeps the section of the one
    before, or a heading opens a section at any depth (but none leads back to no section)."""
    current: tuple[str, ...] = ()
    paths: list[tuple[str, ...]] = []
    for _ in range(count):
        if draw(st.integers(0, 2)) == 0:
            keep = draw(st.integers(0, len(current)))
            opened = draw(st.lists(WORD, min_size=1, max_size=2))
            current = (*current[:keep], *opened)[:4]
        paths.append(current)
    return paths


@st.composite
def plans(draw: st.DrawFn, *, acyclic: bool = True, backward_only: bool = False) -> Plan:
    """Plans as parse returns them, with line 0 (a rendering decides the lines)."""
    count = draw(st.integers(1, 8))
    ids = draw(st.lists(st.integers(0, 120), min_size=count, max_size=count, unique=True))
    rank = draw(st.permutations(range(count))) if not backward_only else list(range(count))
    sections = draw(section_paths(count))
    tasks = []
    for index, task_id in enumerate(ids):
        candidates = [
            other
            for position, other in enumerate(ids)
            if other != task_id and (not acyclic or rank[position] < rank[index])
        ]
        depends = draw(st.lists(st.sampled_from(candidates), unique=True, max_size=3)) if candidates else []
        test = draw(st.none() | TEST.map(" ".join))
        tasks.append(
            Task(
                id=task_id,
                title=draw(titles()),
                section=sections[index],
                done=draw(st.booleans()),
                files=tuple(draw(st.lists(PATH, unique=True, max_size=3))),
                test=test,
                depends=tuple(depends),
                body=draw(bodies()),
            )
        )
    title = draw(st.none() | st.lists(WORD, min_size=1, max_size=4).map(" ".join))
    return Plan(title=title, tasks=tuple(tasks))


def without_lines(plan: Plan) -> Plan:
    return replace(plan, tasks=tuple(replace(task, line=0) for task in plan.tasks))


@dataclass(frozen=True)
class Spelling:
    """How to write one task: its item, its option lines and its indentation."""

    item: str  # "-", "*", "+", "." or ")"
    checkbox: bool  # numbered items only; bullets always have one
    mark: str  # "x" or "X" when done
    explicit: str  # "(T{})", "T{}:", "Task {}:", or "" when the id needs no spelling
    indent: str
    files_key: str
    test_key: str
    depends_key: str
    trailing: str


SPELLINGS = st.builds(
    Spelling,
    item=st.sampled_from(["-", "*", "+", ".", ")"]),
    checkbox=st.booleans(),
    mark=st.sampled_from(["x", "X"]),
    explicit=st.sampled_from(["(T{})", "T{}:", "Task {}:", "( t{} )"]),
    indent=st.sampled_from(["  ", "   ", "    ", "\t"]),
    files_key=st.sampled_from(["files:", "Files :", "**Files:**", "- file:", "FILES:"]),
    test_key=st.sampled_from(["test:", "Test:", "**test**:", "* tests:"]),
    depends_key=st.sampled_from(["depends:", "Depends on:", "deps:", "- DEPENDS:"]),
    trailing=st.sampled_from(["", " ", "  ", "\t"]),
)


def spell(plan: Plan, spellings: list[Spelling], newline: str) -> str:
    """The plan written with a different spelling per task (all of which parse to the same plan)."""
    lines: list[str] = []
    if plan.title is not None:
        lines += [f"# {plan.title}", "", "Some words about the plan.", ""]
    first_level = 2
    current: tuple[str, ...] = ()
    for order, (task, how) in enumerate(zip(plan.tasks, spellings, strict=True), start=1):
        if task.section != current:
            shared = 0
            while shared < min(len(current), len(task.section)) and current[shared] == task.section[shared]:
                shared += 1
            for depth in range(min(shared, len(task.section) - 1), len(task.section)):
                lines += ["", "#" * (first_level + depth) + " " + task.section[depth], ""]
            current = task.section
        lines.append(_item_line(task, order, how) + how.trailing)
        lines.extend(how.indent + line for line in _option_lines(task, how))
        lines.extend(
            (how.indent + line).rstrip() if line else "" for line in task.body.split("\n") if task.body
        )
    return newline.join(lines) + newline


def _item_line(task: Task, order: int, how: Spelling) -> str:
    title = task.title
    numbered = how.item in ".)"
    needs_id = (not numbered and task.id != order) or title.startswith(("T4:", "(T2)", "Task 9:"))
    explicit = how.explicit.format(task.id) + " " if needs_id else ""
    mark = how.mark if task.done else " "
    if numbered:
        box = f"[{mark}] " if how.checkbox or task.done or title.startswith("[") else ""
        return f"{task.id}{how.item} {box}{explicit}{title}"
    return f"{how.item} [{mark}] {explicit}{title}"


def _option_lines(task: Task, how: Spelling) -> list[str]:
    lines = []
    if task.files:
        lines.append(f"{how.files_key} " + ", ".join(f"`{path}`" for path in task.files))
    if task.test is not None:
        lines.append(
            f"{how.test_key} `{task.test}`" if "`" not in task.test else f"{how.test_key} {task.test}"
        )
    if task.depends:
        lines.append(f"{how.depends_key} " + " and ".join(f"T{task_id}" for task_id in task.depends))
    return lines
