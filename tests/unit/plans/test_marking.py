from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from plans.plan_strategies import PROPERTIES, SPELLINGS, plans, spell

from fixloop.core.errors import FixloopError
from fixloop.plans import Plan, mark_done, parse, render


def test_checkboxes_are_checked_and_nothing_else_changes() -> None:
    text = (
        "\ufeff# Pl\u00e4n\r\n"
        "- [ ] Caf\u00e9 first  \r\n"
        "  files: a.py\r\n"
        "* [ ]\t(T7) second\n"
        "+ [X] third\r\n"
        "4. fourth \u2014 numbered\r\n"
        "5)   [ ] fifth\r\n"
        "6. [x] sixth"
    )
    assert mark_done(text, [1, 7, 3, 4, 5, 6]) == (
        "\ufeff# Pl\u00e4n\r\n"
        "- [x] Caf\u00e9 first  \r\n"
        "  files: a.py\r\n"
        "* [x]\t(T7) second\n"
        "+ [X] third\r\n"
        "4. [x] fourth \u2014 numbered\r\n"
        "5)   [x] fifth\r\n"
        "6. [x] sixth"
    )


def test_a_numbered_task_with_an_explicit_id_gets_its_checkbox_before_the_id() -> None:
    marked = mark_done("1. (T4) Add the parser\n", [4])
    assert marked == "1. [x] (T4) Add the parser\n"
    assert parse(marked).tasks[0].done


def test_marking_nothing_changes_nothing() -> None:
    text = "- [ ] a\n- [ ] b\n"
    assert mark_done(text, []) == text


def test_unknown_ids_are_refused() -> None:
    with pytest.raises(FixloopError) as caught:
        mark_done("- [ ] a\n- [ ] b\n", [2, 9, 12, 9])
    assert caught.value.code == "PLAN_TASK_NOT_FOUND"
    assert caught.value.message == "The plan has no task 9, 12."
    assert caught.value.details == {"task_ids": [9, 12]}


def test_an_invalid_plan_is_refused() -> None:
    with pytest.raises(FixloopError) as caught:
        mark_done("- [ ]\n", [1], source="plan.md")
    assert (caught.value.code, caught.value.message) == ("PLAN_INVALID", "line 1: task has no text")
    assert caught.value.details["source"] == "plan.md"


def done_except_lines(before: Plan, after: Plan, ids: set[int]) -> None:
    assert after.tasks == tuple(replace(task, done=task.done or task.id in ids) for task in before.tasks)
    assert after.title == before.title


@PROPERTIES
@given(plans(acyclic=False), st.data())
def test_marking_sets_exactly_those_tasks_done(plan: Plan, data: st.DataObject) -> None:
    spellings = data.draw(st.lists(SPELLINGS, min_size=len(plan.tasks), max_size=len(plan.tasks)))
    newline = data.draw(st.sampled_from(["\n", "\r\n"]))
    text = data.draw(st.sampled_from([render(plan), spell(plan, spellings, newline)]))
    ids = data.draw(st.lists(st.sampled_from([task.id for task in plan.tasks]), unique=True))
    before = parse(text)
    marked = mark_done(text, ids)
    done_except_lines(before, parse(marked), set(ids))
    assert mark_done(marked, ids) == marked
    assert mark_done(marked, [task.id for task in before.tasks if task.done]) == marked
    # only the lines of the tasks checked now changed, each by a mark or an inserted "[x] "
    newly_done = {task.line for task in before.tasks if task.id in ids and not task.done}
    old_lines, new_lines = text.split("\n"), marked.split("\n")
    assert len(old_lines) == len(new_lines)
    for number, (old, new) in enumerate(zip(old_lines, new_lines, strict=True), start=1):
        if number in newly_done:
            assert len(new) - len(old) in (0, 4)
        else:
            assert new == old
