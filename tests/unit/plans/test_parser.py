from __future__ import annotations

import re
from pathlib import Path

import pytest

from fixloop.core.errors import FixloopError
from fixloop.plans import Plan, Task, batches, parse


def invalid(text: str, source: str | None = None) -> FixloopError:
    with pytest.raises(FixloopError) as caught:
        parse(text, source)
    assert caught.value.code == "PLAN_INVALID"
    return caught.value


def test_checkbox_items_are_tasks_numbered_by_their_place() -> None:
    plan = parse("# Ship it\n\n- [ ] Add the parser\n* [x] Write docs\n+ [X] Tag the release\n", "plan.md")
    assert plan == Plan(
        title="Ship it",
        tasks=(
            Task(id=1, title="Add the parser", line=3),
            Task(id=2, title="Write docs", line=4, done=True),
            Task(id=3, title="Tag the release", line=5, done=True),
        ),
        source="plan.md",
    )


def test_numbered_items_take_their_number_as_id() -> None:
    plan = parse("3. First\n7) Second\n9. [x] Third\n10. [ ] Fourth\n")
    assert [(task.id, task.title, task.done) for task in plan.tasks] == [
        (3, "First", False),
        (7, "Second", False),
        (9, "Third", True),
        (10, "Fourth", False),
    ]
    assert plan.title is None


@pytest.mark.parametrize(
    ("item", "task_id", "title"),
    [
        ("- [ ] (T7) Add the parser", 7, "Add the parser"),
        ("- [ ] T7: Add the parser", 7, "Add the parser"),
        ("- [ ] task 7: Add the parser", 7, "Add the parser"),
        ("- [ ] ( t7 ) Add the parser", 7, "Add the parser"),
        ("1. (T7) Add the parser", 7, "Add the parser"),
        ("1. [x] T7: Add the parser", 7, "Add the parser"),
        ("- [ ] T7 Add the parser", 1, "T7 Add the parser"),
    ],
)
def test_an_explicit_id_wins_over_number_and_place(item: str, task_id: int, title: str) -> None:
    (task,) = parse(item + "\n").tasks
    assert (task.id, task.title) == (task_id, title)


def test_sections_are_heading_paths_without_the_title() -> None:
    text = (
        "# Plan\n"
        "- [ ] a\n"
        "## Phase 1\n"
        "### Backend ##\n"
        "- [ ] b\n"
        "## Phase 2\n"
        "- [ ] c\n"
        "# Appendix\n"
        "#### Deep\n"
        "- [ ] d\n"
    )
    assert [task.section for task in parse(text).tasks] == [
        (),
        ("Phase 1", "Backend"),
        ("Phase 2",),
        ("Appendix", "Deep"),
    ]


def test_the_title_is_the_first_heading_only_when_it_is_level_one() -> None:
    plan = parse("## Tasks\n- [ ] a\n# Later\n- [ ] b\n")
    assert plan.title is None
    assert [task.section for task in plan.tasks] == [("Tasks",), ("Later",)]


def test_indented_lines_are_the_task_body_and_options() -> None:
    text = (
        "- [ ] Add the parser\n"
        "  Files: `src/parser.py`, src/syntax.py; src/b.py:12-40 (new)\n"
        "  **Test:** `pytest -q tests/test_parser.py`\n"
        "  - depends on: T2 and #3\n"
        "  Read the spec first.\n"
        "\n"
        "    - [ ] a nested step, not a task\n"
        "  files: docs/parser.md\n"
        "- [ ] Second\n"
        "- [ ] Third\n"
    )
    task = parse(text).tasks[0]
    assert task.files == ("src/parser.py", "src/syntax.py", "src/b.py", "docs/parser.md")
    assert task.test == "pytest -q tests/test_parser.py"
    assert task.depends == (2, 3)
    assert task.body == "Read the spec first.\n\n  - [ ] a nested step, not a task"
    assert [t.id for t in parse(text).tasks] == [1, 2, 3]


@pytest.mark.parametrize(
    ("line", "files"),
    [
        ("files: a.py, src/b.py", ("a.py", "src/b.py")),
        ("FILE : a.py src/b.py", ("a.py", "src/b.py")),
        ("files: `dir with space/a.py` and 'b.py'", ("dir with space/a.py", "b.py")),
        ("files: app/(auth)/page.tsx (new), a.py.", ("app/(auth)/page.tsx", "a.py")),
        ("files: a.py, a.py", ("a.py",)),
        ("files:", ()),
    ],
)
def test_files_lines_are_forgiving(line: str, files: tuple[str, ...]) -> None:
    assert parse(f"- [ ] task\n  {line}\n").tasks[0].files == files


@pytest.mark.parametrize(
    ("line", "depends"),
    [
        ("depends: 2, 3", (2, 3)),
        ("Depends On: tasks 3 and 2", (3, 2)),
        ("deps: T2; (T3)", (2, 3)),
        ("depends: `#2`, 2", (2,)),
        ("depends: none", ()),
    ],
)
def test_depends_lines_are_forgiving(line: str, depends: tuple[int, ...]) -> None:
    text = f"- [ ] one\n- [ ] two\n- [ ] three\n- [ ] four\n  {line}\n"
    assert parse(text).tasks[3].depends == depends


def test_a_task_may_depend_on_a_later_task() -> None:
    assert parse("- [ ] one\n  depends: 2\n- [ ] two\n").tasks[0].depends == (2,)


