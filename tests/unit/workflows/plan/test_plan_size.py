"""A plan of more tasks than MAX_PLAN_TASKS is refused at its first step, naming the limit and the line where
reading stopped; a plan of exactly MAX_PLAN_TASKS is carried out."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_runs import FakeClock
from workflows.plan.plan_helpers import AGENT, agents_of, events, next_action, plan_project, start

from fixloop.core.errors import FixloopError
from fixloop.plans import MAX_PLAN_TASKS, parse

TOO_MANY = f"the plan has more than {MAX_PLAN_TASKS} tasks: split it into plans of at most {MAX_PLAN_TASKS}"


def plan_of(count: int) -> str:
    return "# Many tasks\n\n" + "".join(f"- [ ] Task {number}\n" for number in range(1, count + 1))


def test_the_parser_stops_at_the_first_task_past_the_limit() -> None:
    with pytest.raises(FixloopError) as caught:
        parse(plan_of(100_000), source="big.md")
    first_refused_line = 3 + MAX_PLAN_TASKS
    assert caught.value.code == "PLAN_INVALID"
    assert caught.value.message == f"line {first_refused_line}: {TOO_MANY}"
    assert caught.value.details["problems"] == [{"line": first_refused_line, "message": TOO_MANY}]
    assert len(parse(plan_of(MAX_PLAN_TASKS)).tasks) == MAX_PLAN_TASKS


def test_a_plan_of_100000_tasks_stops_the_run_at_phase_0(git_project: Path, fake_clock: FakeClock) -> None:
    plan_project(git_project, plan=plan_of(100_000))
    run_id = start(git_project)
    stop = next_action(git_project, run_id)
    assert (stop["action"], stop["status"]) == ("stop", "failed")
    assert stop["error"] == {
        "code": "PLAN_INVALID",
        "message": f"The plan docs/plan.md cannot be read: line {3 + MAX_PLAN_TASKS}: {TOO_MANY}.",
    }
    (logged,) = events(git_project, run_id, "ERROR")
    assert logged["problems"] == [{"line": 3 + MAX_PLAN_TASKS, "message": TOO_MANY}]


def test_a_plan_at_the_limit_is_carried_out(git_project: Path, fake_clock: FakeClock) -> None:
    plan_project(git_project, plan=plan_of(MAX_PLAN_TASKS))
    run_id = start(git_project)
    assert agents_of(next_action(git_project, run_id)) == [AGENT]
