"""Phase 3 of execute-plan: the batches, one after the other, each carried out by one task-implementer call
and checked by the engine.

For each batch: the engine snapshots the project and dispatches the task implementer with the batch's
tasks; once it answered (each task done or failed), the engine measures the files changed, checks each
`done` against the recorded edits (workflows.plan.changes: TASK_UNVERIFIED when they do not back it) and
runs the project's verification commands (Work "verification"). A batch whose tasks are all done and whose
checks pass is green: its tasks are checked off `[x]` in the plan file and get status done. Otherwise the
implementer is called once more with what failed (the failed tasks' reasons, the failed checks' output);
when the batch is still not green the phase fails with PLAN_BATCH_FAILED, naming what is done, what failed
and why, and the run stops there. Started again on the same plan, a run resumes at the first task not
checked off. A dry run skips the phase and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.contracts.plan import TASK_IMPLEMENTER
from fixloop.review.state import Problem
from fixloop.runs.verification import configured_commands
from fixloop.workflows.claims import TASK_UNVERIFIED
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Call, Dispatch, Outcome, PhaseDone, PhaseFailed, Work
from fixloop.workflows.phase import Phase
from fixloop.workflows.plan import statuses
from fixloop.workflows.plan.changes import (
    UNVERIFIED_CLAIM,
    changed_files,
    check_claims,
    check_off,
    edited_files,
    take_snapshot,
)
from fixloop.workflows.plan.record import COMMAND, batched, plan_record, resume_at, tasks_by_id
from fixloop.workflows.plan.statuses import ids_text, tasks_text
from fixloop.workflows.plan.tasks import failed_steps, implementer_task

MAX_ATTEMPTS = 2  # the first call, and one retry with what failed
ROLE = "implementer"  # the config's `models` role of agents that change code to a plan
VERIFICATION = "verification"
IMPLEMENTING, VERIFYING = "implementing", "verifying"


def tasks_problem(batch: list[int], answered: list[int]) -> Problem | None:
    """TASKS_MISMATCH when an answer does not give exactly one outcome per task of the batch."""
    wanted = set(batch)
    violations = [
        {"path": "$.tasks", "message": f"no outcome for task {t}"} for t in batch if t not in answered
    ]
    violations += [
        {"path": "$.tasks", "message": f"task {t} is not in this batch"} for t in answered if t not in wanted
    ]
    if not violations:
        return None
    return {
        "code": "TASKS_MISMATCH",
        "message": "The answer's tasks do not match the batch: "
        + "; ".join(item["message"] for item in violations[:5]),
        "violations": violations,
        "hint": f"Give exactly one entry in tasks for each task of the batch ({ids_text(batch)}).",
    }


class ExecutePhase(Phase):
    agents = (TASK_IMPLEMENTER,)

    def step(self, ctx: PhaseContext) -> Outcome:
        record = batched(ctx)
        if isinstance(record, PhaseFailed):
            return record
        groups: list[list[int]] = record["batches"]
        if ctx.dry_run:
            return PhaseDone("skipped", {"reason": "dry_run", "batches": len(groups)})
        data = ctx.data
        data.setdefault("index", 0)
        data.setdefault("files_changed", [])
        while data["index"] < len(groups):
            stage = data.get("stage")
            if stage is None:
                return self._dispatch(ctx, record, groups)
            outcome = (
                self._answered(ctx, record, groups)
                if stage == IMPLEMENTING
                else self._verified(ctx, record, groups)
            )
            if outcome is not None:
                return outcome
        data["summary_fields"] = statuses.summary_fields(record)
        done = statuses.grouped(record).get(statuses.DONE, [])
        return PhaseDone(
            "success",
            {"batches": len(groups), "tasks_done": done, "files_changed": len(data["files_changed"])},
        )

    # ---- the stages of one batch ----------------------------------------------------------------------

    def _dispatch(self, ctx: PhaseContext, record: dict[str, Any], groups: list[list[int]]) -> Dispatch:
        data = ctx.data
        index = int(data["index"])
        batch = groups[index]
        attempt = int(data.get("attempt") or 0) + 1
        if attempt == 1:
            data.update(batch_started_ms=ctx.now, previous=None, edited=None)
            ctx.emit("I", "STEP_START", **_step(index, groups))
        taken = take_snapshot(ctx, _named_files(record, batch), index + 1)
        data.update(attempt=attempt, stage=IMPLEMENTING, snapshot=taken, answer=None)
        task = implementer_task(
            record, batch, (index + 1, len(groups)), configured_commands(ctx.config), data.get("previous")
        )
        description = f"Plan batch {index + 1}/{len(groups)}: {tasks_text(batch)}"
        label = f"carry out plan batch {index + 1} of {len(groups)}"
        if attempt > 1:
            label += f" (attempt {attempt})"
        return Dispatch((Call(TASK_IMPLEMENTER, description, task, ROLE),), label)

    def _answered(self, ctx: PhaseContext, record: dict[str, Any], groups: list[list[int]]) -> Outcome | None:
        data = ctx.data
        batch = groups[int(data["index"])]
        document = ctx.document(TASK_IMPLEMENTER)
        files = changed_files(ctx, data.get("snapshot"), document, str(record["path"]))
        data["files_changed"] = sorted({*data["files_changed"], *files})
        edited = edited_files(ctx, data.get("snapshot"), files)
        if edited is not None:  # kept over the batch's attempts: a task done by attempt 1 stays proven
            data["edited"] = sorted({*(data.get("edited") or []), *edited})
        if document is None or document.get("status") != "success":
            error = (document or {}).get("error") or {}
            data["previous"] = {
                "attempt": data["attempt"],
                "no_answer": document is None,
                "agent_error": error.get("message"),
            }
            self._history(ctx, files=files)
            recoverable = document is None or bool(error.get("recoverable"))
            if recoverable and data["attempt"] < MAX_ATTEMPTS:
                data["stage"] = None
                return None
            return self._stop(ctx, record, groups, None)
        data["answer"] = {
            str(item["task_id"]): {
                "status": item["status"],
                "files": list(item.get("files") or []),
                "reason": item.get("reason"),
            }
            for item in document.get("tasks") or []
        }
        check_claims(ctx, record, data["answer"], data.get("edited"), data["index"] + 1)
        self._history(ctx, files=files)
        existing = {path for path in _named_files(record, batch) if (ctx.root / path).exists()}
        # The checks run after every batch: verification skips its commands when it is given no file, so a
        # batch that changed and names none (its work was already there) gives the plan file.
        changed = sorted({*data["files_changed"], *existing} - {record["path"]})
        ctx.state["changed_files"] = changed or [str(record["path"])]
        data["stage"] = VERIFYING
        return Work(VERIFICATION, {"batch": data["index"] + 1, "attempt": data["attempt"]})

    def _verified(self, ctx: PhaseContext, record: dict[str, Any], groups: list[list[int]]) -> Outcome | None:
        data = ctx.data
        result = ctx.work_result(VERIFICATION)
        if not isinstance(result, Mapping):  # the work did not come back: ask for it again
            return Work(VERIFICATION, {"batch": data["index"] + 1, "attempt": data["attempt"]})
        ctx.forget_work(VERIFICATION)
        verification = dict(result)
        batch = groups[int(data["index"])]
        answer = data.get("answer") or {}
        failed = [
            [task_id, (answer.get(str(task_id)) or {}).get("reason") or "no outcome given"]
            for task_id in batch
            if (answer.get(str(task_id)) or {}).get("status") != "done"
        ]
        self._history(ctx, verification=verification)
        if verification.get("passed") and not failed:
            self._green(ctx, record, groups)
            return None
        if data["attempt"] < MAX_ATTEMPTS:
            data["previous"] = {
                "attempt": data["attempt"],
                "failed_tasks": failed,
                "verification": verification,
            }
            data["stage"] = None
            return None
        return self._stop(ctx, record, groups, verification)

    # ---- the end of a batch ----------------------------------------------------------------------------

    def _green(self, ctx: PhaseContext, record: dict[str, Any], groups: list[list[int]]) -> None:
        data = ctx.data
        index = int(data["index"])
        batch = groups[index]
        check_off(ctx, record, batch)
        answer = data.get("answer") or {}
        for task_id in batch:
            files = (answer.get(str(task_id)) or {}).get("files")
            statuses.settle(
                record, task_id, statuses.DONE, batch=index + 1, attempts=data["attempt"], files=files
            )
        ctx.emit("I", "STEP_END", **_step(index, groups), **self._ended(ctx, "success"))
        data.update(index=index + 1, attempt=0, stage=None, previous=None, answer=None, snapshot=None)

    def _stop(
        self,
        ctx: PhaseContext,
        record: dict[str, Any],
        groups: list[list[int]],
        verification: Mapping[str, Any] | None,
    ) -> PhaseFailed:
        data = ctx.data
        index = int(data["index"])
        batch = groups[index]
        answer = data.get("answer") or {}
        previous = data.get("previous") or {}
        passed = bool(verification and verification.get("passed"))
        broken = failed_steps(verification)
        trouble = previous.get("agent_error")
        no_work = f"could not work ({trouble})" if trouble else "gave no valid answer"
        done: list[int] = []
        for task_id in batch:
            given = answer.get(str(task_id))
            fields: dict[str, Any] = {"batch": index + 1, "attempts": data["attempt"]}
            if given is None:
                statuses.settle(
                    record, task_id, statuses.FAILED, reason=f"the implementer {no_work}", **fields
                )
            elif given["status"] == UNVERIFIED_CLAIM:
                statuses.settle(
                    record,
                    task_id,
                    statuses.UNVERIFIED,
                    reason=given["reason"],
                    code=TASK_UNVERIFIED,
                    files=given["files"],
                    **fields,
                )
            elif given["status"] != "done":
                reason = given.get("reason") or "no reason given"
                statuses.settle(
                    record, task_id, statuses.FAILED, reason=reason, files=given["files"], **fields
                )
            elif passed:
                done.append(task_id)
                statuses.settle(record, task_id, statuses.DONE, files=given["files"], **fields)
            else:
                reason = f"the checks failed after its batch: {', '.join(broken) or 'verification'}"
                statuses.settle(
                    record, task_id, statuses.UNVERIFIED, reason=reason, files=given["files"], **fields
                )
        check_off(ctx, record, done)
        ctx.emit("I", "STEP_END", **_step(index, groups), **self._ended(ctx, "failed"))
        why = _why(answer, batch, verification, broken, no_work)
        resume = resume_at(record)
        message = (
            f"Batch {index + 1} of {len(groups)} ({tasks_text(batch)}) is not done after "
            f"{data['attempt']} attempt(s) of the task implementer: {why}. Its changes are still in place. "
            f"Fix what fails, then run {COMMAND} {record['path']} again: it resumes at task {resume}."
        )
        data["final_lines"] = statuses.report_lines(record)
        data["summary_fields"] = statuses.summary_fields(record)
        data["stage"] = "stopped"
        return PhaseFailed(
            "PLAN_BATCH_FAILED",
            message,
            details={
                "batch": index + 1,
                "tasks": batch,
                "failed_checks": broken,
                "resume_at": resume,
                "recoverable": False,
            },
        )

    # ---- bookkeeping ---------------------------------------------------------------------------------

    def _ended(self, ctx: PhaseContext, status: str) -> dict[str, Any]:
        return {"status": status, "duration_ms": max(0, ctx.now - int(ctx.data.get("batch_started_ms") or 0))}

    def _history(
        self,
        ctx: PhaseContext,
        *,
        files: list[str] | None = None,
        verification: Mapping[str, Any] | None = None,
    ) -> None:
        """One entry per attempt: its batch, the tasks' outcomes and the files changed, then the checks."""
        data = ctx.data
        attempts: list[dict[str, Any]] = data.setdefault("attempts", [])
        if files is not None:
            answer = data.get("answer") or {}
            attempts.append(
                {
                    "batch": data["index"] + 1,
                    "attempt": data["attempt"],
                    "tasks": {task_id: item["status"] for task_id, item in answer.items()},
                    "files": files,
                    "verification": None,
                }
            )
        if verification is not None and attempts:
            attempts[-1]["verification"] = {
                "status": verification.get("status"),
                "failed": failed_steps(verification),
            }

    def record(
        self,
        ctx: PhaseContext,
        agent: str,
        document: Mapping[str, Any] | None,
        error: Mapping[str, Any] | None,
        *,
        provenance: str,
        agent_id: str | None,
    ) -> dict[str, Any]:
        groups = plan_record(ctx.state).get("batches") or []
        index = ctx.data.get("index")
        waiting = ctx.data.get("stage") == IMPLEMENTING and isinstance(index, int) and index < len(groups)
        if waiting and document is not None and error is None and document.get("status") == "success":
            answered = [int(item["task_id"]) for item in document.get("tasks") or []]
            problem = tasks_problem(groups[int(index or 0)], answered)
            if problem is not None:
                document, error = None, problem
        return super().record(ctx, agent, document, error, provenance=provenance, agent_id=agent_id)


