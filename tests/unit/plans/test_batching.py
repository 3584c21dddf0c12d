from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from plans.plan_strategies import PROPERTIES, plans

from fixloop.core.errors import FixloopError
from fixloop.plans import (
    Plan,
    Task,
    batches,
    execution_order,
    load,
    mark_done,
    parse,
    read_text,
    resume_point,
)

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "plans" / "csv_export.md"


def ids(groups: list[list[Task]]) -> list[list[int]]:
    return [[task.id for task in group] for group in groups]


def test_the_seven_task_plan_runs_in_three_batches() -> None:
    plan = load(FIXTURE)
    assert plan.title == "Plan: CSV export for reports"
    assert [(task.id, task.section[0], task.depends) for task in plan.tasks] == [
        (1, "Phase 1: the building blocks", ()),
        (2, "Phase 1: the building blocks", ()),
        (3, "Phase 1: the building blocks", ()),
        (4, "Phase 2: wiring", (1, 2)),
        (5, "Phase 2: wiring", (1,)),
        (6, "Phase 2: wiring", (1, 2)),
        (7, "Phase 3: the page", (6,)),
    ]
    assert ids(batches(plan)) == [[1, 2, 3], [4, 5, 6], [7]]
    assert resume_point(plan) == plan.tasks[0]


def test_the_seven_task_plan_resumes_after_its_first_batch() -> None:
    text = mark_done(read_text(FIXTURE), [1, 2, 3])
    plan = parse(text)
    assert ids(batches(plan)) == [[4, 5, 6], [7]]
    assert ids(batches(plan, size=2)) == [[4, 5], [6], [7]]
    resumed = resume_point(plan)
    assert resumed is not None and resumed.id == 4
    assert resume_point(parse(mark_done(text, [4, 5, 6, 7]))) is None


def test_a_batch_ends_before_a_task_that_needs_one_in_it() -> None:
    plan = parse("- [ ] a\n- [ ] b\n  depends: 1\n- [ ] c\n- [ ] d\n- [ ] e\n  depends: 3\n")
    assert ids(batches(plan)) == [[1], [2, 3, 4], [5]]
    assert ids(batches(plan, size=1)) == [[1], [2], [3], [4], [5]]
    assert ids(batches(plan, size=10)) == [[1], [2, 3, 4], [5]]


def test_a_dependency_on_a_done_task_is_satisfied() -> None:
    plan = parse("- [x] a\n- [ ] b\n  depends: 1\n- [ ] c\n  depends: 1\n")
    assert ids(batches(plan)) == [[2, 3]]


def test_a_task_waits_for_a_later_task_it_depends_on() -> None:
    plan = parse("- [ ] a\n  depends: 3\n- [ ] b\n- [ ] c\n- [ ] d\n  depends: 1\n")
    assert [task.id for task in execution_order(plan)] == [2, 3, 1, 4]
    assert ids(batches(plan)) == [[2, 3], [1], [4]]
    resumed = resume_point(plan)
    assert resumed is not None and resumed.id == 2


def test_cycles_are_invalid_and_named() -> None:
    plan = parse(
        "- [ ] a\n  depends: 3\n- [ ] b\n  depends: 1\n- [ ] c\n  depends: 2\n"
        "- [ ] d\n  depends: 5\n- [ ] e\n  depends: 4\n- [ ] f\n  depends: 1\n",
        "plan.md",
    )
    with pytest.raises(FixloopError) as caught:
        batches(plan)
    assert caught.value.code == "PLAN_INVALID"
    assert caught.value.message == (
        "line 1: tasks 1, 2 and 3 depend on each other in a cycle; "
        "line 7: tasks 4 and 5 depend on each other in a cycle"
    )
    assert caught.value.details["source"] == "plan.md"
    with pytest.raises(FixloopError):
        resume_point(plan)


def test_a_cycle_through_a_done_task_is_no_cycle() -> None:
    plan = parse("- [x] a\n  depends: 2\n- [ ] b\n  depends: 1\n")
    assert ids(batches(plan)) == [[2]]


def test_hand_made_plans_are_checked_too() -> None:
    looped = Plan(title=None, tasks=(Task(id=1, title="a", line=3, depends=(1,)),))
    with pytest.raises(FixloopError) as caught:
        batches(looped)
    assert caught.value.message == "line 3: task 1 depends on itself"
    dangling = Plan(title=None, tasks=(Task(id=1, title="a", depends=(9,)),))
    with pytest.raises(FixloopError) as caught:
        batches(dangling)
    assert caught.value.message == "task 1 depends on task 9, which does not exist"


def test_the_batch_size_is_at_least_one() -> None:
    with pytest.raises(FixloopError) as caught:
        batches(parse("- [ ] a\n"), size=0)
    assert (caught.value.code, caught.value.message) == (
        "USAGE_ERROR",
        "The batch size must be at least 1, not 0.",
    )


def test_a_finished_plan_has_no_batches() -> None:
    plan = parse("- [x] a\n- [x] b\n")
    assert batches(plan) == []
    assert resume_point(plan) is None


@PROPERTIES
@given(plans(acyclic=True), st.integers(1, 4))
def test_batches_respect_size_order_and_dependencies(plan: Plan, size: int) -> None:
    groups = batches(plan, size)
    pending = [task for task in plan.tasks if not task.done]
    flat = [task for group in groups for task in group]
    assert sorted(task.id for task in flat) == sorted(task.id for task in pending)
    assert flat == execution_order(plan)
    batch_of = {task.id: number for number, group in enumerate(groups) for task in group}
    for number, group in enumerate(groups):
        assert 1 <= len(group) <= size
        for task in group:
            assert all(batch_of[dep] < number for dep in task.depends if dep in batch_of)
        if number + 1 < len(groups):  # a batch ends early only for a dependency
            follower = groups[number + 1][0]
            assert len(group) == size or any(task.id in follower.depends for task in group)
    # when a task waits, it waits only for a task it needs: the earliest ready task always goes first
    done = {task.id for task in plan.tasks if task.done}
    for task in flat:
        waiting = [other for other in pending if other.id not in done and set(other.depends) <= done]
        assert task == min(waiting, key=plan.tasks.index)
        done.add(task.id)


@PROPERTIES
@given(plans(acyclic=True, backward_only=True), st.integers(1, 4))
def test_with_dependencies_on_earlier_tasks_only_batches_keep_plan_order(plan: Plan, size: int) -> None:
    assert [task for group in batches(plan, size) for task in group] == list(plan.pending)
