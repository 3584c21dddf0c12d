"""`fixloop check`: the approved verification commands, run once with no run; and `fixloop verify latest`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from helpers_review import configure, new_run
from helpers_runs import LIB, FakeClock

from fixloop.cli import cli
from fixloop.core.engine_path import ENGINE


def invoke(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, json.loads(result.output)


def invoke_text(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def marked(root: Path, name: str) -> str:
    """A command that leaves the file `name` behind: whether it ran is on disk."""
    return f"touch {root / name}"


def test_commands_nobody_approved_are_refused_with_the_command_that_approves_them(git_project: Path) -> None:
    configure(git_project, approve=False, detect_commands=False, test_command=marked(git_project, "ran"))
    code, answer = invoke("check")
    assert code == 2
    error = answer["error"]
    assert (error["code"], error["commands"]) == (
        "VERIFY_COMMANDS_UNTRUSTED",
        {"tests": marked(git_project, "ran")},
    )
    assert error["suggestion"] == f'"{ENGINE}" trust'
    assert error["message"].endswith(
        f'Approve them with `"{ENGINE}" trust` in the project, then check again.'
    )
    assert not (git_project / "ran").exists()
    code, text = invoke_text("check", "--text")
    assert (
        code,
        text.startswith("fixloop check: fixloop runs the project's verification commands only"),
    ) == (2, True)
    # approving them (as the message says) lets the same check run them
    assert invoke("trust")[0] == 0
    code, answer = invoke("check")
    assert (code, answer["status"], answer["tests"]["status"]) == (0, "passed", "passed")
    assert (git_project / "ran").exists()


def test_each_step_runs_once_with_no_run_and_a_failure_exits_1(
    git_project: Path, fake_clock: FakeClock
) -> None:
    configure(
        git_project,
        detect_commands=False,
        test_command=marked(git_project, "tests-ran"),
        lint_command="echo 'src/app.py:1: E999 bad'; exit 3",
    )
    code, answer = invoke("check")
    assert code == 1
    assert (answer["status"], answer["passed"], answer["project"]) == ("failed", False, str(git_project))
    assert answer["config_sources"] == [str(git_project / ".claude" / "fixloop.json")]
    assert (answer["tests"]["status"], answer["tests"]["source"]) == ("passed", "config")
    lint = answer["lint"]
    assert (lint["status"], lint["exit_code"], lint["reason"]) == ("failed", 3, "exit code 3")
    assert lint["output_tail"] == "src/app.py:1: E999 bad\n"
    assert answer["typecheck"] == {
        "status": "skipped",
        "duration_ms": None,
        "exit_code": None,
        "command": None,
        "output_tail": None,
        "reason": "not_configured",
        "source": None,
    }
    assert (git_project / "tests-ran").exists()
    assert not (git_project / ".claude" / "fixloop" / "runs").exists()  # no run, no state
    assert not (git_project / ".claude" / "logs").exists()  # and no log


def test_the_summary_for_people(git_project: Path, fake_clock: FakeClock) -> None:
    configure(
        git_project, detect_commands=False, test_command="true", lint_command="printf 'one\\ntwo\\n'; exit 1"
    )
    code, text = invoke_text("check", "--text")
    assert code == 1
    assert text == (
        f"fixloop check: failed in {git_project}\n"
        "tests      passed   true (0.0s)\n"
        "lint       failed   printf 'one\\ntwo\\n'; exit 1 (0.0s), exit code 1\n"
        "    | one\n"
        "    | two\n"
        "typecheck  skipped  not configured\n"
    )


def test_nothing_to_check(git_project: Path) -> None:
    configure(git_project, detect_commands=False)
    code, answer = invoke("check")
    assert (code, answer["error"]["code"]) == (1, "NO_COMMANDS_FOUND")
    assert f'`"{ENGINE}" init`' in answer["error"]["message"]


def test_a_terminal_gets_the_summary_and_a_program_json(git_project: Path) -> None:
    """In a real process: JSON on a pipe; --text for people (a terminal gets it without asking)."""
    configure(git_project, detect_commands=False, test_command="true")
    env = {
        "PYTHONPATH": str(LIB),
        "PATH": "/usr/bin:/bin",
        "CLAUDE_PROJECT_DIR": str(git_project),
        "CLAUDE_PLUGIN_DATA": os.environ["CLAUDE_PLUGIN_DATA"],  # where the approval is
    }

    def fixloop(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "fixloop", "check", *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )

    piped = fixloop()
    assert (piped.returncode, json.loads(piped.stdout)["status"], piped.stderr) == (0, "passed", "")
    assert fixloop("--text").stdout.startswith(
        f"fixloop check: passed in {git_project}\ntests      passed   true ("
    )
    assert json.loads(fixloop("--json").stdout)["tests"]["command"] == "true"


def test_verify_takes_latest(git_project: Path, fake_clock: FakeClock) -> None:
    configure(git_project, detect_commands=False, test_command="true")
    older = new_run(git_project, fake_clock)["run_id"]
    fake_clock.advance(1)
    newer = new_run(git_project, fake_clock)["run_id"]
    assert older != newer
    code, result = invoke("verify", "latest")
    assert (code, result["run_id"], result["status"], result["tests"]["status"]) == (
        0,
        newer,
        "passed",
        "passed",
    )
    runs = git_project / ".claude" / "fixloop" / "runs"
    stored = json.loads((runs / newer / "state.json").read_text())["verification"]
    assert stored["tests"]["status"] == "passed"
    assert json.loads((runs / older / "state.json").read_text())["verification"] is None
    code, refused = invoke("verify", "nope")
    assert (code, refused["error"]["code"]) == (2, "INVALID_RUN_ID")


def test_commands_of_a_config_file_are_approved_with_that_file(git_project: Path) -> None:
    configure(git_project, detect_commands=False)
    extra = git_project / "ci settings.json"
    extra.write_text(json.dumps({"test_command": "true"}))
    code, answer = invoke("check", "--config", str(extra))
    assert (code, answer["error"]["code"]) == (2, "VERIFY_COMMANDS_UNTRUSTED")
    assert answer["error"]["suggestion"] == f"\"{ENGINE}\" trust --config '{extra}'"
    assert invoke("trust", "--config", str(extra))[0] == 0
    code, answer = invoke("check", "--config", str(extra))
    assert (code, answer["tests"]["status"], answer["config_sources"][-1]) == (0, "passed", str(extra))
