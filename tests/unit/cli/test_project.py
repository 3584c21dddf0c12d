"""`fixloop init` and `fixloop trust`."""

from __future__ import annotations

import json
import os
import shutil
import sys
import venv
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fixloop.cli import cli
from fixloop.core.engine_path import engine_command
from fixloop.runs import lifecycle, trust


def invoke(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, json.loads(result.output)


GIT_DIR = os.path.dirname(shutil.which("git") or "/usr/bin/git")


def python_project(root: Path) -> None:
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-q"\n\n[tool.ruff]\n')


def executable(path: Path, body: str = "exit 0") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


@pytest.fixture
def tools_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holding only a python3 that has pytest (this one) and a ruff: what init finds must run."""
    bin_dir = tmp_path / "tools"
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python3")
    executable(bin_dir / "ruff")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{GIT_DIR}")
    return bin_dir


@pytest.mark.usefixtures("tools_on_path")
def test_init_writes_what_it_finds_and_approves_it(git_project: Path) -> None:
    python_project(git_project)
    code, answer = invoke("init")
    assert code == 0
    path = git_project / ".claude" / "fixloop.json"
    assert answer == {
        "status": "written",
        "path": str(path),
        "commands": {
            "tests": {
                "command": "python3 -m pytest -q",
                "found_in": "pyproject.toml [tool.pytest.ini_options]",
            },
            "lint": {"command": "ruff check .", "found_in": "pyproject.toml [tool.ruff]"},
        },
        "left_out": {},
        "approved": True,
        "message": f"Wrote {path}; fixloop will run these commands to check every round.",
    }
    assert json.loads(path.read_text()) == {
        "test_command": "python3 -m pytest -q",
        "lint_command": "ruff check .",
        "typecheck_command": None,
    }
    assert trust.is_approved(git_project, {"tests": "python3 -m pytest -q", "lint": "ruff check ."})
    code, shown = invoke("trust", "--show")
    assert (code, shown["status"]) == (0, "approved")


@pytest.mark.usefixtures("tools_on_path")
def test_init_keeps_an_existing_config_unless_forced(git_project: Path) -> None:
    python_project(git_project)
    path = git_project / ".claude" / "fixloop.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"max_review_iterations": 5, "test_command": "make test"}))
    code, answer = invoke("init")
    assert (code, answer["error"]["code"]) == (2, "CONFIG_EXISTS")
    assert json.loads(path.read_text())["test_command"] == "make test"
    code, _answer = invoke("init", "--force")
    assert code == 0
    assert json.loads(path.read_text()) == {
        "max_review_iterations": 5,
        "test_command": "python3 -m pytest -q",
        "lint_command": "ruff check .",
        "typecheck_command": None,
    }


def test_init_approves_only_the_commands_that_can_run_and_says_why_the_others_cannot(
    git_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (git_project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n\n[tool.ruff]\n\n[tool.mypy]\n")
    venv.create(git_project / ".venv", with_pip=False)  # a real venv, without pytest
    executable(git_project / ".venv" / "bin" / "mypy")
    monkeypatch.setenv("PATH", GIT_DIR)  # no ruff there
    assert shutil.which("ruff") is None
    code, answer = invoke("init")
    assert code == 0
    path = git_project / ".claude" / "fixloop.json"
    assert json.loads(path.read_text()) == {
        "test_command": None,
        "lint_command": None,
        "typecheck_command": ".venv/bin/mypy .",
        "detect_commands": False,
    }
    assert answer["commands"] == {
        "typecheck": {"command": ".venv/bin/mypy .", "found_in": "pyproject.toml [tool.mypy]"}
    }
    assert answer["left_out"] == {
        "tests": {
            "command": ".venv/bin/python -m pytest -q",
            "found_in": "pyproject.toml [tool.pytest.ini_options]",
            "why": ".venv/bin/python has no module named pytest",
        },
        "lint": {
            "command": "ruff check .",
            "found_in": "pyproject.toml [tool.ruff]",
            "why": "ruff is not installed (not on PATH)",
        },
    }
    assert answer["message"] == (
        f"Wrote {path}; fixloop will run these commands to check every round. Left out, since they cannot "
        "run here: tests `.venv/bin/python -m pytest -q` (.venv/bin/python has no module named pytest); "
        "lint `ruff check .` (ruff is not installed (not on PATH)). Set them in .claude/fixloop.json once "
        f"they can, and approve them with `{engine_command('trust')}`."
    )
    assert trust.is_approved(git_project, {"typecheck": ".venv/bin/mypy ."})
    code, shown = invoke("trust", "--show")  # a run finds no other command: what init approved is all
    assert (code, shown["status"], list(shown["commands"])) == (0, "approved", ["typecheck"])


def test_init_with_nothing_to_find(git_project: Path) -> None:
    code, answer = invoke("init")
    assert (code, answer["error"]["code"]) == (2, "NO_COMMANDS_FOUND")
    assert not (git_project / ".claude" / "fixloop.json").exists()


def test_trust_shows_then_approves_the_commands_a_run_would_run(git_project: Path) -> None:
    path = git_project / ".claude" / "fixloop.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"test_command": "make test"}))
    python_project(git_project)  # found: ruff for lint; tests stay the configured ones
    listed = {
        "tests": {"command": "make test", "source": "config"},
        "lint": {"command": "ruff check .", "source": "found: pyproject.toml [tool.ruff]"},
    }
    assert invoke("trust", "--show") == (0, {"status": "not_approved", "commands": listed})
    code, answer = invoke("trust")
    assert (code, answer["status"], answer["commands"]) == (0, "approved", listed)
    assert trust.is_approved(git_project, {"tests": "make test", "lint": "ruff check ."})


def test_trust_with_nothing_to_approve(git_project: Path) -> None:
    assert invoke("trust") == (
        0,
        {
            "status": "nothing_to_approve",
            "commands": {},
            "message": "No verification command is set or found.",
        },
    )


def test_after_init_the_review_leaves_fixloop_s_config_out(git_project: Path) -> None:
    """init writes .claude/fixloop.json into the work tree: the next review reviews the change, not it."""
    python_project(git_project)
    assert invoke("init")[0] == 0
    (git_project / "src" / "app.py").write_text("print('changed')\n")
    code, started = invoke("run", "start", "--workflow", "review", "--git-diff")
    assert code == 0, started
    state = lifecycle.load_run(git_project, started["run_id"])
    assert state["changed_files"] == ["pyproject.toml", "src/app.py"]
    code, replaced = invoke(
        "run", "files", started["run_id"], "--changed-files", ".claude/fixloop.json", "x.py"
    )
    assert (code, replaced["changed_files"]) == (0, ["x.py"])
