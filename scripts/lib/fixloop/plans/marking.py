"""Checking tasks off in a plan's text, changing nothing else."""

from __future__ import annotations

from collections.abc import Iterable

from fixloop.core.errors import FixloopError
from fixloop.plans.parser import scan

DONE_MARKER = "[x] "  # put after the number of a numbered task without a checkbox: `3. [x] text`


def mark_done(text: str, task_ids: Iterable[int], source: str | None = None) -> str:
    """The text with those tasks checked (`[ ]` -> `[x]`; `3. text` -> `3. [x] text`), every other byte kept.

    Tasks already done are left as they are, so marking is idempotent. PLAN_INVALID if the text is not a valid
    plan; PLAN_TASK_NOT_FOUND for ids the plan does not have.
    """
    plan, spots = scan(text, source)
    wanted = list(dict.fromkeys(task_ids))
    by_id = {task.id: (task, spot) for task, spot in zip(plan.tasks, spots, strict=True)}
    missing = [task_id for task_id in wanted if task_id not in by_id]
    if missing:
        names = ", ".join(str(task_id) for task_id in missing)
        raise FixloopError("PLAN_TASK_NOT_FOUND", f"The plan has no task {names}.", task_ids=missing)
    lines = text.split("\n")
    for task_id in wanted:
        task, spot = by_id[task_id]
        if task.done:
            continue
        line = lines[spot.line_index]
        if spot.mark_column is not None:
            lines[spot.line_index] = line[: spot.mark_column] + "x" + line[spot.mark_column + 1 :]
        else:
            lines[spot.line_index] = line[: spot.text_column] + DONE_MARKER + line[spot.text_column :]
    return "\n".join(lines)
