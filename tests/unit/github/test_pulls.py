"""fixloop.github.pulls and preflight: the pull request the user named, checked with the real gh."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from fake_github import GITHUB_HOST, FakeGitHub
from helpers_github import PR_BRANCH, open_pr

from fixloop.core.errors import FixloopError
from fixloop.github.gh import Gh
from fixloop.github.preflight import preflight
from fixloop.github.pulls import PullRequestRef, parse_reference

URL = f"https://{GITHUB_HOST}/octo/demo/pull/7"
CASED = "https://GitHub.com/a/b/pull/3"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7", PullRequestRef("7", 7)),
        (" #42 ", PullRequestRef("#42", 42)),
        ("", PullRequestRef("")),
        (URL, PullRequestRef(URL, 7, GITHUB_HOST, "octo", "demo")),
        (URL + "/files", PullRequestRef(URL + "/files", 7, GITHUB_HOST, "octo", "demo")),
        (CASED, PullRequestRef(CASED, 3, "github.com", "a", "b")),
    ],
)  # fmt: skip
def test_a_number_a_url_or_nothing_names_a_pull_request(text: str, expected: PullRequestRef) -> None:
    assert parse_reference(text) == expected


@pytest.mark.parametrize(
    "text", ["seven", "0", "7 8", "https://github.com/a/b/issues/7", "ftp://h/a/b/pull/1"]
)
def test_anything_else_is_an_invalid_reference(text: str) -> None:
    with pytest.raises(FixloopError) as caught:
        parse_reference(text)
    assert caught.value.code == "INVALID_PR_REFERENCE"
    assert "https://github.com/OWNER/REPO/pull/42" in caught.value.message


def test_preflight_of_an_open_pull_request_on_its_branch(github: FakeGitHub, pr_checkout: Path) -> None:
    open_pr(github, title="Fix the parser")
    pr = preflight(Gh(pr_checkout), "7", PR_BRANCH)
    assert pr == {
        "number": 7,
        "url": URL,
        "host": GITHUB_HOST,
        "owner": "octo",
        "name": "demo",
        "title": "Fix the parser",
        "state": "OPEN",
        "head_ref": PR_BRANCH,
        "base_ref": "main",
        "head_oid": "1f0e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c",
        "author": "alice",
        "repository": "octo/demo",
    }
    assert [(r.method, r.path, r.operation) for r in github.requests] == [
        ("GET", "/api/v3/", None),  # gh auth status
        ("POST", "/api/graphql", "UserCurrent"),
        ("POST", "/api/graphql", "RepositoryInfo"),  # gh repo view
        ("POST", "/api/graphql", "PullRequestByNumber"),  # gh pr view 7
    ]
    assert github.requests[-1].body["variables"] == {"owner": "octo", "repo": "demo", "pr_number": 7}
    assert all(r.authenticated for r in github.requests)


def test_preflight_by_url(github: FakeGitHub, pr_checkout: Path) -> None:
    open_pr(github)
    assert preflight(Gh(pr_checkout), URL, PR_BRANCH)["number"] == 7


def failure(checkout: Path, reference: str = "7", branch: str | None = PR_BRANCH, **env: str) -> FixloopError:
    gh = Gh(checkout)
    gh.env.update(env)
    with pytest.raises(FixloopError) as caught:
        preflight(gh, reference, branch)
    return caught.value


def test_gh_not_installed(github: FakeGitHub, pr_checkout: Path, tmp_path: Path) -> None:
    error = failure(pr_checkout, PATH=str(tmp_path / "no-bin"))
    assert error.code == "GH_UNAVAILABLE"
    assert "https://cli.github.com" in error.message and "brew install gh" in error.message
    assert github.requests == []


def test_gh_not_logged_in(github: FakeGitHub, pr_checkout: Path, tmp_path: Path) -> None:
    (tmp_path / "empty-config").mkdir()
    gh = Gh(pr_checkout)
    del gh.env["GH_ENTERPRISE_TOKEN"], gh.env["GH_HOST"]
    gh.env["GH_CONFIG_DIR"] = str(tmp_path / "empty-config")
    with pytest.raises(FixloopError) as caught:
        preflight(gh, "7", PR_BRANCH)
    assert caught.value.code == "GH_AUTH_REQUIRED"
    assert "run `gh auth login`" in caught.value.message
    assert "You are not logged into any GitHub hosts" in caught.value.message
    assert caught.value.details["suggestion"] == "gh auth login"
    assert github.requests == []


def test_gh_with_a_revoked_token(github: FakeGitHub, pr_checkout: Path) -> None:
    error = failure(pr_checkout, GH_ENTERPRISE_TOKEN="ghp_revoked")
    assert error.code == "GH_AUTH_REQUIRED"
    assert [(r.path, r.status, r.authenticated) for r in github.requests] == [("/api/v3/", 401, False)]


def test_no_github_remote(github: FakeGitHub, pr_checkout: Path) -> None:
    subprocess.run(["git", "remote", "remove", "origin"], cwd=pr_checkout, check=True)
    error = failure(pr_checkout)
    assert error.code == "NO_GITHUB_REMOTE"
    assert "`git remote add origin https://github.com/OWNER/REPO.git`" in error.message
    assert "no git remotes found" in error.message


@pytest.mark.parametrize("state", ["CLOSED", "MERGED"])
def test_a_closed_or_merged_pull_request(github: FakeGitHub, pr_checkout: Path, state: str) -> None:
    open_pr(github, state=state)
    error = failure(pr_checkout)
    assert (error.code, error.details["state"]) == ("PR_NOT_OPEN", state)
    assert f"Pull request #7 is {state.lower()}" in error.message and "`gh pr reopen 7`" in error.message


def test_an_unknown_pull_request(github: FakeGitHub, pr_checkout: Path) -> None:
    error = failure(pr_checkout, "99")
    assert error.code == "PR_NOT_FOUND"
    assert error.message == "No pull request #99 in this repository: check the number with `gh pr list`."
    assert github.requests[-1].body["variables"]["pr_number"] == 99


def test_another_branch_is_checked_out(github: FakeGitHub, pr_checkout: Path) -> None:
    open_pr(github)
    error = failure(pr_checkout, branch="main")
    assert error.code == "PR_BRANCH_MISMATCH"
    assert error.message == (
        "The checkout is on main, not on pull request #7's branch fix/parser: run `gh pr checkout 7` first."
    )
    assert error.details["suggestion"] == "gh pr checkout 7"
