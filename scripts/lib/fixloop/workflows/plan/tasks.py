"""The task text of the task implementer: the batch's tasks, what failed before, and its contract.

The contract part is generated from the agent's model (`contract_text`); nothing here restates it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.contracts.plan import TASK_IMPLEMENTER
from fixloop.contracts.prompt_text import contract_text
from fixloop.runs.verification import FAILED_STATUSES, STEP_NAMES
from fixloop.workflows.plan.statuses import FINISHED, outcome, tasks_text

MAX_OUTPUT_LINES = 60


def task_text(item: Mapping[str, Any], record: dict[str, Any]) -> str:
    """One task as the implementer reads it: id and title, then its section, options and body."""
    lines = [f"### Task {item['id']}: {item['title']}"]
    if item.get("section"):
        lines.append(f"Section: {' > '.join(item['section'])}")
    if item.get("files"):
        lines.append(f"Files: {', '.join(item['files'])}")
    if item.get("test"):
        lines.append(f"Test: {item['test']}")
    if item.get("depends"):
        done = [
            f"{task_id} ({'done' if outcome(record, task_id).get('status') in FINISHED else 'not done'})"
            for task_id in item["depends"]
        ]
        lines.append(f"Depends on: {', '.join(done)}")
    if item.get("body"):
        lines += ["", str(item["body"])]
    return "\n".join(lines)


def failed_steps(verification: Mapping[str, Any] | None) -> list[str]:
    """The verification steps that failed (tests, lint, typecheck), in order."""
    if not verification:
        return []
    return [name for name in STEP_NAMES if (verification.get(name) or {}).get("status") in FAILED_STATUSES]


def verification_text(verification: Mapping[str, Any]) -> list[str]:
    """Each failed check: its command, why, and the end of its output."""
    lines: list[str] = []
    for name in failed_steps(verification):
        step = verification[name]
        lines.append(f"- {name} failed: `{step.get('command')}` ({step.get('reason') or step.get('status')})")
        tail = str(step.get("output_tail") or "").splitlines()[-MAX_OUTPUT_LINES:]
        lines += [f"  | {line}" for line in tail]
    return lines


def previous_text(previous: Mapping[str, Any]) -> str:
    """What kept the earlier attempt from making the batch green."""
    lines = [f"Attempt {previous.get('attempt')} did not make this batch green:"]
    if previous.get("agent_error"):
        lines.append(f"- you could not work: {previous['agent_error']}")
    if previous.get("no_answer"):
        lines.append("- you gave no valid answer")
    for task_id, reason in previous.get("failed_tasks") or []:
        lines.append(f"- task {task_id} failed: {reason}")
    lines += verification_text(previous.get("verification") or {})
    lines.append(
        "Your changes are still in place. Fix what fails (the code, not the checks), finish the tasks that "
        "are not done, and answer again with the outcome of every task of the batch."
    )
    return "\n".join(lines)


def checks_text(commands: Mapping[str, str]) -> str:
    if not commands:
        return "No check is configured: nothing is run after you, so run the tasks' tests yourself."
    listed = "\n".join(f"- {name}: `{command}`" for name, command in commands.items())
    return (
        f"When you answer, fixloop runs these in the project; the batch is done only when all pass:\n{listed}"
    )


def implementer_task(
    record: dict[str, Any],
    batch: Sequence[int],
    position: tuple[int, int],
    commands: Mapping[str, str],
    previous: Mapping[str, Any] | None,
) -> str:
    """The whole task of one implementer call: batch `position` (number, total) of the plan."""
    number, total = position
    by_id = {int(item["id"]): item for item in record.get("tasks") or []}
    title = f' ("{record["title"]}")' if record.get("title") else ""
    what = [
        f"Carry out batch {number} of {total} of the plan `{record['path']}`{title}: "
        f"{tasks_text(list(batch))}, in this order. Each is described below as the plan writes it.",
        "Change only what these tasks ask. Do not edit the plan file: fixloop checks the tasks off itself "
        "once the checks pass.",
    ]
    sections = [
        ("Tasks", "\n\n".join(task_text(by_id[task_id], record) for task_id in batch)),
        ("Checks", checks_text(commands)),
    ]
    if previous is not None:
        sections.append(("The previous attempt", previous_text(previous)))
    parts = ["\n".join(what)]
    parts += [f"## {heading}\n{body}" for heading, body in sections]
    parts.append(f"## Your answer\n{contract_text(TASK_IMPLEMENTER)}")
    return "\n\n".join(parts)
