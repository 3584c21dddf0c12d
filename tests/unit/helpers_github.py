"""Fixtures and helpers for tests that drive the real `gh` against the local GitHub server (fake_github).

Import the fixtures in a conftest (`from helpers_github import github, gh_env, pr_checkout  # noqa`).
`gh_env` gives the test process gh's environment pointing at the server, so the engine, which runs gh with
the user's environment, talks to it; `pr_checkout` is a checkout of octo/demo on the branch of pull
request #7 (author alice), with a commit holding src/app.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_github import FakeGitHub, PullRequest, make_git_repo

from fixloop.runs import lifecycle
from fixloop.runs.creation import start_run
from fixloop.workflows import driver, intake

PR_BRANCH = "fix/parser"
APP = "def parse(line):\n    return line.split(',')\n"


def _missing(message: str) -> None:
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def github(tmp_path: Path) -> Iterator[FakeGitHub]:
    """A running FakeGitHub with the repository octo/demo (skipped without gh or openssl, failed in CI)."""
    for tool in ("gh", "openssl"):
        if shutil.which(tool) is None:
            _missing(f"{tool} not installed: run `bash scripts/dev/setup`")
    with FakeGitHub(tmp_path / "github") as server:
        yield server
    assert server.errors == [], "the fake GitHub server failed on a request:\n" + "\n".join(server.errors)


@pytest.fixture
def gh_env(github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """This process's environment becomes gh's environment for the server (the engine passes it on)."""
    env = github.env
    for name in list(os.environ):
        if name not in env:
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def pr_checkout(github: FakeGitHub, gh_env: dict[str, str], tmp_path: Path) -> Path:
    """octo/demo checked out on fix/parser (src/app.py committed), fixloop's files excluded from git."""
    checkout = make_git_repo(tmp_path / "checkout", github)
    git(checkout, "config", "user.name", "Octo Cat")
    git(checkout, "config", "user.email", "octocat@fixloop.test")
    (checkout / ".git" / "info" / "exclude").write_text(".claude/\n")
    git(checkout, "checkout", "-q", "-b", PR_BRANCH)
    (checkout / "src").mkdir()
    (checkout / "src" / "app.py").write_text(APP)
    git(checkout, "add", "src/app.py")
    git(checkout, "commit", "-q", "-m", "Add the parser")
    return checkout.resolve()


def open_pr(github: FakeGitHub, **fields: Any) -> PullRequest:
    return github.repo.add_pull_request(7, head_ref_name=PR_BRANCH, author="alice", **fields)


# ---- driving a run -------------------------------------------------------------------------------


def start(
    project: Path, pr: str = "7", *, phase: str | None = None, dry_run: bool = False, **config: Any
) -> str:
    config_file = project / ".claude" / "test-config.json"
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(json.dumps({"use_verifier": False, **config}))
    result = start_run(
        "pr-review",
        root=project,
        phase=phase,
        dry_run=dry_run,
        config_file=config_file,
        claude_session_id="",
        inputs={"pr": pr},
        trust_config=True,  # the test's own verification commands
    )
    return str(result["state"]["run_id"])


def step(project: Path, run_id: str) -> dict[str, Any]:
    return driver.next_action(project, run_id)


def answer(project: Path, run_id: str, agent: str, document: Any) -> dict[str, Any]:
    path = project / ".claude" / "answers" / f"{agent}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return intake.record_answer(project, run_id, str(path.relative_to(project)), agent, None)


def task(project: Path, run_id: str, agent: str) -> str:
    return driver.task(project, run_id, agent)


def state(project: Path, run_id: str) -> dict[str, Any]:
    return lifecycle.load_run(project, run_id)


def events(project: Path, run_id: str) -> list[dict[str, Any]]:
    path = Path(state(project, run_id)["logging"]["log_files"]["jsonl"])
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def called(action: dict[str, Any]) -> list[str]:
    """The agents an `agent`/`agents` action asks for (without the plugin prefix)."""
    return [call["subagent_type"].removeprefix("fixloop:") for call in action.get("calls") or []]
