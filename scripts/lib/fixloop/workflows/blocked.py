"""Why a review stopped on failing checks, and how to go on: lines of the run's final message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.core.engine_path import engine_command
from fixloop.review.access import started_review
from fixloop.runs.verification import FAILED_STATUSES, STEP_NAMES
from fixloop.workflows.context import RunState

BLOCKED_REASON = "verification_failed"
TAIL_LINES = 5  # the last lines of a failing command's output shown in the final message
NO_GATE_FLAG = "--no-gate"


def _failed_steps(result: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    steps = [(name, result.get(name)) for name in STEP_NAMES]
    return [
        (name, step)
        for name, step in steps
        if isinstance(step, Mapping) and step.get("status") in FAILED_STATUSES
    ]


def _last_lines(text: object) -> list[str]:
    lines = [line.rstrip() for line in str(text or "").splitlines() if line.strip()]
    return lines[-TAIL_LINES:]


def blocked_lines(state: RunState) -> list[str]:
    """For a review that ended on failing checks: each failing command, its exit and last output lines,
    then the three ways on (fix, change and approve the command, review without the gate)."""
    review = started_review(state)
    outcome = review.get("outcome") if review is not None else None
    result = state.get("verification")
    if review is None or not isinstance(outcome, Mapping) or not isinstance(result, Mapping):
        return []
    if outcome.get("termination_reason") != BLOCKED_REASON:
        return []
    lines: list[str] = []
    for name, step in _failed_steps(result):
        exit_code = step.get("exit_code")
        how = (
            f"exit code {exit_code}"
            if exit_code is not None
            else str(step.get("reason") or step.get("status"))
        )
        lines.append(f"Check {name} failed: `{step.get('command')}` ({how}). Its last lines:")
        lines.extend(f"    {line}" for line in _last_lines(step.get("output_tail")) or ["(no output)"])
    before = not review.get("rounds")
    lines.append(
        "To go on: fix what fails and run the command again; or, if a command is wrong for this project, "
        f"change it in .claude/fixloop.json and approve it with `{engine_command('trust')}`"
        + (f"; or review without this gate: `/fixloop:review {NO_GATE_FLAG}`." if before else ".")
    )
    return lines
