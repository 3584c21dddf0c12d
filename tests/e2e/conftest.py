"""Shared fixtures of the end-to-end tests: the scripted API server, the Claude Code runner, and the local
GitHub API server the real ``gh`` CLI talks to."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from claude_runner import DEFAULT_TIMEOUT, REPO_ROOT, ClaudeRunner, find_claude_binary
from fake_github import FakeGitHub, make_git_repo
from scripted_api import Script, ScriptedAPI

# The sample project's own tests are run by the scenarios inside a throwaway copy, never collected here.
collect_ignore = ["sample_repo", "samples", "node_modules"]

StartAPI = Callable[..., ScriptedAPI]
MakeRunner = Callable[..., ClaudeRunner]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


@pytest.fixture
def claude_bin() -> Path:
    """The pinned CLI. Missing: the test is skipped on a developer machine, and fails in CI (CI=true)."""
    found = find_claude_binary()
    if found is None:
        message = "Claude Code CLI not installed: run `npm ci --prefix tests/e2e` (or set FIXLOOP_CLAUDE_BIN)"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture
def start_api(tmp_path: Path) -> Iterator[StartAPI]:
    """``start_api(script, chunk_size=None)`` starts a ScriptedAPI logging to ``tmp_path/requests-N.jsonl``;
    every server started is stopped at teardown."""
    servers: list[ScriptedAPI] = []

    def start(script: Script, *, chunk_size: int | None = None) -> ScriptedAPI:
        log = tmp_path / f"requests-{len(servers) + 1}.jsonl"
        api = ScriptedAPI(script, log_path=log, chunk_size=chunk_size)
        servers.append(api)
        return api.start()

    yield start
    for api in servers:
        api.stop()


@pytest.fixture(scope="session")
def shared_plugin_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ``${CLAUDE_PLUGIN_DATA}`` for every run of the session that opts in (``make_runner(...,
    shared_plugin_data=shared_plugin_data)``), so the plugin's Python environment is built once."""
    return tmp_path_factory.mktemp("plugin-data")


@pytest.fixture
def make_runner(claude_bin: Path, tmp_path: Path) -> MakeRunner:
    """``make_runner(api, plugin_dir=REPO_ROOT, timeout=..., env=..., shared_plugin_data=...)``: a
    ClaudeRunner talking to ``api``, with its own work directory (projects, config dirs) in ``tmp_path``."""
    made: list[ClaudeRunner] = []

    def make(
        api: ScriptedAPI,
        plugin_dir: Path | None = REPO_ROOT,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        env: Mapping[str, str] | None = None,
        shared_plugin_data: Path | None = None,
    ) -> ClaudeRunner:
        runner = ClaudeRunner(
            claude_bin,
            tmp_path / f"work-{len(made) + 1}",
            plugin_dir=plugin_dir,
            base_url=api.url,
            request_log=api.log_path,
            timeout=timeout,
            shared_plugin_data=shared_plugin_data,
            env=dict(env or {}),
        )
        made.append(runner)
        return runner

    return make


def _missing(message: str) -> None:
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def gh_bin() -> Path:
    """The ``gh`` CLI on PATH. Missing: skipped on a developer machine, a failure in CI (CI=true)."""
    found = shutil.which("gh")
    if found is None:
        _missing("GitHub CLI not installed: run `bash scripts/dev/setup` (or apt-get install gh)")
    return Path(str(found))


@pytest.fixture
def github(tmp_path: Path) -> Iterator[FakeGitHub]:
    """A running :class:`fake_github.FakeGitHub` (certificates made with openssl in ``tmp_path``), seeded
    with the empty repository ``octo/demo`` (``github.repo``); run ``gh`` with ``env=github.env``."""
    if shutil.which("openssl") is None:
        _missing("openssl not installed: run `bash scripts/dev/setup` (or apt-get install openssl)")
    with FakeGitHub(tmp_path / "github") as server:
        yield server
    assert server.errors == [], "the fake GitHub server failed on a request:\n" + "\n".join(server.errors)


@pytest.fixture
def github_checkout(github: FakeGitHub, tmp_path: Path) -> Path:
    """A git checkout of ``octo/demo`` (branch main, one commit) whose ``origin`` is on the fake host."""
    return make_git_repo(tmp_path / "checkout", github)


def runs_left_running(base: Path) -> list[str]:
    """Every fixloop run of a Claude Code session under ``base`` whose state still says ``running`` although
    nothing waits on a user's answer: a command ended and left its run unfinished."""
    import json

    left = []
    for directory, subdirs, _files in os.walk(base):
        subdirs[:] = [name for name in subdirs if name not in ("node_modules", ".git", ".venv")]
        if not directory.endswith(os.path.join(".claude", "fixloop", "runs")):
            continue
        for run in sorted(subdirs):
            state_file = Path(directory) / run / "state.json"
            try:
                state = json.loads(state_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            question = (state.get("flow") or {}).get("question")
            in_session = bool(state.get("claude_session_id"))  # a command's run, not one a test wrote itself
            if in_session and state.get("status") == "running" and not isinstance(question, dict):
                left.append(str(state_file.parent))
        subdirs[:] = []
    return left


@pytest.fixture(autouse=True)
def no_run_left_running(tmp_path: Path) -> Iterator[None]:
    """After every end-to-end test: no run of it is left ``running`` (one waiting for the user's answer is
    not running on)."""
    yield
    left = runs_left_running(tmp_path)
    assert left == [], f"runs left running after the test: {left}"
