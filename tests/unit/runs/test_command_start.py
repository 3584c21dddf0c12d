"""`fixloop start COMMAND`: the run of a slash command, from the prompt the UserPromptSubmit hook stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers_runs import LIB

from fixloop.core.errors import FixloopError
from fixloop.runs.command_start import prompt_path, start_command, started_text

SESSION = "sess-7"


def store_prompt(root: Path, prompt: str, session: str = SESSION) -> Path:
    path = prompt_path(root, session)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"prompt": prompt, "prompt_id": "p1", "ts_ms": 1}), encoding="utf-8")
    return path


def env(attended: str = "0") -> dict[str, str]:
    return {"CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_CODE_SESSION_ATTENDED": attended}


def test_the_users_words_reach_the_run_exactly(git_project: Path) -> None:
    words = "fails with `KeyError` when price is $0 and \"name\" is 'x'\nnaïve café"
    path = store_prompt(git_project, f"/fixloop:fix-backend --dry-run {words}")
    state = start_command(git_project, "fix-backend", env())
    assert (state["workflow"], state["stack"], state["dry_run"]) == ("bugfix", "backend", True)
    assert state["free_text"] == words
    assert state["command"] == f"/fixloop:fix-backend --dry-run {words}"
    assert state["interactive"] is False
    assert not path.exists()  # read once
    assert (
        started_text(state)
        == f"fixloop run {state['run_id']} started: bugfix (backend), phases 0,1,2,3,4,5, dry run."
    )


@pytest.mark.parametrize(("flag", "trusted"), [("--trust-config ", True), ("", False)])
def test_trust_config_is_taken_from_the_typed_command(git_project: Path, flag: str, trusted: bool) -> None:
    store_prompt(git_project, f"/fixloop:review {flag}src")
    state = start_command(git_project, "review", env())
    assert (state["trust_config"], state["free_text"]) == (trusted, "src")


def test_an_attended_session_is_interactive(git_project: Path) -> None:
    store_prompt(git_project, "/fixloop:execute-plan docs/plan.md")
    state = start_command(git_project, "execute-plan", env(attended="1"))
    assert state["interactive"] is True
    assert state["inputs"] == {"plan": "docs/plan.md"}


def test_review_takes_named_paths_or_the_git_changes(git_project: Path) -> None:
    (git_project / "src" / "app.py").write_text("changed\n")
    store_prompt(git_project, "/fixloop:review")
    assert start_command(git_project, "review", env())["changed_files"] == ["src/app.py"]
    store_prompt(git_project, "/fixloop:review README.md src")
    assert start_command(git_project, "review", env())["changed_files"] == ["README.md", "src/app.py"]
    store_prompt(git_project, "/fixloop:review nothing.py")
    with pytest.raises(FixloopError) as caught:
        start_command(git_project, "review", env())
    assert caught.value.code == "PATH_NOT_FOUND"


def test_review_outside_git_says_how_to_name_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    store_prompt(tmp_path, "/fixloop:review")
    with pytest.raises(FixloopError) as caught:
        start_command(tmp_path, "review", env())
    assert caught.value.code == "NOT_A_GIT_REPOSITORY"
    assert "/fixloop:review path/to/file.py" in caught.value.message


@pytest.mark.parametrize(
    ("setup", "environ", "code"),
    [
        (lambda root: None, {"CLAUDE_CODE_SESSION_ID": SESSION}, "ARGUMENTS_UNAVAILABLE"),
        (lambda root: store_prompt(root, "/fixloop:review"), {}, "NO_SESSION"),
        (
            lambda root: store_prompt(root, "/fixloop:fix-ci 12"),
            {"CLAUDE_CODE_SESSION_ID": SESSION},
            "PROMPT_MISMATCH",
        ),
        (
            lambda root: (
                prompt_path(root, SESSION).parent.mkdir(parents=True)
                or prompt_path(root, SESSION).write_text("{")
            ),
            {"CLAUDE_CODE_SESSION_ID": SESSION},
            "ARGUMENTS_UNAVAILABLE",
        ),
    ],
)
def test_what_cannot_start_says_why(
    git_project: Path, setup: object, environ: dict[str, str], code: str
) -> None:
    setup(git_project)  # type: ignore[operator]
    with pytest.raises(FixloopError) as caught:
        start_command(git_project, "review", environ)
    assert caught.value.code == code
    assert not (git_project / ".claude" / "fixloop" / "runs").exists()


def test_the_command_line_prints_a_sentence_and_a_non_zero_status(git_project: Path) -> None:
    store_prompt(git_project, "/fixloop:review --dry-rn")
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", "start", "review"],
        env={**os.environ, "PYTHONPATH": str(LIB), "CLAUDE_PROJECT_DIR": str(git_project), **env()},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == (
        "fixloop could not start: Unknown argument '--dry-rn'. Did you mean --dry-run? (UNKNOWN_ARGUMENT)\n"
    )
