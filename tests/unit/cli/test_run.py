from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers_runs import LIB, FakeClock, read_events, sha256_tree

from fixloop.cli import cli
from fixloop.runs import lifecycle
from fixloop.runs.phases import describe_phases
from fixloop.store import layout


def invoke(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args), env=env, input=stdin)
    try:
        document = json.loads(result.output)
    except json.JSONDecodeError:
        pytest.fail(f"not JSON (exit {result.exit_code}): {result.output!r} {result.exception!r}")
    return result.exit_code, document


def start(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    code, document = invoke("run", "start", *args, env=env)
    assert code == 0, document
    assert isinstance(document, dict)
    return document


def test_start_prints_the_run(git_project: Path, fake_clock: FakeClock) -> None:
    (git_project / "src" / "app.py").write_text("edited\n")
    document = start(
        "--workflow",
        "bugfix",
        "--stack",
        "backend",
        "--git-diff",
        "--args",
        "--phase=0,1 --dry-run the api returns 500",
        "--command",
        "/fixloop:fix-backend --phase=0,1 --dry-run the api returns 500",
        env={"CLAUDE_CODE_SESSION_ID": "abc-123"},
    )
    run_id = document["run_id"]
    run_dir = git_project / ".claude" / "fixloop" / "runs" / run_id
    stem = f"2025-12-06_054640_backend_{run_id}"
    logs = git_project / ".claude" / "logs" / "fixloop" / "bugfix"
    assert document == {
        "run_id": run_id,
        "run_dir": str(run_dir),
        "state_file": str(run_dir / "state.json"),
        "log_files": {"jsonl": str(logs / f"{stem}.jsonl"), "text": str(logs / f"{stem}.log")},
        "config": lifecycle.load_run(git_project, run_id)["config"],
        "config_sources": [],
        "workflow": "bugfix",
        "stack": "backend",
        "phases": [0, 1],
        "phase_names": {"0": "Collect and classify the failure", "1": "Diagnose"},
        "dry_run": True,
        "changed_files": ["src/app.py"],
        "claude_session_id": "abc-123",
        "free_text": "the api returns 500",
        "warnings": [],
    }
    assert (run_dir / "state.json").is_file()
    assert (git_project / ".claude" / "fixloop" / "sessions" / "abc-123").read_text() == f"{run_id}\n"
    code, current = invoke("run", "current", env={"CLAUDE_CODE_SESSION_ID": "abc-123"})
    assert code == 0
    assert current == lifecycle.load_run(git_project, run_id)
    code, shown = invoke("run", "show", run_id)
    assert (code, shown) == (0, current)


def test_no_log_and_listed_files(git_project: Path, fake_clock: FakeClock) -> None:
    document = start(
        "--workflow", "review", "--no-log", "--changed-files", "b.py", "a.py", "--changed-files", "c.py"
    )
    assert document["log_files"] is None
    assert document["changed_files"] == ["a.py", "b.py", "c.py"]
    assert document["phase_names"] == {"0": "Review"}
    assert not (git_project / ".claude" / "logs").exists()


def test_changed_files_from_stdin(git_project: Path, fake_clock: FakeClock) -> None:
    code, document = invoke(
        "run", "start", "--workflow", "review", "--changed-files-from", "-", stdin="src/a.py\n\n  b.py  \n"
    )
    assert code == 0
    assert document["changed_files"] == ["b.py", "src/a.py"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["--workflow", "bugfix", "--args", "--phase=9"],
            {
                "code": "INVALID_PHASE",
                "message": "Invalid phase value(s) for bugfix: 9.",
                "valid_values": ["0", "1", "2", "3", "4", "5", "all"],
                "received": "9",
                "suggestion": "Use numbers 0-5 or 'all'; separate several with commas, e.g. 0,1.",
            },
        ),
        (
            ["--workflow", "ci-job", "--phase", "7"],
            {
                "code": "INVALID_PHASE",
                "message": "Invalid phase value(s) for ci-job: 7.",
                "valid_values": ["0", "1", "2", "3", "4", "5", "6", "all"],
                "received": "7",
                "suggestion": "Use numbers 0-6 or 'all'; separate several with commas, e.g. 0,1.",
            },
        ),
        (
            ["--workflow", "bugfix", "--args", "--dryrun fix it"],
            {
                "code": "UNKNOWN_ARGUMENT",
                "message": "Unknown argument '--dryrun'.",
                "received": "--dryrun",
                "valid_values": ["--phase", "--level", "--dry-run", "--log", "--no-log", "--verbose"],
                "suggestion": "Did you mean --dry-run?",
            },
        ),
        (
            ["--workflow", "review", "--changed-files", "/etc/passwd"],
            {
                "code": "PATH_OUTSIDE_PROJECT",
                "message": "Refused path '/etc/passwd': outside the project {root}.",
                "received": "/etc/passwd",
                "reason": "outside the project {root}",
            },
        ),
        (
            ["--workflow", "review", "--changed-files", "../x.py"],
            {
                "code": "PATH_OUTSIDE_PROJECT",
                "message": "Refused path '../x.py': outside the project {root}.",
                "received": "../x.py",
                "reason": "outside the project {root}",
            },
        ),
        (
            ["--workflow", "review", "extra.py"],
            {
                "code": "UNEXPECTED_ARGUMENT",
                "message": "Unexpected argument(s): extra.py.",
                "received": ["extra.py"],
                "suggestion": "List files after --changed-files.",
            },
        ),
    ],
)
def test_bad_start_prints_an_error_and_writes_nothing(
    git_project: Path, fake_clock: FakeClock, args: list[str], error: dict[str, Any]
) -> None:
    code, document = invoke("run", "start", *args)
    expected = json.loads(json.dumps(error).replace("{root}", str(git_project)))
    assert (code, document) == (2, {"status": "failed", "error": expected})
    assert not (git_project / ".claude").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["run", "show", "../x"],
        ["run", "show", "a;b"],
        ["run", "show", "/tmp/x"],
        ["run", "end", "../../etc", "--status", "success"],
        ["run", "phase", "..", "--start", "0"],
        ["run", "files", "A1B2C3D4", "--git-diff"],
    ],
)
def test_bad_run_ids(git_project: Path, args: list[str]) -> None:
    code, document = invoke(*args)
    assert code == 2
    assert document["error"]["code"] == "INVALID_RUN_ID"


