"""Phase 0 of fix-pr-review: each problem ends the run with its own code and the command that fixes it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_github import FakeGitHub
from helpers_github import PR_BRANCH, events, git, open_pr, start, state, step

Setup = Callable[[FakeGitHub, Path, pytest.MonkeyPatch, Path], None]


def no_gh(github: FakeGitHub, checkout: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
    open_pr(github)
    bin_dir = tmp / "bin-without-gh"
    bin_dir.mkdir()
    os.symlink(str(shutil.which("git")), bin_dir / "git")
    monkeypatch.setenv("PATH", str(bin_dir))


def logged_out(github: FakeGitHub, checkout: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
    open_pr(github)
    (tmp / "fresh-gh-config").mkdir()
    monkeypatch.delenv("GH_ENTERPRISE_TOKEN")
    monkeypatch.delenv("GH_HOST")
    monkeypatch.setenv("GH_CONFIG_DIR", str(tmp / "fresh-gh-config"))


def no_remote(github: FakeGitHub, checkout: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
    open_pr(github)
    git(checkout, "remote", "remove", "origin")


def closed(github: FakeGitHub, checkout: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
    open_pr(github, state="MERGED")


def other_branch(github: FakeGitHub, checkout: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
    open_pr(github)
    git(checkout, "checkout", "-q", "main")


def nothing(github: FakeGitHub, checkout: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
    pass


CASES: list[tuple[Setup, str, str, str]] = [
    (no_gh, "7", "GH_UNAVAILABLE", "https://cli.github.com"),
    (logged_out, "7", "GH_AUTH_REQUIRED", "run `gh auth login`"),
    (no_remote, "7", "NO_GITHUB_REMOTE", "`git remote add origin https://github.com/OWNER/REPO.git`"),
    (nothing, "7", "PR_NOT_FOUND", "`gh pr list`"),
    (closed, "7", "PR_NOT_OPEN", "`gh pr reopen 7`"),
    (other_branch, "7", "PR_BRANCH_MISMATCH", "run `gh pr checkout 7` first"),
    (nothing, "seven", "INVALID_PR_REFERENCE", "https://github.com/OWNER/REPO/pull/42"),
]


@pytest.mark.parametrize(("setup", "pr", "code", "fix"), CASES, ids=[case[2] for case in CASES])
def test_each_problem_fails_phase_0_with_its_code(
    github: FakeGitHub,
    pr_checkout: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    setup: Setup,
    pr: str,
    code: str,
    fix: str,
) -> None:
    run_id = start(pr_checkout, pr)
    setup(github, pr_checkout, monkeypatch, tmp_path)
    stop = step(pr_checkout, run_id)
    assert (stop["action"], stop["status"], stop["reason"]) == ("stop", "failed", code)
    assert stop["error"]["code"] == code and fix in stop["error"]["message"]
    assert f"Error {code}: " in stop["message"] and fix in stop["message"]
    final = state(pr_checkout, run_id)
    assert [(r["phase"], r["status"]) for r in final["phase_results"]] == [("phase_0", "failed")]
    assert "pr_review" not in final
    errors = [e for e in events(pr_checkout, run_id) if e["type"] == "ERROR"]
    assert [(e["phase"], e["code"]) for e in errors] == [("phase_0", code)]
    assert not any(r.operation == "PullRequestReviewThreads" for r in github.graphql_requests())


def test_an_empty_reference_takes_the_pull_request_of_the_current_branch(
    github: FakeGitHub, pr_checkout: Path
) -> None:
    open_pr(github)
    github.repo.add_pull_request(8, head_ref_name="other")
    run_id = start(pr_checkout, "")
    stop = step(pr_checkout, run_id)  # no thread: the run ends after phase 2
    assert (stop["status"], stop["reason"]) == ("success", "no_open_threads")
    record = state(pr_checkout, run_id)["pr_review"]
    assert (record["pr"]["number"], record["pr"]["head_ref"]) == (7, PR_BRANCH)
    found = [r for r in github.graphql_requests() if r.operation == "PullRequestForBranch"]
    assert [r.body["variables"]["headRefName"] for r in found] == [PR_BRANCH]
