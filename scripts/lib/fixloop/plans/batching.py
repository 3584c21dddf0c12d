"""The order pending tasks are carried out in, and the batches they are carried out in."""

from __future__ import annotations

import heapq

from fixloop.core.errors import FixloopError
from fixloop.plans.cycles import dependency_cycles, describe_cycle
from fixloop.plans.model import Plan, Task
from fixloop.plans.problems import Problem, plan_invalid

DEFAULT_BATCH_SIZE = 3


def execution_order(plan: Plan) -> list[Task]:
    """Pending tasks in plan order, except that a task waits for the pending tasks it depends on.

    A dependency on a done task is satisfied. PLAN_INVALID for an unknown dependency or a cycle.
    """
    pending = {task.id: task for task in plan.pending}
    position = {task.id: index for index, task in enumerate(plan.tasks)}
    _check_dependencies_exist(plan)
    waiting_on = {
        task_id: {dep for dep in task.depends if dep in pending} for task_id, task in pending.items()
    }
    needed_by: dict[int, list[int]] = {task_id: [] for task_id in pending}
    for task_id, dependencies in waiting_on.items():
        for dependency in dependencies:
            needed_by[dependency].append(task_id)
    ready = [(position[task_id], task_id) for task_id, deps in waiting_on.items() if not deps]
    heapq.heapify(ready)
    order: list[Task] = []
    while ready:
        _, task_id = heapq.heappop(ready)
        order.append(pending[task_id])
        for follower in needed_by[task_id]:
            waiting_on[follower].discard(task_id)
            if not waiting_on[follower]:
                heapq.heappush(ready, (position[follower], follower))
    if len(order) < len(pending):
        stuck = {task_id: deps for task_id, deps in waiting_on.items() if deps}
        raise plan_invalid(
            [_cycle_problem(pending, cycle) for cycle in dependency_cycles(stuck)], plan.source
        )
    return order


def batches(plan: Plan, size: int = DEFAULT_BATCH_SIZE) -> list[list[Task]]:
    """Pending tasks in execution order, at most `size` a batch, none with a task it depends on."""
    if size < 1:
        raise FixloopError("USAGE_ERROR", f"The batch size must be at least 1, not {size}.")
    result: list[list[Task]] = []
    current: list[Task] = []
    for task in execution_order(plan):
        if len(current) == size or any(other.id in task.depends for other in current):
            result.append(current)
            current = []
        current.append(task)
    if current:
        result.append(current)
    return result


def resume_point(plan: Plan) -> Task | None:
    """The task to carry out next (the first of the first batch), None when every task is done."""
    order = execution_order(plan)
    return order[0] if order else None


def _cycle_problem(tasks: dict[int, Task], cycle: list[int]) -> Problem:
    return Problem(tasks[cycle[0]].line or None, describe_cycle(cycle))


def _check_dependencies_exist(plan: Plan) -> None:
    known = {task.id for task in plan.tasks}
    problems = [
        Problem(task.line or None, f"task {task.id} depends on task {dependency}, which does not exist")
        for task in plan.tasks
        for dependency in task.depends
        if dependency not in known
    ]
    if problems:
        raise plan_invalid(problems, plan.source)
