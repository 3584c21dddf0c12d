"""`fixloop record` as the SubagentStop hook calls it runs without click (fixloop.workflows.hook_record): the
same answers, errors and exit codes as the command through click; any other spelling goes to click."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers_imports import LIB
from helpers_review import issue, reviewer_doc

from fixloop.runs import creation
from fixloop.workflows.driver import next_action
from fixloop.workflows.hook_record import RecordArguments, record_arguments

RUN = "0123abcd"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["record", RUN, "--agent", "code-reviewer", "--from-hook", "a1", "-"],
            (RUN, "-", "code-reviewer", "a1"),
        ),
        (["record", RUN, "answer.json", "--agent", "x"], (RUN, "answer.json", "x", None)),
        (["record", "--agent", "x", RUN], (RUN, "-", "x", None)),
        (["record", RUN, "--agent", ""], (RUN, "-", "", None)),
    ],
)
def test_the_plain_spellings_of_record_are_read_without_click(
    argv: list[str], expected: tuple[str, ...]
) -> None:
    assert record_arguments(argv) == RecordArguments(*expected)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["next", RUN],
        ["record"],
        ["record", RUN],
        ["record", RUN, "--agent"],
        ["record", RUN, "--agent=x"],
        ["record", RUN, "--agent", "x", "--agent", "y"],
        ["record", RUN, "--agent", "-x"],
        ["record", RUN, "--agent", "x", "--from-hook", "--help"],
        ["record", RUN, "--agent", "x", "--help"],
        ["record", RUN, "--agent", "x", "-h"],
        ["record", RUN, "--agent", "x", "--"],
        ["record", RUN, "a.json", "b.json", "--agent", "x"],
        ["record", RUN, "--agent", "x", "--from", "a1"],
        ["--version", "record", RUN, "--agent", "x"],
    ],
)
def test_every_other_command_line_is_left_to_click(argv: list[str]) -> None:
    assert record_arguments(argv) is None


def engine(project: Path, code: list[str], args: list[str], stdin: bytes) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(LIB), "CLAUDE_PROJECT_DIR": str(project)}
    done = subprocess.run(
        [sys.executable, *code, *args], input=stdin, capture_output=True, env=env, cwd=project, check=False
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


WITHOUT_CLICK = ["-m", "fixloop"]
THROUGH_CLICK = ["-c", "from fixloop.cli import main; main()"]
GOOD = json.dumps(reviewer_doc("code-reviewer", [issue("A-1", 1, "Wrong")])).encode()


@pytest.mark.parametrize(
    ("args", "stdin", "exit_code"),
    [
        (["--agent", "code-reviewer", "--from-hook", "a1", "-"], GOOD, 0),
        (["--agent", "code-reviewer", "-"], b"I found nothing worth reporting.", 1),
        (["--agent", "code-reviewer", "-"], GOOD.replace(b'"medium"', b'"Medium"'), 0),
        (["--agent", "review-fixer", "-"], GOOD, 2),
        (["--agent", "code-reviewer", "missing.json"], b"", 2),
        (["--agent", "code-reviewer", "--agent", "test-analyzer", "-"], GOOD, 1),
        (["--agent=code-reviewer", "-"], GOOD, 0),
        (["--from-hook", "a1", "-"], GOOD, 2),
    ],
)
def test_record_without_click_answers_as_record_through_click(
    git_project: Path, args: list[str], stdin: bytes, exit_code: int
) -> None:
    twin = git_project.parent / "twin"
    shutil.copytree(git_project, twin)
    outcomes = []
    for project, code in ((git_project, WITHOUT_CLICK), (twin, THROUGH_CLICK)):
        run_id = creation.start_run("review", root=project, changed_files=["src/app.py"])["state"]["run_id"]
        assert next_action(project, run_id)["action"] == "agents"
        status, out, err = engine(project, code, ["record", run_id, *args], stdin)
        outcomes.append((status, out.replace(run_id, "RUN"), err.replace(run_id, "RUN")))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == exit_code
    assert json.loads(outcomes[0][1])


def test_a_bad_run_id_is_refused_alike(git_project: Path) -> None:
    args = ["record", "../etc", "--agent", "code-reviewer", "-"]
    without = engine(git_project, WITHOUT_CLICK, args, GOOD)
    assert without == engine(git_project, THROUGH_CLICK, args, GOOD)
    assert json.loads(without[1])["error"]["code"] == "INVALID_RUN_ID"
