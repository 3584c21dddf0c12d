"""fix-ci phase 1, fetch the job log: `gh run view RUN --log-failed` (of the one job `--job` names) into the
run's folder, or the user's log file, reduced by the engine to its failures (workflows.ci.logfailures).

The raw log never enters the run state or a task: only the bounded failures do, with the log's path and an
account of what was left out. A log that shows no failure ends the run (WARNING NO_FAILURE_FOUND); a run
whose failed steps left no log gets one failure per failed step, from the run's own record.
"""

from __future__ import annotations

from typing import Any

from fixloop.workflows.ci.inputs import needs
from fixloop.workflows.ci.logfailures import STEP_KIND
from fixloop.workflows.ci.performers import CI_LOG
from fixloop.workflows.ci.source import GITHUB, failed, no_failure
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed, Work
from fixloop.workflows.phase import Phase

LOG_FIELDS = ("path", "bytes", "lines_read", "lines_kept", "failures_dropped", "notes")


def _params(ctx: PhaseContext, source: dict[str, Any]) -> dict[str, Any]:
    if source.get("source") != GITHUB:
        return {"source": "log_file", "path": source["log_file"], "phase": ctx.phase_key}
    job = source.get("job")
    return {
        "source": GITHUB,
        "run_ref": str((ctx.state.get("inputs") or {}).get("run") or ""),
        "run_id": source["run"]["id"],
        "job_id": job["id"] if isinstance(job, dict) else None,
        "phase": ctx.phase_key,
    }


def failed_steps(source: dict[str, Any]) -> list[dict[str, Any]]:
    """The failed steps the run's record names (for a failed log that came back empty)."""
    job = source.get("job")
    jobs = [job] if isinstance(job, dict) else list((source.get("run") or {}).get("jobs") or [])
    found: list[dict[str, Any]] = []
    for item in jobs:
        for step in item.get("failed_steps") or []:
            found.append(
                {
                    "id": f"F{len(found) + 1}",
                    "runner": None,
                    "test_id": f"{item['name']} / {step}",
                    "kind": STEP_KIND,
                    "message": "The step failed and GitHub kept no log of it.",
                    "file": None,
                    "line": None,
                    "details": "",
                    "suite": None,
                    "job": item["name"],
                    "step": step,
                    "lines_dropped": 0,
                }
            )
    return found


class FetchPhase(Phase):
    def step(self, ctx: PhaseContext) -> Outcome:
        inputs = needs(ctx, 0)
        if isinstance(inputs, PhaseFailed):
            return inputs
        source = inputs[0]
        data = ctx.data
        if "failures" not in data:
            result = ctx.work_result(CI_LOG)
            if result is None:
                return Work(CI_LOG, _params(ctx, source))
            if not result.get("ok"):
                return failed(result, "CI_LOG_UNAVAILABLE")
            data["log"] = {key: result.get(key) for key in LOG_FIELDS}
            data["failures"] = list(result.get("failures") or [])
            if not data["failures"] and source.get("source") == GITHUB:
                data["failures"] = failed_steps(source)
            data["failed"] = bool(result.get("failed")) or bool(data["failures"])
            ctx.forget_work(CI_LOG)  # kept once, in the phase's data
            self._collected(ctx, source)
        if not data["failed"] or not data["failures"]:
            where = data["log"]["path"]
            return no_failure(ctx, f"The log ({where}) shows no failure: there is nothing to fix.")
        return PhaseDone("success", self._summary(data))

    def _collected(self, ctx: PhaseContext, source: dict[str, Any]) -> None:
        log = ctx.data["log"]
        summary = {
            "source": source.get("source"),
            "file": log["path"],
            "bytes": log["bytes"],
            "lines": log["lines_read"],
            "lines_kept": log["lines_kept"],
            "failures": len(ctx.data["failures"]),
            "failures_dropped": log["failures_dropped"],
        }
        ctx.emit("I", "DATA_COLLECTED", data_type="ci_log", summary=summary)

    def _summary(self, data: dict[str, Any]) -> dict[str, Any]:
        log = data["log"]
        return {
            "failures": len(data["failures"]),
            "failures_dropped": log["failures_dropped"],
            "lines_read": log["lines_read"],
            "lines_kept": log["lines_kept"],
        }
