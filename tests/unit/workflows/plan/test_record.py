"""The plan record: the plan file the user named, and where a run started again resumes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.core.errors import FixloopError
from fixloop.plans import parse
from fixloop.workflows.plan import statuses
from fixloop.workflows.plan.record import plan_file, resume_at, task_dict, typed_path


@pytest.mark.parametrize(
    ("typed", "path"),
    [
        ("docs/plan.md", "docs/plan.md"),
        ("  'docs/my plan.md' ", "docs/my plan.md"),
        ("docs/my plan.md", "docs/my plan.md"),
        ('"docs/a.md', '"docs/a.md'),
        ("", ""),
    ],
)
def test_the_path_typed(typed: str, path: str) -> None:
    assert typed_path({"inputs": {"plan": typed}}) == path


def test_the_plan_file_must_be_named_and_inside_the_project(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    assert plan_file(root, "docs/../plan.md") == (root / "plan.md", "plan.md")
    assert plan_file(root, str(root / "a" / "b.md")) == (root / "a" / "b.md", "a/b.md")
    for typed, code in (
        ("", "PLAN_NOT_FOUND"),
        ("../x.md", "PLAN_OUTSIDE_PROJECT"),
        ("/etc/x.md", "PLAN_OUTSIDE_PROJECT"),
    ):
        with pytest.raises(FixloopError) as caught:
            plan_file(root, typed)
        assert caught.value.code == code


def record_of(text: str, finished: set[int]) -> dict[str, object]:
    plan = parse(text)
    record: dict[str, object] = {
        "path": "plan.md",
        "title": plan.title,
        "tasks": [task_dict(t) for t in plan.tasks],
    }
    statuses.start(record)
    for task_id in finished:
        statuses.settle(record, task_id, statuses.DONE)
    return record


def test_a_run_resumes_at_the_first_unfinished_task_in_execution_order() -> None:
    text = "1. Add a\n   depends: 3\n2. Add b\n3. Add c\n4. Add d\n"
    assert resume_at(record_of(text, set())) == 2  # task 1 waits for task 3
    assert resume_at(record_of(text, {3})) == 1  # task 2 failed, task 3 done: task 1 may go first
    assert resume_at(record_of(text, {1, 2, 3})) == 4
    assert resume_at(record_of(text, {1, 2, 3, 4})) is None
    assert resume_at(record_of("- [x] Add a\n- [ ] Add b\n", set())) == 2