def test_unknown_run(git_project: Path) -> None:
    code, document = invoke("run", "show", "0badc0de")
    assert code == 2
    assert document["error"]["code"] == "RUN_NOT_FOUND"


def test_phase_lifecycle_and_end(git_project: Path, fake_clock: FakeClock) -> None:
    run_id = start("--workflow", "execute-plan", "--phase", "4")["run_id"]
    fake_clock.advance(1)
    code, opened = invoke("run", "phase", run_id, "--start", "4")
    assert code == 0
    assert opened == {
        "run_id": run_id,
        "phase": "phase_4",
        "phase_name": "Review",
        "started_at_ms": 1_765_000_001_000,
    }
    fake_clock.advance(30.5)
    code, closed = invoke(
        "run", "phase", run_id, "--end", "4", "--status", "success", "--summary", '{"issues": 2}'
    )
    assert code == 0
    assert closed == {
        "run_id": run_id,
        "phase": "phase_4",
        "status": "success",
        "duration_ms": 30500,
        "started_at_ms": 1_765_000_001_000,
        "ended_at_ms": 1_765_000_031_500,
        "summary": {"issues": 2},
        "phases_completed": ["phase_4"],
    }
    fake_clock.advance(1)
    code, ended = invoke("run", "end", run_id, "--status", "success", "--summary", '{"files_changed": 1}')
    assert (code, ended) == (
        0,
        {
            "run_id": run_id,
            "status": "success",
            "total_duration_ms": 32500,
            "phases_completed": ["phase_4"],
            "open_phases": [],
            "summary": {"files_changed": 1},
        },
    )
    code, again = invoke("run", "end", run_id, "--status", "success")
    assert code == 2
    assert again["error"]["code"] == "RUN_ALREADY_ENDED"


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--start", "9"], "INVALID_PHASE"),
        (["--start", "1"], "PHASE_NOT_SELECTED"),
        (["--end", "0", "--status", "success"], "PHASE_NOT_STARTED"),
        (["--end", "0"], "USAGE_ERROR"),
        (["--start", "0", "--end", "0"], "USAGE_ERROR"),
        ([], "USAGE_ERROR"),
        (["--start", "0", "--status", "success"], "USAGE_ERROR"),
        (["--end", "0", "--status", "great"], "INVALID_STATUS"),
        (["--end", "0", "--status", "success", "--summary", "{bad"], "INVALID_JSON"),
        (["--end", "0", "--status", "success", "--summary", "[1]"], "INVALID_SUMMARY"),
    ],
)
def test_bad_phase_calls_change_nothing(
    git_project: Path, fake_clock: FakeClock, args: list[str], code: str
) -> None:
    run_id = start("--workflow", "bugfix", "--phase", "0")["run_id"]
    before = sha256_tree(git_project / ".claude")
    exit_code, document = invoke("run", "phase", run_id, *args)
    assert (exit_code, document["status"], document["error"]["code"]) == (2, "failed", code)
    assert sha256_tree(git_project / ".claude") == before


