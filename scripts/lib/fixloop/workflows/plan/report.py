"""Phase 5 of execute-plan: the report of every task's status, for the final message and the run's summary.

The statuses are this run's (workflows.plan.statuses). A run that did not carry out the plan itself (a dry
run, or one started at this phase) reports what the plan file says: checked tasks are already done, the
others not run; a dry run also lists the batches it would have run.
"""

from __future__ import annotations

from fixloop.runs.phasebook import phase_key
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed
from fixloop.workflows.phase import Phase
from fixloop.workflows.plan import statuses
from fixloop.workflows.plan.record import batched, loaded
from fixloop.workflows.plan.statuses import tasks_text

EXECUTE = 3


class ReportPhase(Phase):
    def step(self, ctx: PhaseContext) -> Outcome:
        executed = phase_key(EXECUTE) in (ctx.state.get("phases_completed") or [])
        record = batched(ctx) if ctx.dry_run else loaded(ctx)
        if isinstance(record, PhaseFailed):
            return record
        if "outcomes" not in record:
            statuses.start(record)
        lines = statuses.report_lines(record)
        if ctx.dry_run:
            groups = record.get("batches") or []
            cut = "; ".join(f"batch {number}: {tasks_text(group)}" for number, group in enumerate(groups, 1))
            lines.append(
                f"Dry run: nothing was changed. The plan would run in {len(groups)} batch(es): {cut}."
            )
        elif not executed:
            lines.append("This run did not carry out the plan: the statuses are the plan file's.")
        groups_by_status = statuses.grouped(record)
        ctx.data["final_lines"] = lines
        ctx.data["summary_fields"] = statuses.summary_fields(record)
        result = {status: len(ids) for status, ids in groups_by_status.items()}
        ctx.emit(
            "I", "ANALYSIS_RESULT", analysis_type="plan_report", result={"plan": record["path"], **result}
        )
        return PhaseDone("success", {"tasks": groups_by_status})
