"""GitHub Actions runs through gh: what the user named (a run id, a run or job URL, or nothing: the current
branch's latest failed run), one run with its jobs, and the log of a run's failed steps streamed to a file."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fixloop.core.errors import FixloopError
from fixloop.github.gh import Gh

RUN_FIELDS = "databaseId,headSha,status,conclusion,url,workflowName,headBranch,jobs"
LIST_FIELDS = "databaseId,status,conclusion,headSha,workflowName,headBranch"
LIST_LIMIT = 20
# Conclusions of a run, job or step that failed (a cancelled or skipped one did not fail).
FAILED_CONCLUSIONS = frozenset({"failure", "timed_out", "startup_failure"})
_RUN_ID = re.compile(r"#?([1-9][0-9]{0,19})")
_RUN_PATH = re.compile(
    r"/([^/]+)/([^/]+)/actions/runs/([1-9][0-9]{0,19})(?:/job/([1-9][0-9]{0,19}))?(?:/attempts/[0-9]+)?/?"
)
RUN_URL_EXAMPLE = "https://github.com/OWNER/REPO/actions/runs/1234567890"


@dataclass(frozen=True)
class RunRef:
    """A run as the user named it: an id, a URL (of the run or of one of its jobs), or nothing."""

    text: str
    run_id: int | None = None
    job_id: int | None = None
    host: str | None = None
    owner: str | None = None
    name: str | None = None

    @property
    def repo_args(self) -> list[str]:
        """gh's `-R HOST/OWNER/REPO` for a URL's repository (nothing: the checkout's)."""
        return ["-R", f"{self.host}/{self.owner}/{self.name}"] if self.host else []

    @property
    def repository(self) -> str | None:
        return f"{self.owner}/{self.name}" if self.owner else None


def parse_run_reference(text: str) -> RunRef:
    """`1234567890`, `#1234567890`, `https://HOST/OWNER/REPO/actions/runs/ID[/job/JOB]`, or "" (the current
    branch's latest failed run); anything else is INVALID_RUN_REFERENCE."""
    given = text.strip()
    if not given:
        return RunRef("")
    match = _RUN_ID.fullmatch(given)
    if match:
        return RunRef(given, int(match[1]))
    parts = urlsplit(given)
    path = _RUN_PATH.fullmatch(parts.path)
    if parts.scheme in ("http", "https") and parts.netloc and path:
        job = int(path[4]) if path[4] else None
        return RunRef(given, int(path[3]), job, parts.netloc.lower(), path[1], path[2])
    raise FixloopError(
        "INVALID_RUN_REFERENCE",
        f"{given!r} names no GitHub Actions run: give its id (e.g. 1234567890) or its URL "
        f"({RUN_URL_EXAMPLE}); for another CI, save the failed job's log and pass it with --log-file PATH.",
        received=given,
    )


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _job(item: Mapping[str, Any]) -> dict[str, Any]:
    steps = [step for step in item.get("steps") or [] if isinstance(step, Mapping)]
    return {
        "id": item.get("databaseId"),
        "name": str(item.get("name") or ""),
        "status": item.get("status"),
        "conclusion": item.get("conclusion"),
        "url": item.get("url"),
        "failed_steps": [str(s.get("name")) for s in steps if s.get("conclusion") in FAILED_CONCLUSIONS],
    }


def view_run(gh: Gh, ref: RunRef, run_id: int) -> dict[str, Any]:
    """The run: id, url, workflow, head_branch, head_sha, status, conclusion and its jobs (id, name, status,
    conclusion, url, failed_steps). CI_RUN_NOT_FOUND when GitHub has no such run."""
    result = gh.run("run", "view", str(run_id), *ref.repo_args, "--json", RUN_FIELDS)
    document = _json(result.stdout) if result.ok else None
    if not isinstance(document, dict) or not isinstance(document.get("databaseId"), int):
        said = result.error_text()
        if "404" in said or "Not Found" in said or "could not find" in said.lower():
            where = ref.repository or "this repository"
            raise FixloopError(
                "CI_RUN_NOT_FOUND",
                f"No GitHub Actions run {run_id} in {where}: check the id with `gh run list`.",
                suggestion="gh run list",
                gh_said=said,
            )
        raise FixloopError("GH_COMMAND_FAILED", f"`gh run view` failed: {said}", gh_said=said)
    jobs = [_job(item) for item in document.get("jobs") or [] if isinstance(item, Mapping)]
    return {
        "id": int(document["databaseId"]),
        "url": str(document.get("url") or ""),
        "workflow": str(document.get("workflowName") or ""),
        "head_branch": str(document.get("headBranch") or ""),
        "head_sha": str(document.get("headSha") or ""),
        "status": str(document.get("status") or ""),
        "conclusion": document.get("conclusion") or None,
        "jobs": jobs,
    }


def latest_failed_run(gh: Gh, ref: RunRef, branch: str | None) -> int | None:
    """The id of the latest failed run of `branch` (of any branch when None) among the last LIST_LIMIT."""
    args = ["run", "list", *ref.repo_args, "--limit", str(LIST_LIMIT), "--json", LIST_FIELDS]
    if branch:
        args += ["--branch", branch]
    runs = _json(gh.checked(*args))
    for item in runs if isinstance(runs, list) else []:
        if isinstance(item, dict) and item.get("conclusion") in FAILED_CONCLUSIONS:
            run_id = item.get("databaseId")
            if isinstance(run_id, int):
                return run_id
    return None


def _job_matches(job: Mapping[str, Any], how: int, text: str, job_id: int | None) -> bool:
    if how == 0:
        return job_id is not None and job.get("id") == job_id
    if not text:
        return False
    if how == 1:
        return job.get("name") == text
    if how == 2:
        return str(job.get("name")).lower() == text.lower()
    return str(job.get("id")) == text


def select_job(jobs: Sequence[Mapping[str, Any]], wanted: str | None, job_id: int | None) -> dict[str, Any]:
    """The job a URL's id or `--job` names (its name, any case, or its id); CI_JOB_NOT_FOUND listing the
    run's jobs otherwise."""
    text = (wanted or "").strip()
    for matches in range(4):  # by the URL's id, the name as given, the name in any case, the id given
        found = [dict(job) for job in jobs if _job_matches(job, matches, text, job_id)]
        if found:
            failed = [job for job in found if job.get("conclusion") in FAILED_CONCLUSIONS]
            return (failed or found)[0]
    names = [str(job.get("name")) for job in jobs]
    named = text or str(job_id)
    raise FixloopError(
        "CI_JOB_NOT_FOUND",
        f"The run has no job {named!r}; its jobs: {', '.join(names) or 'none'}.",
        received=named,
        valid_values=names,
    )


def download_failed_log(gh: Gh, ref: RunRef, run_id: int, job_id: int | None, path: Path) -> int:
    """Write `gh run view --log-failed` of the run (or of one job) to `path`; its size in bytes.
    CI_LOG_UNAVAILABLE with gh's words when GitHub does not give it."""
    which = ["--job", str(job_id)] if job_id is not None else [str(run_id)]
    result = gh.run_to_file(path, "run", "view", *which, *ref.repo_args, "--log-failed")
    if not result.ok:
        raise FixloopError(
            "CI_LOG_UNAVAILABLE",
            f"The log of run {run_id} could not be fetched: {result.error_text() or 'gh gave no reason'}. "
            "GitHub keeps logs for the repository's retention period (90 days by default); download the "
            "failed job's log from the run's page and pass it with --log-file PATH.",
            suggestion="--log-file PATH",
            exit_status=result.returncode,
        )
    return path.stat().st_size