def _named_files(record: dict[str, Any], batch: list[int]) -> list[str]:
    """The files the batch's tasks name in the plan."""
    by_id = tasks_by_id(record)
    return [str(path) for task_id in batch for path in by_id[task_id].get("files") or []]


def _step(index: int, groups: list[list[int]]) -> dict[str, Any]:
    return {
        "agent": TASK_IMPLEMENTER,
        "step": f"plan_batch_{index + 1}",
        "step_name": f"Batch {index + 1}: {tasks_text(groups[index])}",
        "step_index": index + 1,
        "total_steps": len(groups),
    }


def _why(
    answer: Mapping[str, Any],
    batch: list[int],
    verification: Mapping[str, Any] | None,
    broken: list[str],
    no_work: str,
) -> str:
    if not answer:
        return f"the implementer {no_work}"
    reasons = []
    for task_id in batch:
        given = answer.get(str(task_id)) or {}
        if given.get("status") != "done":
            what = "is not verified" if given.get("status") == UNVERIFIED_CLAIM else "failed"
            reasons.append(f"task {task_id} {what} ({given.get('reason') or 'no reason given'})")
    if verification is not None and not verification.get("passed"):
        checks = [f"{name}: `{(verification.get(name) or {}).get('command')}`" for name in broken]
        reasons.append(f"the checks failed ({'; '.join(checks) or 'verification'})")
    return "; ".join(reasons) or "the batch is not green"