def test_bad_end_calls_change_nothing(git_project: Path, fake_clock: FakeClock) -> None:
    run_id = start("--workflow", "bugfix")["run_id"]
    before = sha256_tree(git_project / ".claude")
    for args, code in (
        (["--status", "done"], "INVALID_STATUS"),
        (["--status", "dry_run_complete"], "INVALID_STATUS"),
        (["--status", "success", "--summary", "nope"], "INVALID_JSON"),
    ):
        exit_code, document = invoke("run", "end", run_id, *args)
        assert (exit_code, document["error"]["code"]) == (2, code)
    assert sha256_tree(git_project / ".claude") == before


def test_files_command(git_project: Path, fake_clock: FakeClock) -> None:
    run_id = start("--workflow", "review")["run_id"]
    (git_project / "new.py").write_text("x\n")
    code, document = invoke("run", "files", run_id, "--git-diff")
    assert (code, document) == (
        0,
        {"run_id": run_id, "changed_files": ["new.py"], "base_ref": "HEAD", "warnings": []},
    )
    code, document = invoke("run", "files", run_id, "--changed-files", "z.py", "y.py")
    assert (code, document["changed_files"], document["base_ref"]) == (0, ["y.py", "z.py"], None)
    before = sha256_tree(git_project / ".claude")
    for args, error in (
        ([], "MISSING_ARGUMENT"),
        (["--git-diff", "--changed-files", "a.py"], "CONFLICTING_ARGUMENTS"),
        (["--git-diff", "nope"], "INVALID_GIT_BASE"),
        (["--changed-files", "../../etc/passwd"], "PATH_OUTSIDE_PROJECT"),
    ):
        exit_code, failed = invoke("run", "files", run_id, *args)
        assert (exit_code, failed["error"]["code"]) == (2, error)
    assert sha256_tree(git_project / ".claude") == before


def test_current_without_a_session_and_without_runs(git_project: Path) -> None:
    code, document = invoke("run", "current")
    assert (code, document["error"]["code"]) == (2, "NO_RUNS")


def test_current_without_a_session_is_the_newest_run_labelled(
    git_project: Path, fake_clock: FakeClock
) -> None:
    older = start("--workflow", "review")["run_id"]
    fake_clock.advance(5)
    newer = start("--workflow", "bugfix", "--stack", "backend", env={"CLAUDE_CODE_SESSION_ID": "s-1"})[
        "run_id"
    ]
    fake_clock.advance(5)
    code, document = invoke("run", "current")
    assert code == 0
    label = document.pop("current_run")
    assert label == {
        "resolved_by": "latest",
        "note": "$CLAUDE_CODE_SESSION_ID is not set: this is the run started most recently in the project.",
    }
    assert document == lifecycle.load_run(git_project, newer)
    # inside a session, its own run, unlabelled, even when another run is newer
    code, bound = invoke("run", "current", env={"CLAUDE_CODE_SESSION_ID": "s-1"})
    assert (code, bound) == (0, lifecycle.load_run(git_project, newer))
    start("--workflow", "review")
    code, bound = invoke("run", "current", env={"CLAUDE_CODE_SESSION_ID": "s-1"})
    assert (code, bound["run_id"]) == (0, newer)
    code, unbound = invoke("run", "current", env={"CLAUDE_CODE_SESSION_ID": "s-2"})
    assert (code, unbound["error"]["code"]) == (2, "NO_CURRENT_RUN")
    assert older != newer


def test_phases_command() -> None:
    code, document = invoke("phases", "ci-job", "0,5")
    assert (code, document) == (0, describe_phases("ci-job", "0,5"))
    code, document = invoke("phases", "ci-job", "9")
    assert (code, document["error"]["code"]) == (2, "INVALID_PHASE")


@pytest.mark.parametrize(
    ("command", "workflow", "stack"),
    [
        ("review", "review", None),
        ("fix-backend", "bugfix", "backend"),
        ("fix-frontend", "bugfix", "frontend"),
        ("fix-e2e", "bugfix", "e2e"),
        ("fix-pr-review", "pr-review", None),
        ("fix-ci", "ci-job", None),
        ("execute-plan", "execute-plan", None),
    ],
)
def test_phases_takes_the_command_names_readme_uses(command: str, workflow: str, stack: str | None) -> None:
    code, document = invoke("phases", command, "0")
    assert code == 0, document
    assert document["workflow"] == workflow
    assert document["phases"] == describe_phases(workflow, "0")["phases"]
    if command != workflow:
        assert (document["command"], document["stack"]) == (command, stack)