def test_code_fences_are_never_tasks_headings_or_options() -> None:
    text = (
        "```markdown\n"
        "# Not the title\n"
        "- [ ] not a task\n"
        "```\n"
        "~~~~\n"
        "1. not a task\n"
        "~~~\n"
        "~~~~\n"
        "- [ ] Real task\n"
        "  ```\n"
        "  files: not/an/option.py\n"
        "- [ ] not a task either\n"
        "  ```\n"
        "  ```inline``` code is not a fence\n"
    )
    plan = parse(text)
    assert plan.title is None
    assert [(task.id, task.title, task.files) for task in plan.tasks] == [(1, "Real task", ())]
    # the fence runs to its closing line even through an unindented line, which stays as it is
    assert plan.tasks[0].body == (
        "  ```\n  files: not/an/option.py\n- [ ] not a task either\n  ```\n  ```inline``` code is not a fence"
    )


def test_unindented_text_headings_and_items_end_a_task() -> None:
    text = "- [ ] a\n  more of a\ntext after\n  indented, but the task has ended\n- [ ] b\n## H\n  not b\n"
    plan = parse(text)
    assert [(task.title, task.body) for task in plan.tasks] == [("a", "more of a"), ("b", "")]


def test_plain_bullets_and_deeply_indented_items_are_not_tasks() -> None:
    text = "- a note\n    - [ ] indented four spaces\n   - [ ] indented three\n- [ ]no space after the box\n"
    assert [(task.id, task.title) for task in parse(text).tasks] == [(1, "indented three")]


def test_line_endings_bom_and_unicode_are_read() -> None:
    text = "\ufeff# Pl\u00e4n\r\n\r\n- [x] Caf\u00e9 \u2014 na\u00efve \U0001f680  \r\n  files: \u00fc.py\r\n"
    plan = parse(text)
    assert plan.title == "Pl\u00e4n"
    assert plan.tasks == (
        Task(id=1, title="Caf\u00e9 \u2014 na\u00efve \U0001f680", line=3, done=True, files=("\u00fc.py",)),
    )


def test_a_task_without_text_is_named_by_line() -> None:
    error = invalid("# Plan\n\n- [ ] ok\n- [ ]\n3.\n- [ ] (T9)\n", "plan.md")
    assert error.message == "line 4: task has no text; line 5: task has no text; line 6: task has no text"
    assert error.details == {
        "line": 4,
        "problems": [
            {"line": 4, "message": "task has no text"},
            {"line": 5, "message": "task has no text"},
            {"line": 6, "message": "task has no text"},
        ],
        "source": "plan.md",
    }


def test_every_problem_is_reported_in_line_order() -> None:
    text = "1. one\n   depends: 9\n2. two\n   depends: 2, soon\n   test: a\n   test: b\n2. again\n```\n"
    error = invalid(text)
    assert error.message == (
        "line 2: depends on task 9, which does not exist; "
        'line 4: depends lists "soon", which is not a task id; '
        "line 4: task 2 depends on itself; "
        "line 6: task has a second test line (the first is on line 5); "
        "line 7: task id 2 used twice (first on line 3); "
        "line 8: code fence opened here is never closed"
    )
    assert error.details["line"] == 2
    assert len(error.details["problems"]) == 6
    assert "source" not in error.details


def test_numbered_and_checkbox_ids_can_collide() -> None:
    error = invalid("- [ ] first\n1. numbered one\n")
    assert error.message == "line 2: task id 1 used twice (first on line 1)"


@pytest.mark.parametrize("text", ["", "# Plan\n\nJust prose.\n- a bullet\n", "```\n- [ ] fenced\n```\n"])
def test_a_plan_without_tasks_is_invalid(text: str) -> None:
    error = invalid(text)
    assert error.details["problems"] == [
        {"line": None, "message": "the plan has no tasks: write them as `- [ ] text` or `1. text` items"}
    ]
    assert error.details["line"] is None


def test_plan_helpers() -> None:
    plan = parse("- [x] a\n- [ ] b\n- [ ] c\n")
    assert [task.id for task in plan.pending] == [2, 3]
    assert plan.task(3) == plan.tasks[2]
    assert plan.task(4) is None


def test_the_documented_example_reads_as_documented() -> None:
    document = (Path(__file__).resolve().parents[3] / "docs" / "plan-format.md").read_text(encoding="utf-8")
    match = re.search(r"^````markdown\n(.*?)^````$", document, re.MULTILINE | re.DOTALL)
    assert match is not None
    plan = parse(match.group(1))
    assert plan.title == "Plan: rate limiting for the public API"
    assert [(task.id, task.done, task.section, task.depends) for task in plan.tasks] == [
        (1, True, ("Phase 1: the limiter",), ()),
        (2, False, ("Phase 1: the limiter",), (1,)),
        (3, False, ("Phase 2: wiring",), (2,)),
        (10, False, ("Phase 2: wiring",), (3,)),
        (5, True, ("Phase 2: wiring",), (1,)),
    ]
    limiter = plan.tasks[1]
    assert limiter.files == ("src/ratelimit/bucket.py", "tests/ratelimit/test_bucket.py")
    assert limiter.test == "pytest -q tests/ratelimit/test_bucket.py"
    assert limiter.body.endswith("- [ ] this line is code, not a task\n```")
    assert plan.tasks[3].files == ("src/api/errors.py", "src/api/middleware.py")
    assert [[task.id for task in batch] for batch in batches(plan)] == [[2], [3], [10]]
