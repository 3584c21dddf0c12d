"""`/fixloop:review --pr [N]`: the typed flag, with or without its value, reaches the run's inputs; other
commands refuse it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixloop.core.errors import FixloopError
from fixloop.runs.command_start import prompt_path, start_command
from fixloop.runs.typed_command import parse_typed_command

SESSION = "sess-pr"
ENV = {"CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_CODE_SESSION_ATTENDED": "0"}


@pytest.mark.parametrize(
    ("typed", "pr", "text"),
    [
        ("/fixloop:review --pr 7 src/a.py", "7", "src/a.py"),
        ("/fixloop:review --pr", "", ""),
        ("/fixloop:review --pr src", "", "src"),
        ("/fixloop:review src --pr #12", "#12", "src"),
        ("/fixloop:review --pr=https://github.com/o/r/pull/3 --dry-run", "https://github.com/o/r/pull/3", ""),
    ],
)
def test_pr_takes_a_number_or_url_or_nothing(typed: str, pr: str, text: str) -> None:
    command = parse_typed_command(typed, "review")
    assert (command.options["pr"], command.text) == (pr, text)


def store(root: Path, prompt: str) -> None:
    path = prompt_path(root, SESSION)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"prompt": prompt, "prompt_id": "p1", "ts_ms": 1}), encoding="utf-8")


def test_review_keeps_the_pr_to_publish_on(git_project: Path) -> None:
    (git_project / "src" / "app.py").write_text("print('changed')\n")
    store(git_project, "/fixloop:review --pr 7")
    assert start_command(git_project, "review", ENV)["inputs"] == {"publish_pr": "7"}
    store(git_project, "/fixloop:review")
    assert start_command(git_project, "review", ENV)["inputs"] == {}


def test_another_command_refuses_pr(git_project: Path) -> None:
    store(git_project, "/fixloop:fix-backend --pr 7 the parser fails")
    with pytest.raises(FixloopError) as caught:
        start_command(git_project, "fix-backend", ENV)
    assert caught.value.code == "UNKNOWN_ARGUMENT"