def test_phases_fix_backend_3_4() -> None:
    code, document = invoke("phases", "fix-backend", "3,4")
    assert (code, document["workflow"], document["selected"]) == (0, "bugfix", [3, 4])
    assert [item["name"] for item in document["phases"] if item["selected"]] == [
        "Document the fix plan",
        "Implement",
    ]
    code, document = invoke("phases", "fix-backnd", "3")
    assert (code, document["error"]["code"]) == (2, "UNKNOWN_WORKFLOW")
    assert {"fix-backend", "bugfix"} <= set(document["error"]["valid_values"])


def test_run_start_and_list_take_command_names(git_project: Path, fake_clock: FakeClock) -> None:
    started = start("--workflow", "fix-frontend", "--changed-files", "src/app.py")
    state = lifecycle.load_run(git_project, started["run_id"])
    assert (state["workflow"], state["stack"]) == ("bugfix", "frontend")
    fake_clock.advance(1)
    ci = start("--workflow", "fix-ci", "--phase", "0")
    assert lifecycle.load_run(git_project, ci["run_id"])["workflow"] == "ci-job"
    code, listed = invoke("run", "list", "--workflow", "fix-ci")
    assert (code, [row["run_id"] for row in listed["runs"]]) == (0, [ci["run_id"]])
    code, refused = invoke("run", "start", "--workflow", "fix-backend", "--stack", "frontend")
    assert (code, refused["error"]["code"]) == (2, "CONFLICTING_ARGUMENTS")
    code, refused = invoke("run", "start", "--workflow", "fix")
    assert (code, refused["error"]["code"]) == (2, "UNKNOWN_WORKFLOW")


def test_real_process_round_trip(git_project: Path) -> None:
    env = {"PYTHONPATH": str(LIB), "PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(git_project)}

    def fixloop(*args: str) -> tuple[int, Any]:
        done = subprocess.run(
            [sys.executable, "-m", "fixloop", *args], capture_output=True, text=True, env=env, check=False
        )
        assert done.stderr == ""
        return done.returncode, json.loads(done.stdout)

    code, started = fixloop("run", "start", "--workflow", "review", "--changed-files", "src/app.py")
    assert code == 0
    run_id = started["run_id"]
    assert fixloop("run", "phase", run_id, "--start", "0")[0] == 0
    assert fixloop("run", "phase", run_id, "--end", "0", "--status", "success")[0] == 0
    assert fixloop("run", "end", run_id, "--status", "success")[0] == 0
    code, error = fixloop("run", "show", "../etc")
    assert (code, error["error"]["code"]) == (2, "INVALID_RUN_ID")
    events = read_events(started["log_files"]["jsonl"])
    assert [event["type"] for event in events] == ["SESSION_START", "PHASE_START", "PHASE_END", "SESSION_END"]
    end = lifecycle.load_run(git_project, run_id)
    assert events[-1]["total_duration_ms"] == end["ended_at_ms"] - end["started_at_ms"]
    assert events[2]["duration_ms"] == end["phase_results"][0]["duration_ms"]
    assert Path(layout.run_dir(git_project, run_id)).is_dir()


def test_a_misspelt_command_gets_a_suggestion(git_project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", "reveiw"],
        env={**os.environ, "PYTHONPATH": str(LIB)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "UNKNOWN_COMMAND"
    assert error["message"] == "No such command 'reveiw'. Did you mean 'review'?"
    assert error["suggestion"] == "fixloop review"
    assert done.stderr == ""


def test_a_missing_run_names_the_command_that_needs_it(git_project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", "run", "show"],
        env={**os.environ, "PYTHONPATH": str(LIB)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert (error["code"], error["message"]) == ("USAGE_ERROR", "Missing argument 'RUN'.")
    assert error["command"] == ["run", "show"]
    assert error["usage"] == "Usage: fixloop run show [OPTIONS] RUN"


def test_git_diff_outside_a_git_repository_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The case of issue 21: it ended `success (no_changes)`, as if a review had found nothing."""
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app.py").write_text("print('hi')\n")
    code, refused = invoke("run", "start", "--workflow", "review", "--git-diff")
    assert (code, refused["error"]["code"]) == (2, "NOT_A_GIT_REPOSITORY")
    assert refused["error"]["message"].endswith("Name the files instead: --changed-files FILE ...")
    assert not (tmp_path / ".claude").exists()
    code, started = invoke("run", "start", "--workflow", "review", "--changed-files", "app.py")
    assert code == 0, started  # named files need no git
