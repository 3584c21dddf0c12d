"""The engine work of fix-ci, done outside the state lock: finding the GitHub Actions run, fetching and
reducing the failed log, and running the local checks that reproduce (then prove fixed) the failures.

A performer never raises for gh's or GitHub's refusal: it returns {"ok": false, "code", "message"} and the
phase decides. `register()` adds them to the engine's work kinds (workflows.work).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fixloop.core import timekeeping
from fixloop.core.errors import FixloopError
from fixloop.failures import reduce_log_file
from fixloop.github.gh import Gh
from fixloop.github.preflight import require_gh
from fixloop.github.pulls import check_auth, checkout_repository
from fixloop.github.runs import (
    download_failed_log,
    latest_failed_run,
    parse_run_reference,
    select_job,
    view_run,
)
from fixloop.runs import lifecycle
from fixloop.runs.lifecycle import Clock
from fixloop.store import gitfiles, layout
from fixloop.workflows import work
from fixloop.workflows.ci.checks import run_checks
from fixloop.workflows.ci.logfailures import LIMITS, log_failures

CI_RUN = "ci-run"
CI_LOG = "ci-log"
CI_CHECKS = "ci-checks"
CI_DIR = "ci"  # in the run's folder: the raw log gh gave, the report
RAW_LOG = "failed.log"
LOG_TIMEOUT_SECONDS = 600.0


def failure(error: FixloopError) -> dict[str, Any]:
    return {"ok": False, "code": error.code, "message": error.message, "details": dict(error.details)}


def project_of(state: dict[str, Any]) -> Path:
    return Path(str(state["project_dir"]))


def ci_dir(root: Path, state: dict[str, Any]) -> Path:
    folder = Path(layout.run_dir(root, str(state["run_id"]))) / CI_DIR
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def local_head(project: Path) -> str | None:
    done = gitfiles.run_git(project, "rev-parse", "--verify", "-q", "HEAD", check=False)
    sha = done.stdout.decode("utf-8", "replace").strip()
    return sha if done.returncode == 0 and sha else None


def _find_run(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> Any:
    """gh, its login and the repository checked; the run (the branch's latest failed one when none was
    named) with its jobs, the job `--job` or the URL names, and the checkout's HEAD."""
    project = project_of(state)
    gh = Gh(project)
    try:
        ref = parse_run_reference(str(params.get("run") or ""))
        require_gh(gh)
        check_auth(gh)
        if ref.host is None:
            checkout_repository(gh)
        branch = gitfiles.current_branch(project)
        run_id = ref.run_id if ref.run_id is not None else latest_failed_run(gh, ref, branch)
        run = view_run(gh, ref, run_id) if run_id is not None else None
        job = None
        if run is not None and (params.get("job") or ref.job_id is not None):
            job = select_job(run["jobs"], params.get("job"), ref.job_id)
    except FixloopError as error:
        return failure(error)
    return {
        "ok": True,
        "run": run,
        "job": job,
        "branch": branch,
        "repository": ref.repository,
        "repo_args": ref.repo_args,
        "local_head": local_head(project),
    }


def _fetch_log(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> Any:
    """The failed log (gh's `--log-failed`, kept in the run's folder, or the user's file) reduced to its
    failures; only those go into the run state and to agents."""
    log = lifecycle.run_log(state, clock)
    step = {
        "phase": params.get("phase"),
        "agent": "engine",
        "step": "ci_log",
        "step_name": "Fetch and reduce the failed log",
        "step_index": 1,
        "total_steps": 1,
    }
    log.emit("I", "STEP_START", **step)
    started = timekeeping.now_ms(clock)
    from_github = params.get("source") == "github"
    try:
        if from_github:
            path = ci_dir(root, state) / RAW_LOG
            ref = parse_run_reference(str(params.get("run_ref") or ""))
            gh = Gh(project_of(state), timeout=LOG_TIMEOUT_SECONDS)
            download_failed_log(gh, ref, int(params["run_id"]), params.get("job_id"), path)
        else:
            path = Path(str(params["path"]))
        reduced = reduce_log_file(path, LIMITS)
    except FixloopError as error:
        took = timekeeping.now_ms(clock) - started
        log.emit("I", "STEP_END", **step, status="failed", duration_ms=max(0, took))
        return failure(error)
    took = timekeeping.now_ms(clock) - started
    log.emit("I", "STEP_END", **step, status="success", duration_ms=max(0, took))
    return {
        "ok": True,
        "path": str(path),
        "bytes": path.stat().st_size,
        **log_failures(reduced, only_failed_steps=from_github),
    }


def register() -> None:
    work.register(CI_RUN, _find_run)
    work.register(CI_LOG, _fetch_log)
    work.register(CI_CHECKS, run_checks)
