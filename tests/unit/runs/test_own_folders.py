"""fixloop's folders committed as symbolic links never make fixloop write outside the project."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers_runs import sha256_tree

from fixloop.cli import cli
from fixloop.core.errors import FixloopError
from fixloop.core.ids import new_run_id
from fixloop.hookside import context, prompt
from fixloop.runs import baseline, creation, lifecycle
from fixloop.store import layout
from fixloop.workflows import driver

OWN_FOLDERS = [
    ".claude",
    ".claude/fixloop",
    ".claude/fixloop/runs",
    ".claude/fixloop/sessions",
    ".claude/logs",
    ".claude/logs/fixloop",
    ".claude/logs/fixloop/review",
]


def link_out(project: Path, folder: str, elsewhere: Path) -> None:
    elsewhere.mkdir(exist_ok=True)
    link = project / folder
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere, target_is_directory=True)


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args), env=env)
    return result.exit_code, json.loads(result.output)


@pytest.mark.parametrize("folder", OWN_FOLDERS)
def test_the_cli_refuses_to_start_a_run_through_a_folder_linked_outside(
    git_project: Path, tmp_path: Path, folder: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    link_out(git_project, folder, elsewhere)
    code, document = invoke("run", "start", "--workflow", "review", env={"CLAUDE_CODE_SESSION_ID": "s-1"})
    assert code != 0
    assert document["error"]["code"] == "FIXLOOP_DIR_OUTSIDE_PROJECT"
    assert document["error"]["resolved"].startswith(str(elsewhere.resolve()))
    assert list(elsewhere.rglob("*")) == []


def test_a_link_inside_the_project_is_allowed(git_project: Path) -> None:
    (git_project / "kept").mkdir()
    (git_project / ".claude").mkdir()
    (git_project / ".claude" / "fixloop").symlink_to(git_project / "kept", target_is_directory=True)
    state = creation.start_run("review", root=git_project)["state"]
    assert (git_project / "kept" / "runs" / state["run_id"] / "state.json").is_file()


def test_a_runs_folder_linked_outside_after_the_start_stops_the_hooks(
    git_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "plugin-data"
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    run_id = creation.start_run("review", root=git_project, claude_session_id="s-2")["state"]["run_id"]
    runs = git_project / ".claude" / "fixloop" / "runs"
    elsewhere = tmp_path / "elsewhere"
    runs.rename(elsewhere)
    runs.symlink_to(elsewhere, target_is_directory=True)
    before = sha256_tree(elsewhere)
    payload = {"session_id": "s-2", "cwd": str(git_project), "hook_event_name": "PreToolUse"}
    assert context.find_run(payload) is None
    assert sha256_tree(elsewhere) == before
    (line,) = (data / context.FALLBACK_LOG).read_text().splitlines()
    warning = json.loads(line)
    assert (warning["level"], warning["code"]) == ("W", "FIXLOOP_DIR_OUTSIDE_PROJECT")
    assert str(elsewhere.resolve()) in warning["message"]
    with pytest.raises(FixloopError) as caught:
        lifecycle.load_run(git_project, run_id)
    assert caught.value.code == "FIXLOOP_DIR_OUTSIDE_PROJECT"


def test_a_run_folder_linked_outside_is_refused(git_project: Path, tmp_path: Path) -> None:
    run_id = creation.start_run("review", root=git_project)["state"]["run_id"]
    run_dir = git_project / ".claude" / "fixloop" / "runs" / run_id
    elsewhere = tmp_path / "elsewhere"
    run_dir.rename(elsewhere)
    run_dir.symlink_to(elsewhere, target_is_directory=True)
    before = sha256_tree(elsewhere)
    with pytest.raises(FixloopError) as caught:
        lifecycle.store_for(git_project, run_id)
    assert caught.value.code == "FIXLOOP_DIR_OUTSIDE_PROJECT"
    assert sha256_tree(elsewhere) == before


def test_binding_a_session_through_a_sessions_link_is_refused(git_project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    link_out(git_project, ".claude/fixloop/sessions", elsewhere)
    with pytest.raises(FixloopError) as caught:
        layout.bind_session(git_project, "s-3", new_run_id())
    assert caught.value.code == "FIXLOOP_DIR_OUTSIDE_PROJECT"
    assert list(elsewhere.rglob("*")) == []


def test_the_prompt_hook_keeps_nothing_through_a_sessions_link(
    git_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "plugin-data"
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    elsewhere = tmp_path / "elsewhere"
    link_out(git_project, ".claude/fixloop/sessions", elsewhere)
    payload = {
        "session_id": "s-4",
        "cwd": str(git_project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "/fixloop:review",
    }
    assert prompt.store_prompt(payload) is None
    assert list(elsewhere.rglob("*")) == []
    warning = json.loads((data / context.FALLBACK_LOG).read_text())
    assert warning["code"] == "FIXLOOP_DIR_OUTSIDE_PROJECT"


@pytest.mark.parametrize("folder", [".fixloop", ".claude/fixloop"])
def test_the_baseline_is_not_written_through_a_link(git_project: Path, tmp_path: Path, folder: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    link_out(git_project, folder, elsewhere)
    with pytest.raises(FixloopError) as caught:
        baseline.remove_finding(git_project, "0" * 16)
    assert caught.value.code == "FIXLOOP_DIR_OUTSIDE_PROJECT"
    assert list(elsewhere.rglob("*")) == []
    assert os.path.islink(git_project / folder)


@pytest.mark.parametrize("folder", ["tasks", "snapshots", "touches", "agents.jsonl"])
def test_a_link_planted_in_a_run_folder_stops_the_engine_and_the_hooks(
    git_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    data = tmp_path / "plugin-data"
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    run_id = creation.start_run("review", root=git_project, git_base="", claude_session_id="s-5")["state"][
        "run_id"
    ]
    elsewhere = tmp_path / "elsewhere"
    link_out(git_project, f".claude/fixloop/runs/{run_id}/{folder}", elsewhere)
    with pytest.raises(FixloopError) as caught:
        driver.next_action(git_project, run_id)
    assert caught.value.code == "FIXLOOP_DIR_OUTSIDE_PROJECT"
    payload = {"session_id": "s-5", "cwd": str(git_project), "hook_event_name": "PreToolUse"}
    assert context.find_run(payload) is None
    assert list(elsewhere.rglob("*")) == []
