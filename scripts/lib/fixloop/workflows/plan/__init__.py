"""The execute-plan workflow (`/fixloop:execute-plan PLAN_PATH`): read a written plan (docs/plans.md), check
it against the project, cut its pending tasks into batches, carry them out batch by batch (one
task-implementer call per batch, checked by the project's verification commands, finished tasks checked
off in the plan file), review the changes and report every task's status."""

from __future__ import annotations

from fixloop.workflows.phase import Phase
from fixloop.workflows.plan.execute import ExecutePhase
from fixloop.workflows.plan.prepare import BatchPhase, LoadPhase, ValidatePhase
from fixloop.workflows.plan.report import ReportPhase
from fixloop.workflows.plan.review import PlanReviewPhase

PLAN_PHASES: tuple[Phase, ...] = (
    LoadPhase(),
    ValidatePhase(),
    BatchPhase(),
    ExecutePhase(),
    PlanReviewPhase(),
    ReportPhase(),
)
