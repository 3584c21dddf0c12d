"""`fixloop init` and `fixloop trust`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from fixloop.cli import cli
from fixloop.runs import lifecycle, trust


def invoke(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, json.loads(result.output)


def python_project(root: Path) -> None:
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-q"\n\n[tool.ruff]\n')


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
