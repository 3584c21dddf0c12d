"""An untracked file whose name is not UTF-8 is listed as not reviewable, with why; the review goes on."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from helpers_runs import read_events

from fixloop.cli import cli
from fixloop.runs import creation, lifecycle
from fixloop.runs.changed_files import NOT_UTF8_REASON
from fixloop.runs.command_start import started_text
from fixloop.store import gitfiles
from fixloop.workflows import driver

NOT_REVIEWABLE = [{"file": "src/bad\\xff.py", "reason": NOT_UTF8_REASON}]


def plant(project: Path) -> None:
    with open(os.path.join(os.fsencode(project), b"src", b"bad\xff.py"), "wb") as handle:
        handle.write(b"eval(input())\n")
    (project / "src" / "app.py").write_text("print('changed')\n")


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args), env=env)
    return result.exit_code, json.loads(result.output)


def test_git_lists_the_name_as_it_is_stored(git_project: Path) -> None:
    plant(git_project)
    assert gitfiles.changed_files(git_project) == ["src/app.py", "src/bad\udcff.py"]


def test_run_start_names_the_file_it_cannot_review(git_project: Path) -> None:
    plant(git_project)
    code, started = invoke("run", "start", "--workflow", "review", "--git-diff")
    assert code == 0, started
    assert started["changed_files"] == ["src/app.py"]
    assert started["files_not_reviewable"] == NOT_REVIEWABLE
    state = lifecycle.load_run(git_project, started["run_id"])
    assert state["files_not_reviewable"] == NOT_REVIEWABLE
    (warning,) = [event for event in read_events(started["log_files"]["jsonl"]) if event["type"] == "WARNING"]
    assert (warning["code"], warning["files"]) == ("FILE_NAME_NOT_UTF8", ["src/bad\\xff.py"])
    assert "src/bad\\xff.py" in warning["message"]
    assert "Not reviewed (1, names not UTF-8): src/bad\\xff.py." in started_text(state)


def test_the_review_hands_out_its_tasks(git_project: Path) -> None:
    plant(git_project)
    run_id = creation.start_run("review", root=git_project, git_base="", claude_session_id="s-1")["state"][
        "run_id"
    ]
    action = driver.next_action(git_project, run_id)
    assert action["action"] == "agents"
    assert lifecycle.load_run(git_project, run_id)["errors"] == []
    task = driver.task_path(git_project, run_id, "code-reviewer").read_text(encoding="utf-8")
    assert "src/app.py" in task


def test_run_files_replaces_the_list_and_names_the_file(git_project: Path) -> None:
    run_id = creation.start_run("review", root=git_project)["state"]["run_id"]
    plant(git_project)
    code, answer = invoke("run", "files", run_id, "--git-diff")
    assert code == 0, answer
    assert answer["changed_files"] == ["src/app.py"]
    assert answer["files_not_reviewable"] == NOT_REVIEWABLE
    assert [warning["code"] for warning in answer["warnings"]] == ["FILE_NAME_NOT_UTF8"]
    assert lifecycle.load_run(git_project, run_id)["files_not_reviewable"] == NOT_REVIEWABLE
