"""fix-ci phase 0: a GitHub Actions run through the real gh (local GitHub server), or a CI log file. Each
problem ends the run with its own code and what fixes it; a run that did not fail ends it with nothing to
fix; a run made on another commit is a warning."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_github import GITHUB_HOST, FakeGitHub, Job, Step
from helpers_runs import git
from workflows.bugfix_helpers import agents_of, events, next_action, state
from workflows.ci.ci_helpers import NOISY_LOG, failed_run, head, start

Setup = Callable[[FakeGitHub, Path, pytest.MonkeyPatch, Path], str]


def no_gh(github: FakeGitHub, checkout: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> str:
    run = failed_run(github, checkout)
    bin_dir = tmp / "bin-without-gh"
    bin_dir.mkdir()
    os.symlink(str(shutil.which("git")), bin_dir / "git")
    monkeypatch.setenv("PATH", str(bin_dir))
    return str(run.id)


def logged_out(github: FakeGitHub, checkout: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> str:
    run = failed_run(github, checkout)
    (tmp / "fresh-gh-config").mkdir()
    monkeypatch.delenv("GH_ENTERPRISE_TOKEN")
    monkeypatch.delenv("GH_HOST")
    monkeypatch.setenv("GH_CONFIG_DIR", str(tmp / "fresh-gh-config"))
    return str(run.id)


def no_remote(github: FakeGitHub, checkout: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> str:
    run = failed_run(github, checkout)
    git(checkout, "remote", "remove", "origin")
    return str(run.id)


def unknown_run(github: FakeGitHub, checkout: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> str:
    return "123"


def not_a_run(github: FakeGitHub, checkout: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> str:
    return "https://github.com/octo/demo/pull/7"


def still_running(github: FakeGitHub, checkout: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> str:
    job = Job("test", [Step("Run pytest", None, status="in_progress")], status="in_progress")
    return str(failed_run(github, checkout, job, status="in_progress").id)


CASES: list[tuple[Setup, str, str]] = [
    (no_gh, "GH_UNAVAILABLE", "https://cli.github.com"),
    (logged_out, "GH_AUTH_REQUIRED", "run `gh auth login`"),
    (no_remote, "NO_GITHUB_REMOTE", "`git remote add origin https://github.com/OWNER/REPO.git`"),
    (unknown_run, "CI_RUN_NOT_FOUND", "No GitHub Actions run 123 in this repository: check the id with `gh"),
    (not_a_run, "INVALID_RUN_REFERENCE", "https://github.com/OWNER/REPO/actions/runs/1234567890"),
    (still_running, "CI_RUN_IN_PROGRESS", "its logs are not complete. Wait for it (`gh run watch "),
]


@pytest.mark.parametrize(("setup", "code", "fix"), CASES, ids=[case[1] for case in CASES])
def test_each_problem_fails_phase_0_with_its_code(
    github: FakeGitHub,
    checkout: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    setup: Setup,
    code: str,
    fix: str,
) -> None:
    run_id = start(checkout, run=setup(github, checkout, monkeypatch, tmp_path))
    stop = next_action(checkout, run_id)
    assert (stop["action"], stop["status"], stop["reason"]) == ("stop", "failed", code)
    assert stop["error"]["code"] == code and fix in stop["error"]["message"]
    assert f"Error {code}: " in stop["message"]
    final = state(checkout, run_id)
    assert [(r["phase"], r["status"]) for r in final["phase_results"]] == [("phase_0", "failed")]
    assert not (checkout / ".claude" / "fixloop" / "runs" / run_id / "ci" / "failed.log").exists()


def test_a_named_job_that_is_not_in_the_run(github: FakeGitHub, checkout: Path) -> None:
    run = failed_run(github, checkout)
    stop = next_action(checkout, start(checkout, run=str(run.id), job="deploy"))
    assert (stop["status"], stop["error"]["code"]) == ("failed", "CI_JOB_NOT_FOUND")
    assert stop["error"]["message"] == "The run has no job 'deploy'; its jobs: lint, test."


def test_the_branchs_latest_failed_run_at_head_is_taken(github: FakeGitHub, checkout: Path) -> None:
    older = failed_run(github, checkout)
    github.repo.add_run(jobs=[Job("docs", [Step("Build")])], head_branch="main")  # a later run that passed
    github.repo.add_run(jobs=[Job("test", [Step("Run", "failure")])], head_branch="other")
    run_id = start(checkout)
    action = next_action(checkout, run_id)
    assert agents_of(action) == ["ci-analyst"]
    source = state(checkout, run_id)["flow"]["phases"]["0"]["data"]
    assert (source["source"], source["run"]["id"], source["job"], source["sha_match"]) == (
        "github",
        older.id,
        None,
        True,
    )
    assert [job["failed_steps"] for job in source["run"]["jobs"]] == [[], ["Run pytest"]]
    assert events(checkout, run_id, "WARNING") == []
    (collected,) = [e for e in events(checkout, run_id, "DATA_COLLECTED") if e["data_type"] == "ci_source"]
    url = f"https://{GITHUB_HOST}/octo/demo/actions/runs/{older.id}"
    assert collected["summary"] == {"source": "github", "run": older.id, "job": None, "url": url}


def test_a_run_on_another_commit_is_a_warning(github: FakeGitHub, checkout: Path) -> None:
    run = failed_run(github, checkout, head_sha="0" * 40)
    run_id = start(checkout, run=str(run.id))
    assert agents_of(next_action(checkout, run_id)) == ["ci-analyst"]
    (warning,) = events(checkout, run_id, "WARNING")
    local = head(checkout)
    assert (warning["code"], warning["run_sha"], warning["local_sha"]) == ("CI_SHA_MISMATCH", "0" * 40, local)
    assert warning["message"] == (
        f"Run {run.id} ran on commit {'0' * 12}, the checkout is at {local[:12]}: what fails locally may "
        f"differ (check out {'0' * 12} to match the CI exactly)."
    )
    assert state(checkout, run_id)["flow"]["phases"]["0"]["data"]["sha_match"] is False


def test_a_job_url_names_the_run_its_repository_and_the_job(github: FakeGitHub, checkout: Path) -> None:
    run = failed_run(github, checkout)
    test_job = run.jobs[1]
    url = f"https://{GITHUB_HOST}/octo/demo/actions/runs/{run.id}/job/{test_job.id}"
    run_id = start(checkout, run=url)
    assert agents_of(next_action(checkout, run_id)) == ["ci-analyst"]
    source = state(checkout, run_id)["flow"]["phases"]["0"]["data"]
    assert (source["job"]["id"], source["job"]["name"]) == (test_job.id, "test")
    assert source["repository"] == "octo/demo"
    assert source["repo_args"] == ["-R", f"{GITHUB_HOST}/octo/demo"]
    # The log asked for is that job's only.
    assert github.requests_to(f"/api/v3/repos/octo/demo/actions/jobs/{test_job.id}")


@pytest.mark.parametrize(
    ("run", "job", "message"),
    [
        ("", None, "No failed GitHub Actions run of main among its latest runs."),
        ("passed", None, "The run {id} did not fail (conclusion success): there is nothing to fix."),
        (
            "failed",
            "lint",
            "The job 'lint' of run {id} did not fail (conclusion success): there is nothing to fix.",
        ),
    ],
)
def test_nothing_failed_ends_the_run_with_nothing_to_fix(
    github: FakeGitHub, checkout: Path, run: str, job: str | None, message: str
) -> None:
    passed = github.repo.add_run(jobs=[Job("test", [Step("Run pytest")])], head_branch="main")
    found = failed_run(github, checkout) if run == "failed" else passed
    run_id = start(checkout, run=str(found.id) if run else "", job=job)
    stop = next_action(checkout, run_id)
    expected = message.format(id=found.id)
    assert (stop["action"], stop["status"], stop["reason"]) == ("stop", "success", "no_failure_found")
    (warning,) = events(checkout, run_id, "WARNING")
    assert (warning["code"], warning["message"]) == ("NO_FAILURE_FOUND", expected)
    assert expected in stop["message"]
    final = state(checkout, run_id)
    assert [r["status"] for r in final["phase_results"]] == ["skipped"] * 7


def test_a_log_file_needs_no_gh_and_must_exist(project: Path) -> None:
    missing = start(project, log_file="logs/job.log")
    stop = next_action(project, missing)
    assert (stop["status"], stop["error"]["code"]) == ("failed", "LOG_FILE_NOT_FOUND")
    assert stop["error"]["message"].startswith(f"No readable log file at {project / 'logs' / 'job.log'}: ")

    (project / "logs").mkdir()
    shutil.copy(NOISY_LOG, project / "logs" / "job.log.gz")
    run_id = start(project, log_file="logs/job.log.gz")
    assert agents_of(next_action(project, run_id)) == ["ci-analyst"]
    source = state(project, run_id)["flow"]["phases"]["0"]["data"]
    size = NOISY_LOG.stat().st_size
    assert source == {"source": "log_file", "log_file": str(project / "logs" / "job.log.gz"), "bytes": size}


@pytest.mark.parametrize(("run", "job", "named"), [("42", None, "a run"), ("", "test", "--job")])
def test_a_log_file_with_a_run_or_a_job_is_refused(
    project: Path, run: str, job: str | None, named: str
) -> None:
    stop = next_action(project, start(project, run=run, job=job, log_file=str(NOISY_LOG)))
    assert (stop["status"], stop["error"]["code"]) == ("failed", "CONFLICTING_ARGUMENTS")
    assert stop["error"]["message"].startswith(f"Give either --log-file PATH or {named}, not both")
