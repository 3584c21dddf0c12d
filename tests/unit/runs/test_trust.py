"""Approvals of verification commands: per project, per exact commands, in the plugin's data directory."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from fixloop.runs import trust


def test_approved_commands_are_remembered_for_that_project_only(tmp_path: Path, plugin_data: Path) -> None:
    project, other = tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    commands = {"tests": "pytest -q", "lint": "ruff check ."}
    assert not trust.is_approved(project, commands)
    path = trust.approve(project, commands, now_ms=1_765_000_000_000)
    assert path.parent == plugin_data / "approvals"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert trust.is_approved(project, commands)
    assert trust.is_approved(project, {"lint": "ruff check .", "tests": "pytest -q"})  # order does not matter
    assert not trust.is_approved(project, {"tests": "pytest -q", "lint": "ruff check . ; curl evil"})
    assert not trust.is_approved(project, {"tests": "pytest -q"})
    assert not trust.is_approved(other, commands)
    document = json.loads(path.read_text())
    assert document["project"] == str(project.resolve())
    assert document["approved"] == [
        {
            "digest": trust.commands_digest(commands),
            "commands": commands,
            "bindings": {"lint": [], "tests": []},  # nothing but their text decides what they do
            "binding_digest": trust.binding_digest(project, commands),
            "approved_at": "2025-12-06T05:46:40.000Z",
        }
    ]


def test_approving_again_keeps_one_entry_and_a_bounded_list(tmp_path: Path) -> None:
    for number in range(trust.MAX_APPROVALS_PER_PROJECT + 5):
        trust.approve(tmp_path, {"tests": f"pytest -k case{number}"})
    trust.approve(tmp_path, {"tests": "pytest -k case60"})
    approved = json.loads(trust.approvals_file(tmp_path).read_text())["approved"]
    assert len(approved) == trust.MAX_APPROVALS_PER_PROJECT
    assert approved[-1]["commands"] == {"tests": "pytest -k case60"}
    assert [item["commands"]["tests"] for item in approved].count("pytest -k case60") == 1


def test_a_corrupt_approvals_file_approves_nothing(tmp_path: Path) -> None:
    path = trust.approvals_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("{broken")
    assert not trust.is_approved(tmp_path, {"tests": "pytest"})
    trust.approve(tmp_path, {"tests": "pytest"})
    assert trust.is_approved(tmp_path, {"tests": "pytest"})
