"""A project's verification commands run only once the user approved them (trust on first use)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers_review import configure
from helpers_runs import git
from workflows.flow_helpers import (
    CHANGED_APP,
    REVIEWER_AGENTS,
    agents_of,
    events,
    invoke,
    invoke_text,
    next_action,
    review_project,
    start,
    state,
)

from fixloop.core.engine_path import ENGINE
from fixloop.runs import creation, trust
from fixloop.workflows.trust_gate import APPROVE_HOW


def marker_project(root: Path, *, approve: bool) -> tuple[Path, dict[str, str]]:
    """A project whose test command leaves a file behind: whether it ran is on disk."""
    marker = root / "tests-ran"
    review_project(
        root, approve=approve, test_command=f"touch {marker}", lint_command=None, typecheck_command=None
    )
    return marker, {"tests": f"touch {marker}"}


def test_an_unattended_run_refuses_commands_nobody_approved(git_project: Path) -> None:
    marker, commands = marker_project(git_project, approve=False)
    run_id = start(git_project)
    stop = next_action(run_id)
    assert (stop["action"], stop["status"]) == ("stop", "failed")
    assert stop["error"]["code"] == "VERIFY_COMMANDS_UNTRUSTED"
    assert not marker.exists()
    (error,) = events(git_project, run_id, "ERROR")
    assert error["code"] == "VERIFY_COMMANDS_UNTRUSTED"
    assert error["message"] == (
        "fixloop runs the project's verification commands only once they are approved:\n"
        f"- tests: `touch {marker}` (config)\n"
        f'Approve them with `"{ENGINE}" trust` in the project, or start the command again with '
        "--trust-config (approved for that run only)."
    )
    assert error["commands"] == commands
    assert "VERIFY_COMMANDS_UNTRUSTED" in stop["message"]


def test_trust_config_runs_them_for_this_run_only(git_project: Path) -> None:
    marker, commands = marker_project(git_project, approve=False)
    run_id = creation.start_run("review", root=git_project, git_base="", trust_config=True)["state"]["run_id"]
    assert agents_of(next_action(run_id)) == list(REVIEWER_AGENTS)
    assert marker.exists()
    assert state(git_project, run_id)["trust"] == {
        "status": "approved",
        "by": "--trust-config",
        "commands": commands,
    }
    assert not trust.is_approved(git_project, commands)


def test_an_attended_run_asks_once_and_remembers(git_project: Path) -> None:
    marker, commands = marker_project(git_project, approve=False)
    run_id = start(git_project, interactive=True)
    asked = next_action(run_id)
    assert (asked["action"], asked["context"], asked["default"]) == ("ask_user", "verify_commands", "cancel")
    assert asked["question"] == (
        "fixloop checks every round by running these commands from the repository in your project:\n"
        f"- tests: `touch {marker}` (config)\nRun them?"
    )
    assert [option["label"] for option in asked["options"]] == ["approve", "skip", "cancel"]
    assert not marker.exists()
    code, answered = invoke("answer", run_id, "approve")
    assert (code, answered["choice"]) == (0, "approve")
    assert agents_of(next_action(run_id)) == list(REVIEWER_AGENTS)
    assert marker.exists()
    assert trust.is_approved(git_project, commands)

    marker.unlink()
    again = start(git_project, interactive=True)
    assert agents_of(next_action(again)) == list(REVIEWER_AGENTS)  # no second question
    assert marker.exists()
    assert state(git_project, again)["trust"]["by"] == "earlier approval"


def test_skipping_runs_nothing_and_says_so(git_project: Path) -> None:
    marker, _commands = marker_project(git_project, approve=False)
    run_id = start(git_project, interactive=True)
    assert next_action(run_id)["action"] == "ask_user"
    invoke("answer", run_id, "skip")
    assert agents_of(next_action(run_id)) == list(REVIEWER_AGENTS)
    assert not marker.exists()
    warnings = [event["code"] for event in events(git_project, run_id, "WARNING")]
    assert "VERIFICATION_DECLINED" in warnings
    verification = state(git_project, run_id)["verification"]
    assert verification["tests"]["status"] == "skipped"


def test_cancelling_ends_the_run(git_project: Path) -> None:
    marker, _commands = marker_project(git_project, approve=False)
    run_id = start(git_project, interactive=True)
    next_action(run_id)
    invoke("answer", run_id, "--default")
    stop = next_action(run_id)
    assert (stop["action"], stop["status"], stop["reason"]) == ("stop", "user_cancelled", "user_cancelled")
    assert not marker.exists()


def test_a_change_to_the_commands_asks_again(git_project: Path) -> None:
    marker, _commands = marker_project(git_project, approve=True)
    evil = git_project / "evil-ran"
    configure(git_project, approve=False, test_command=f"touch {marker} {evil}")  # e.g. a stranger's PR
    run_id = start(git_project)
    stop = next_action(run_id)
    assert stop["error"]["code"] == "VERIFY_COMMANDS_UNTRUSTED"
    assert not evil.exists() and not marker.exists()


def test_without_any_command_the_run_goes_on_with_a_warning(git_project: Path) -> None:
    (git_project / "src" / "app.py").write_text(CHANGED_APP)
    run_id = start(git_project)
    assert agents_of(next_action(run_id)) == list(REVIEWER_AGENTS)
    (warning,) = events(git_project, run_id, "WARNING")
    assert warning["code"] == "NO_VERIFICATION_CONFIGURED"
    assert f'run `"{ENGINE}" init` in the project' in warning["message"]


def test_the_commands_messages_name_can_be_typed() -> None:
    """The engine the messages name is a file a person can run, and every flag they name is in README."""
    assert os.access(ENGINE, os.X_OK) and Path(ENGINE).name == "fixloop"
    flags = set(re.findall(r"--[a-z][a-z-]+", APPROVE_HOW))
    assert flags == {"--trust-config"}
    readme = (Path(ENGINE).parents[1] / "README.md").read_text(encoding="utf-8")
    assert all(f"`{flag}`" in readme for flag in flags)


@pytest.mark.parametrize("detect", [True, False])
def test_found_commands_need_approval_too(git_project: Path, detect: bool) -> None:
    (git_project / "tests").mkdir()
    (git_project / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    configure(git_project, approve=False, detect_commands=detect)
    git(git_project, "add", ".")
    git(git_project, "commit", "-q", "-m", "tests")
    (git_project / "src" / "app.py").write_text(CHANGED_APP)
    run_id = start(git_project)
    action = next_action(run_id)
    if detect:
        assert action["error"]["code"] == "VERIFY_COMMANDS_UNTRUSTED"
        assert state(git_project, run_id)["verification_commands"]["tests"] == {
            "command": "python3 -m pytest -q",
            "source": "found: tests/test_*.py",
        }
    else:
        assert agents_of(action) == list(REVIEWER_AGENTS)


def test_the_report_says_nothing_verified_the_changes(git_project: Path) -> None:
    (git_project / "src" / "app.py").write_text(CHANGED_APP)
    run_id = start(git_project)
    next_action(run_id)
    code, report = invoke_text("review", "report", run_id, "--format", "markdown")
    assert code == 0
    assert "## Warnings\n\n- `NO_VERIFICATION_CONFIGURED`: No test, lint or typecheck command" in report
