"""fix-ci phase 0, initialize: what failed in CI, a GitHub Actions run or any CI's log file.

A run (its id, its URL, or nothing: the current branch's latest failed run) is found through the user's gh:
gh installed and logged in, the checkout's GitHub remote (GH_UNAVAILABLE, GH_AUTH_REQUIRED,
NO_GITHUB_REMOTE, as for fix-pr-review), the run and, with `--job NAME` or a job's URL, its job. A run or
job that did not fail ends the run with WARNING NO_FAILURE_FOUND; a run still going fails with
CI_RUN_IN_PROGRESS. A run made on another commit than the checkout's HEAD: WARNING CI_SHA_MISMATCH.
`--log-file PATH` (GitLab, Jenkins, CircleCI, Buildkite, ...) needs no gh: the file must exist.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fixloop.github.runs import FAILED_CONCLUSIONS
from fixloop.workflows.ci.inputs import source_inputs
from fixloop.workflows.ci.performers import CI_RUN
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed, RunDone, Work
from fixloop.workflows.phase import Phase

GITHUB, LOG_FILE = "github", "log_file"


def failed(result: dict[str, Any], fallback: str) -> PhaseFailed:
    details = dict(result.get("details") or {})
    return PhaseFailed(
        str(result.get("code") or fallback), str(result.get("message") or fallback), details=details
    )


def no_failure(ctx: PhaseContext, message: str) -> RunDone:
    ctx.warn("NO_FAILURE_FOUND", message, impact="the run ends without changes")
    ctx.data["final_lines"] = [message]
    return RunDone("skipped", "success", "no_failure_found", {"reason": "no_failure_found"})


def log_path(ctx: PhaseContext, given: str) -> Path:
    path = Path(given).expanduser()
    return path if path.is_absolute() else ctx.root / path


class SourcePhase(Phase):
    def step(self, ctx: PhaseContext) -> Outcome:
        data = ctx.data
        if "source" in data:
            return PhaseDone("success", self._summary(data))
        inputs = source_inputs(ctx.state)
        if inputs["log_file"] and (inputs["run"] or inputs["job"]):
            given = "a run" if inputs["run"] else "--job"
            return PhaseFailed(
                "CONFLICTING_ARGUMENTS",
                f"Give either --log-file PATH or {given}, not both: --job picks a job of a GitHub Actions "
                "run, and a log file is one job's log already.",
                details={
                    "arguments": ["--log-file", "--job" if inputs["job"] else "run"],
                    "recoverable": False,
                },
            )
        if inputs["log_file"]:
            return self._log_file(ctx, inputs["log_file"])
        result = ctx.work_result(CI_RUN)
        if result is None:
            return Work(CI_RUN, {"run": inputs["run"] or "", "job": inputs["job"], "phase": ctx.phase_key})
        if not result.get("ok"):
            return failed(result, "CI_RUN_UNAVAILABLE")
        return self._github(ctx, result)

    def _log_file(self, ctx: PhaseContext, given: str) -> Outcome:
        path = log_path(ctx, given)
        if not path.is_file() or not os.access(path, os.R_OK):
            return PhaseFailed(
                "LOG_FILE_NOT_FOUND",
                f"No readable log file at {path}: save the failed job's log (plain text, or gzip ending in "
                ".gz) and pass its path with --log-file.",
                details={"path": str(path), "recoverable": False},
            )
        size = path.stat().st_size
        ctx.data.update({"source": LOG_FILE, "log_file": str(path), "bytes": size})
        summary = {"source": LOG_FILE, "file": str(path), "bytes": size}
        ctx.emit("I", "DATA_COLLECTED", data_type="ci_source", summary=summary)
        return PhaseDone("success", self._summary(ctx.data))

    def _github(self, ctx: PhaseContext, result: dict[str, Any]) -> Outcome:
        run, job = result.get("run"), result.get("job")
        if not isinstance(run, dict):
            branch = result.get("branch") or "the current branch"
            return no_failure(ctx, f"No failed GitHub Actions run of {branch} among its latest runs.")
        if run["status"] != "completed":
            return PhaseFailed(
                "CI_RUN_IN_PROGRESS",
                f"Run {run['id']} is {run['status'] or 'not finished'}: its logs are not complete. Wait for "
                f"it (`gh run watch {run['id']}`), then start again.",
                details={"run": run["id"], "suggestion": f"gh run watch {run['id']}", "recoverable": False},
            )
        what = f"job {job['name']!r} of run {run['id']}" if job else f"run {run['id']}"
        conclusion = (job or run).get("conclusion")
        if conclusion not in FAILED_CONCLUSIONS:
            return no_failure(
                ctx, f"The {what} did not fail (conclusion {conclusion}): there is nothing to fix."
            )
        head, local = str(run.get("head_sha") or ""), result.get("local_head")
        ctx.data.update(
            {
                "source": GITHUB,
                "run": run,
                "job": job,
                "repository": result.get("repository"),
                "repo_args": list(result.get("repo_args") or []),
                "local_head": local,
                "sha_match": bool(local) and local == head,
            }
        )
        if not ctx.data["sha_match"]:
            here = str(local)[:12] if local else "no commit"
            ctx.warn(
                "CI_SHA_MISMATCH",
                f"Run {run['id']} ran on commit {head[:12]}, the checkout is at {here}: what fails locally "
                f"may differ (check out {head[:12]} to match the CI exactly).",
                impact="the failures may not reproduce locally, or differently",
                run_sha=head,
                local_sha=local,
            )
        summary = {"source": GITHUB, "run": run["id"], "job": job["name"] if job else None, "url": run["url"]}
        ctx.emit("I", "DATA_COLLECTED", data_type="ci_source", summary=summary)
        return PhaseDone("success", self._summary(ctx.data))

    def _summary(self, data: dict[str, Any]) -> dict[str, Any]:
        if data.get("source") == LOG_FILE:
            return {"source": LOG_FILE, "log_file": data["log_file"], "bytes": data["bytes"]}
        job = data.get("job")
        return {
            "source": GITHUB,
            "run": data["run"]["id"],
            "job": job["name"] if isinstance(job, dict) else None,
            "sha_match": data["sha_match"],
        }
