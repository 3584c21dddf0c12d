"""What fix-ci was started on (`inputs`: a GitHub Actions run, or a CI log file, and a job), and what a
phase takes from earlier phases: this run's data or, for a run started at a later phase (`--phase=3,4`),
that of the latest earlier fix-ci run of the same CI run or log in this project (workflows.earlier).
"""

from __future__ import annotations

from typing import Any

from fixloop.workflows.context import PhaseContext, RunState
from fixloop.workflows.earlier import EarlierPhases
from fixloop.workflows.outcomes import PhaseFailed

WORKFLOW = "ci-job"
WHAT: dict[int, str] = {
    0: "the CI run or log of phase 0",
    1: "the failures of the job's log (phase 1)",
    2: "the classification of phase 2",
    3: "the local reproduction of phase 3",
    4: "the changes of phase 4",
}


def source_inputs(state: RunState) -> dict[str, str | None]:
    """{"run", "log_file", "job"}: what the user named, each stripped (None when not given)."""
    given = state.get("inputs")
    given = given if isinstance(given, dict) else {}

    def text(key: str) -> str | None:
        value = given.get(key)
        return value.strip() or None if isinstance(value, str) else None

    return {"run": text("run"), "log_file": text("log_file"), "job": text("job")}


def _same_source(own: RunState, other: RunState) -> bool:
    return source_inputs(own) == source_inputs(other)


def _subject(state: RunState) -> tuple[str, dict[str, Any]]:
    inputs = source_inputs(state)
    if inputs["log_file"]:
        return f" of the log {inputs['log_file']}", {"log_file": inputs["log_file"]}
    if inputs["run"]:
        return f" of CI run {inputs['run']}", {"run": inputs["run"]}
    return " of the branch's latest failed CI run", {}


PHASES = EarlierPhases(WORKFLOW, WHAT, _same_source, _subject)


def phase_data(ctx: PhaseContext, number: int) -> dict[str, Any] | None:
    return PHASES.data(ctx, number)


def needs(ctx: PhaseContext, *numbers: int) -> dict[int, dict[str, Any]] | PhaseFailed:
    return PHASES.needs(ctx, *numbers)
