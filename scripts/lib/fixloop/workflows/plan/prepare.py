"""Phases 0-2 of execute-plan, engine only: read the plan, check it against the project, cut it in batches.

Phase 0 fails with PLAN_NOT_FOUND, PLAN_OUTSIDE_PROJECT or PLAN_INVALID (every problem with its line); a
plan whose tasks are all checked off ends the run at once. Phase 1 fails with PLAN_INVALID naming each
problem (PLAN_TASK_EMPTY, PLAN_FILE_MISSING, PLAN_FILE_OUTSIDE_ROOT, PLAN_DEPENDENCY_CYCLE) and warns of
the rest (PLAN_TASK_DUPLICATE, PLAN_FILE_TO_CREATE, PLAN_DONE_BEFORE_DEPENDENCY). Phase 2 cuts the pending
tasks into batches of at most three (fixloop.plans.batches): the run resumes at the first task not done.
"""

from __future__ import annotations

from typing import Any

from fixloop.plans import Finding, validate
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed, RunDone
from fixloop.workflows.phase import Phase
from fixloop.workflows.plan import statuses
from fixloop.workflows.plan.record import batched, loaded, plan_of, read_plan


class LoadPhase(Phase):
    """Phase 0: the plan file, read and parsed."""

    def step(self, ctx: PhaseContext) -> Outcome:
        record = read_plan(ctx)
        if isinstance(record, PhaseFailed):
            return record
        tasks = record["tasks"]
        done = sum(1 for item in tasks if item.get("done"))
        summary = {
            "file": record["path"],
            "title": record["title"],
            "tasks": len(tasks),
            "done": done,
            "pending": len(tasks) - done,
        }
        ctx.emit("I", "DATA_COLLECTED", data_type="plan", summary=summary)
        if done == len(tasks):
            ctx.data["final_lines"] = [f"Plan {record['path']}: all {done} task(s) are already done."]
            ctx.data["summary_fields"] = statuses.summary_fields(record)
            return RunDone("success", "success", "plan_complete", summary)
        return PhaseDone("success", summary)


class ValidatePhase(Phase):
    """Phase 1: the plan checked against the project; problems fail the run, warnings are logged."""

    def step(self, ctx: PhaseContext) -> Outcome:
        record = loaded(ctx)
        if isinstance(record, PhaseFailed):
            return record
        checked = validate(plan_of(record), ctx.root)
        record["warnings"] = [_finding(item) for item in checked.warnings]
        for item in checked.warnings:
            ctx.warn(item.code, item.message, task_id=item.task_id, line=item.line)
        summary = {"problems": len(checked.problems), "warnings": len(checked.warnings)}
        if checked.problems:
            ordered = sorted(checked.problems, key=lambda item: (item.line is None, item.line or 0))
            problems = [_finding(item) for item in ordered]
            message = "; ".join(
                f"line {item['line']}: {item['message']}" if item["line"] else str(item["message"])
                for item in problems
            )
            return PhaseFailed(
                "PLAN_INVALID",
                f"The plan {record['path']} cannot be carried out as written: {message}.",
                details={
                    "source": record["path"],
                    "line": problems[0]["line"],
                    "problems": problems,
                    "recoverable": False,
                },
            )
        return PhaseDone("success", summary)


class BatchPhase(Phase):
    """Phase 2: the pending tasks in execution order, cut into batches."""

    def step(self, ctx: PhaseContext) -> Outcome:
        record = batched(ctx)
        if isinstance(record, PhaseFailed):
            return record
        groups: list[list[int]] = record["batches"]
        done = statuses.grouped(record).get(statuses.ALREADY_DONE, [])
        result = {
            "batches": groups,
            "tasks": sum(len(group) for group in groups),
            "resume_at": groups[0][0] if groups else None,
            "already_done": len(done),
        }
        ctx.emit("I", "ANALYSIS_RESULT", analysis_type="plan_batches", result=result)
        return PhaseDone("success", result)


def _finding(item: Finding) -> dict[str, Any]:
    return {"task_id": item.task_id, "line": item.line, "code": item.code, "message": item.message}
