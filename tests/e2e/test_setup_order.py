"""README's set-up in either order, on a fresh config directory, with the real CLI and the installed
plugin: `fixloop init` from a terminal before the plugin's first session, or after it; either way the
first review runs the checks init approved (no VERIFY_COMMANDS_UNTRUSTED, no second environment)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claude_runner import ClaudeRunner, child_env, git
from fixloop_model import FixloopModel, Scenario
from fixloop_session import MakeRunner, StartAPI, read_run
from scripted_api import Reply, Request, ScriptedAPI, bash_call, tool_results
from test_install_and_environment import export_repository, succeeded


def install(runner: ClaudeRunner, api: ScriptedAPI, work: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """`claude plugin marketplace add CLONE` and `claude plugin install fixloop@fixloop` in a fresh config
    directory, and nothing else: no data directory is made for the plugin. (config dir, the clone)."""
    source = export_repository(work / "fixloop-clone")
    config = work / "claude-config"
    config.mkdir()
    cli_env = {**child_env(config_dir=config, base_url=api.url), **env}
    for args in (["marketplace", "add", str(source)], ["install", "fixloop@fixloop"]):
        done = subprocess.run(
            [str(runner.binary), "plugin", *args],
            env=cli_env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done
    assert not (config / "plugins" / "data").exists() or not any((config / "plugins" / "data").iterdir())
    return config, source


def terminal_init(source: Path, project: Path, config: Path, env: dict[str, str]) -> dict[str, object]:
    """README's `FIXLOOP init`, typed in a terminal in the project (no variable of Claude Code's set)."""
    terminal = {**child_env(config_dir=config, base_url="http://127.0.0.1:1"), **env}
    done = subprocess.run(
        [str(source / "scripts" / "fixloop"), "init"],
        cwd=project,
        env=terminal,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def first_session(request: Request) -> Reply:
    """The first session's main thread: it runs `fixloop --version` through the Bash tool and says what
    the tool printed."""
    results = tool_results(request.body)
    if results:
        return Reply.text("".join(str(result.text) for result in results))
    return Reply.tools(bash_call("command -v fixloop && fixloop --version"))


def path_without_fixloop() -> str:
    """This PATH less its directories that hold a `fixloop` (the dev environment's .venv/bin has one: the
    engine's console script): a user's PATH has none; the plugin's bin/ must be what the Bash tool finds."""
    found = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in found if d and not (Path(d) / "fixloop").exists())


@pytest.mark.parametrize("order", ["init_first", "session_first"])
def test_readme_setup_in_either_order_lets_the_first_review_run_its_approved_checks(
    order: str, start_api: StartAPI, make_runner: MakeRunner, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    # the engine's dependencies come from this interpreter: building an environment is not what is tested
    env = {"HOME": str(home), "FIXLOOP_PYTHON": sys.executable, "PATH": path_without_fixloop()}
    model = FixloopModel(Scenario(main=first_session))
    api = start_api(model.script())
    runner = make_runner(api, plugin_dir=None, env=env)
    config, source = install(runner, api, tmp_path, env)
    project = runner.new_project(uncommitted=["inventory/report.py"])
    git(project, "rm", "-q", ".claude/fixloop.json")  # a project fixloop never saw: init writes its config
    git(project, "commit", "-q", "-m", "no fixloop config yet", "--", ".claude/fixloop.json")

    if order == "session_first":
        first = runner.run("hello", project_dir=project, config_dir=config, allowed_tools=["Bash"])
        succeeded(first)
        # the plugin's bin/ is on the Bash tool's PATH: `fixloop` there is the installed plugin's engine
        printed = (first.result_text or "").strip().splitlines()
        assert printed == [str(source / "bin" / "fixloop"), "fixloop, version 0.1.0"]
    written = terminal_init(source, project, config, env)
    commands = written["commands"]
    assert isinstance(commands, dict) and list(commands) == ["tests"] and written["left_out"] == {}
    command = commands["tests"]["command"]
    result = runner.run("/fixloop:review", project_dir=project, config_dir=config)
    succeeded(result)
    assert model.problems == [] and api.unmatched == []

    data = config / "plugins" / "data" / "fixloop-fixloop"
    assert len(list((data / "approvals").glob("*.json"))) == 1  # init's approval, where the plugin reads it
    assert not (home / ".cache" / "fixloop").exists()  # no second data directory, no second environment
    run = read_run(project)
    assert run.state["trust"]["status"] == "approved"
    checks = run.state["verification"]
    assert (checks["tests"]["command"], checks["tests"]["status"]) == (command, "passed")
    assert run.state["status"] == "success"
