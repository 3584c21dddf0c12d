"""fixloop.github.runs: what names a GitHub Actions run, the run and its jobs, the latest failed run, and the
failed log streamed to a file, through the real gh against the local GitHub server."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from fake_github import GITHUB_HOST, FakeGitHub, Job, Step, make_git_repo

from fixloop.core.errors import FixloopError
from fixloop.github.gh import Gh
from fixloop.github.runs import (
    RunRef,
    download_failed_log,
    latest_failed_run,
    parse_run_reference,
    select_job,
    view_run,
)

JOBS = [
    {"id": 1, "name": "lint", "conclusion": "success"},
    {"id": 2, "name": "test (3.11)", "conclusion": "failure"},
    {"id": 3, "name": "Test (3.11)", "conclusion": "success"},
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", RunRef("")),
        (" 8001000007 ", RunRef("8001000007", 8001000007)),
        ("#42", RunRef("#42", 42)),
        (
            "https://github.com/Octo/Demo/actions/runs/42",
            RunRef("https://github.com/Octo/Demo/actions/runs/42", 42, None, "github.com", "Octo", "Demo"),
        ),
        (
            "https://ghe.example.com/o/r/actions/runs/42/job/77?pr=3",
            RunRef(
                "https://ghe.example.com/o/r/actions/runs/42/job/77?pr=3", 42, 77, "ghe.example.com", "o", "r"
            ),
        ),
        (
            "https://github.com/o/r/actions/runs/42/attempts/2",
            RunRef("https://github.com/o/r/actions/runs/42/attempts/2", 42, None, "github.com", "o", "r"),
        ),
    ],
)
def test_a_run_is_named_by_its_id_or_url(text: str, expected: RunRef) -> None:
    assert parse_run_reference(text) == expected


@pytest.mark.parametrize(
    "text", ["0", "run 42", "https://github.com/o/r/pull/7", "ftp://x/o/r/actions/runs/1"]
)
def test_anything_else_is_an_invalid_reference(text: str) -> None:
    with pytest.raises(FixloopError) as caught:
        parse_run_reference(text)
    assert caught.value.code == "INVALID_RUN_REFERENCE"
    assert "https://github.com/OWNER/REPO/actions/runs/1234567890" in caught.value.message


def test_a_urls_repository_goes_to_gh() -> None:
    ref = parse_run_reference("https://ghe.example.com/o/r/actions/runs/42")
    assert (ref.repo_args, ref.repository) == (["-R", "ghe.example.com/o/r"], "o/r")
    assert (RunRef("42", 42).repo_args, RunRef("42", 42).repository) == ([], None)


def test_a_job_is_chosen_by_id_name_any_case_or_id_given() -> None:
    assert select_job(JOBS, None, 3)["id"] == 3
    assert select_job(JOBS, "Test (3.11)", None)["id"] == 3  # the exact name first
    assert select_job(JOBS, "TEST (3.11)", None)["id"] == 2  # any case: the failed one first
    assert select_job(JOBS, "1", None)["name"] == "lint"
    with pytest.raises(FixloopError) as caught:
        select_job(JOBS, "deploy", None)
    assert (caught.value.code, caught.value.message) == (
        "CI_JOB_NOT_FOUND",
        "The run has no job 'deploy'; its jobs: lint, test (3.11), Test (3.11).",
    )


@pytest.fixture
def repo(github: FakeGitHub, gh_env: dict[str, str], tmp_path: Path) -> Path:
    return make_git_repo(tmp_path / "checkout", github)


def test_view_the_latest_failed_run_and_its_failed_log(
    github: FakeGitHub, repo: Path, tmp_path: Path
) -> None:
    failed = github.repo.add_run(
        jobs=[
            Job("lint", [Step("Ruff", log="ok")]),
            Job("test", [Step("Set up", log="ready"), Step("pytest", "failure", log="E  assert 1 == 2")]),
        ],
        head_branch="main",
    )
    github.repo.add_run(jobs=[Job("docs", [Step("Build")])], head_branch="main")
    gh = Gh(repo)
    assert latest_failed_run(gh, RunRef(""), "main") == failed.id
    assert latest_failed_run(gh, RunRef(""), "other") is None
    run = view_run(gh, RunRef(str(failed.id), failed.id), failed.id)
    assert {key: run[key] for key in ("id", "workflow", "head_branch", "status", "conclusion")} == {
        "id": failed.id,
        "workflow": "CI",
        "head_branch": "main",
        "status": "completed",
        "conclusion": "failure",
    }
    assert run["url"] == f"https://{GITHUB_HOST}/octo/demo/actions/runs/{failed.id}"
    assert [(job["name"], job["conclusion"], job["failed_steps"]) for job in run["jobs"]] == [
        ("lint", "success", []),
        ("test", "failure", ["pytest"]),
    ]
    path = tmp_path / "failed.log"
    size = download_failed_log(gh, RunRef(""), failed.id, None, path)
    text = path.read_text()
    assert (
        size == len(text.encode()) and text.startswith("test\tpytest\t") and text.endswith("assert 1 == 2\n")
    )
    with pytest.raises(FixloopError) as missing:
        view_run(gh, RunRef("123", 123), 123)
    assert (missing.value.code, missing.value.details["suggestion"]) == ("CI_RUN_NOT_FOUND", "gh run list")


def test_a_log_gh_cannot_give_is_unavailable(github: FakeGitHub, repo: Path, tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        download_failed_log(Gh(repo), RunRef(""), 123, None, tmp_path / "failed.log")
    assert caught.value.code == "CI_LOG_UNAVAILABLE"
    assert caught.value.message.startswith("The log of run 123 could not be fetched: ")
    assert caught.value.details["suggestion"] == "--log-file PATH"


def test_run_to_file_streams_standard_output(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "gh"
    script.write_text('#!/bin/sh\nyes "line of $1" | head -n 200000\necho "done" >&2\nexit 3\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    gh = Gh(tmp_path, {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"})
    done = gh.run_to_file(tmp_path / "out.txt", "run", "view")
    assert (done.returncode, done.stdout, done.stderr, done.args) == (3, "", "done\n", ("run", "view"))
    assert (tmp_path / "out.txt").stat().st_size == 200000 * len("line of run\n")
    with pytest.raises(FixloopError) as missing:
        Gh(tmp_path, {"PATH": str(tmp_path / "nowhere")}).run_to_file(tmp_path / "x.txt", "run")
    assert missing.value.code == "GH_UNAVAILABLE"
