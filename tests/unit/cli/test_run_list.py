"""`fixloop run list`, and `latest` wherever a command takes a RUN."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers_reports import START_MS, save_run
from helpers_review import two_rounds
from helpers_runs import FakeClock

from fixloop.cli import cli
from fixloop.runs import lifecycle


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args), env=env)
    try:
        document = json.loads(result.output)
    except json.JSONDecodeError:
        pytest.fail(f"not JSON (exit {result.exit_code}): {result.output!r} {result.exception!r}")
    return result.exit_code, document


def started(*args: str) -> str:
    code, document = invoke("run", "start", *args)
    assert code == 0, document
    return str(document["run_id"])


def test_list_newest_first_with_filters(git_project: Path, fake_clock: FakeClock) -> None:
    first = started("--workflow", "review")
    fake_clock.advance(1)
    second = started("--workflow", "bugfix", "--stack", "backend")
    fake_clock.advance(1)
    third = started("--workflow", "review", "--no-log")
    assert invoke("run", "end", third, "--status", "failed")[0] == 0

    code, listed = invoke("run", "list")
    assert code == 0
    assert [row["run_id"] for row in listed["runs"]] == [third, second, first]
    assert listed["runs"][0] == {
        "run_id": third,
        "workflow": "review",
        "status": "failed",
        "started": "2025-12-06T05:46:42.000Z",
        "ended": "2025-12-06T05:46:42.000Z",
        "termination_reason": None,
        "remaining_issues": None,
    }
    code, listed = invoke("run", "list", "--workflow", "review", "--status", "running")
    assert (code, [row["run_id"] for row in listed["runs"]]) == (0, [first])
    code, listed = invoke("run", "list", "--limit", "2")
    assert (code, listed["count"]) == (0, 2)
    code, refused = invoke("run", "list", "--status", "finished")
    assert (code, refused["error"]["code"]) == (2, "INVALID_STATUS")
    code, refused = invoke("run", "list", "--limit", "0")
    assert (code, refused["error"]["code"]) == (2, "INVALID_ARGUMENT")


def test_an_empty_project_lists_nothing(git_project: Path) -> None:
    assert invoke("run", "list") == (0, {"count": 0, "runs": [], "unreadable": []})


def test_latest_wherever_a_run_is_taken(git_project: Path, fake_clock: FakeClock) -> None:
    code, refused = invoke("run", "show", "latest")
    assert (code, refused["error"]["code"]) == (2, "NO_RUNS")
    older = started("--workflow", "review")
    fake_clock.advance(1)
    newest = started("--workflow", "review", "--changed-files", "src/app.py")

    code, shown = invoke("run", "show", "latest")
    assert (code, shown) == (0, lifecycle.load_run(git_project, newest))
    code, opened = invoke("run", "phase", "latest", "--start", "0")
    assert (code, opened["run_id"]) == (0, newest)
    assert lifecycle.load_run(git_project, newest)["open_phases"] == {"0": 1_765_000_001_000}
    assert lifecycle.load_run(git_project, older)["open_phases"] == {}
    code, log = invoke("log", "summary", "latest")
    assert (code, log["session_id"]) == (0, newest)
    code, events = invoke("log", "show", "latest", "--type", "PHASE_START")
    assert (code, events["count"]) == (0, 1)
    code, status = invoke("review", "status", "latest")
    assert code == 0, status
    code, ended = invoke("run", "end", "latest", "--status", "failed")
    assert (code, ended["run_id"]) == (0, newest)
    code, report = invoke("review", "report", "latest")
    assert (code, report["status"]) == (0, "failed")  # the run ended failed before any review
    code, refused = invoke("run", "show", "newest")
    assert (code, refused["error"]["code"]) == (2, "INVALID_RUN_ID")
    assert "or 'latest'" in refused["error"]["message"]


def test_latest_is_the_run_started_last_even_when_saved_first(git_project: Path) -> None:
    save_run(git_project, two_rounds().state, "bbbbbbbb", started_ms=START_MS + 5000)
    save_run(git_project, two_rounds().state, "aaaaaaaa", started_ms=START_MS)
    code, shown = invoke("run", "show", "latest")
    assert (code, shown["run_id"]) == (0, "bbbbbbbb")
    code, listed = invoke("run", "list")
    assert [(row["run_id"], row["remaining_issues"]) for row in listed["runs"]] == [
        ("bbbbbbbb", 3),
        ("aaaaaaaa", 3),
    ]
