"""Installing fixloop as users do, running it headless in CI, and running it where the engine's Python
dependencies are missing: the real pinned CLI, the real plugin and the scripted model.

- ``claude plugin marketplace add`` + ``claude plugin install`` in an isolated config, then
  ``/fixloop:review`` from the installed plugin, without ``--plugin-dir``;
- the CI recipe: ``claude -p "/fixloop:review --trust-config"``, then ``fixloop review report latest
  --format sarif --fail-on high``;
- no dependency environment and no package index: hooks fail open, the failed build is on record, and the
  review completes with python3 on PATH, which has the dependencies;
- no interpreter with the dependencies at all: ``fixloop start`` says so in one sentence, the command stops
  before any model turn, and the session goes on working.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path
from typing import Any

from claude_runner import REPO_ROOT, ClaudeRunner, RunResult, child_env
from fixloop_model import COORDINATOR, MAIN, MARKERS, FixloopModel, Scenario, issue, reviewer
from fixloop_session import (
    CHANGED_FILES,
    MakeRunner,
    StartAPI,
    approve_commands,
    read_run,
    reply_tool_uses,
    run_engine_text,
)
from scripted_api import Reply, Request, ScriptedAPI, agent_call, subagent_report, system_text

from fixloop.core.agent_names import REVIEWER_AGENTS

JSON = dict[str, Any]

CHECK_DEPS = "import click, jsonschema, pydantic"


def hooks_ok(result: RunResult) -> set[str]:
    """Every hook the stream reported exited 0 with outcome success, and none blocked; their events."""
    hooks = result.hook_responses()
    assert hooks, "the stream has no hook records"
    assert {(h.get("exit_code"), h.get("outcome")) for h in hooks} == {(0, "success")}, hooks
    assert not [h for h in hooks if '"decision"' in str(h.get("stdout", ""))], hooks
    return {str(h["hook_event"]) for h in hooks}


def succeeded(result: RunResult) -> None:
    assert (result.exit_code, result.timed_out, result.is_error) == (0, False, False), result.summary()


# ------------------------------------------------------------------------------------------------
# Installed from the marketplace
# ------------------------------------------------------------------------------------------------


def export_repository(dest: Path) -> Path:
    """The repository as a user's clone has it: tracked and untracked files, none that git ignores."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO_ROOT / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


def install_from_marketplace(
    runner: ClaudeRunner, api: ScriptedAPI, work: Path, plugin_data: Path
) -> tuple[Path, Path]:
    """A fresh config with fixloop installed from a local marketplace (a clone-like copy of the repository);
    its plugin data directory is ``plugin_data`` (the engine's environment is built once per test session).
    (config dir, the installed plugin's source)."""
    source = export_repository(work / "fixloop-checkout")
    config = work / "claude-config"
    config.mkdir()
    env = child_env(config_dir=config, base_url=api.url)

    def plugin(*args: str) -> str:
        done = subprocess.run(
            [str(runner.binary), "plugin", *args],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done
        return done.stdout

    assert "Successfully added marketplace: fixloop" in plugin("marketplace", "add", str(source))
    assert "Successfully installed plugin: fixloop@fixloop" in plugin("install", "fixloop@fixloop")
    listing = json.loads((config / "plugins" / "installed_plugins.json").read_text())
    assert [p["version"] for p in listing["plugins"]["fixloop@fixloop"]] == ["0.1.0"]
    assert json.loads((config / "settings.json").read_text())["enabledPlugins"] == {"fixloop@fixloop": True}
    data = config / "plugins" / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "fixloop-fixloop").symlink_to(plugin_data.resolve())
    return config, source


def test_installed_from_the_marketplace_review_runs_without_plugin_dir(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path, tmp_path: Path
) -> None:
    model = FixloopModel()
    api = start_api(model.script())
    runner = make_runner(api, plugin_dir=None, timeout=120.0)
    config, source = install_from_marketplace(runner, api, tmp_path, shared_plugin_data)
    project = runner.new_project(uncommitted=["inventory/report.py"])
    approve_commands(project, shared_plugin_data)
    result = runner.run("/fixloop:review", project_dir=project, config_dir=config)
    assert "--plugin-dir" not in result.command
    succeeded(result)
    assert model.problems == [] and api.unmatched == []

    # The CLI loaded the installed plugin, from the marketplace's directory.
    init = result.init or {}
    (loaded,) = [p for p in init["plugins"] if p["name"] == "fixloop"]
    assert (loaded["source"], loaded["path"]) == ("fixloop@fixloop", str(source))
    assert "fixloop:review" in init["slash_commands"]
    assert f"fixloop:{COORDINATOR}" in init["agents"]
    # The forked coordinator ran from the installed files, and so did the engine its hooks called.
    run = read_run(project)
    coordinator = [r for r in result.message_requests() if r["rule"] == COORDINATOR]
    assert coordinator and all(MARKERS[COORDINATOR] in system_text(r["body"]) for r in coordinator)
    prompts = [str(u["input"]["prompt"]) for u in reply_tool_uses(coordinator[0])]
    assert len(prompts) == 6 and all(
        f'"{source / "scripts" / "fixloop"}" task {run.run_id}' in p for p in prompts
    )
    assert [r["rule"] for r in result.message_requests()].count(MAIN) == 0
    # The run: reviewed, nothing found.
    state = run.state
    assert (state["workflow"], state["changed_files"], state["claude_session_id"]) == (
        "review",
        ["inventory/report.py"],
        result.session_id,
    )
    assert (state["status"], run.review["outcome"]["termination_reason"]) == ("success", "no_fixable_issues")
    assert sorted(e["agent"] for e in run.of_type("AGENT_RESULT")) == sorted(REVIEWER_AGENTS)
    assert (result.result_text or "").startswith(f"fixloop review {run.run_id}: success (no_fixable_issues)")
    assert hooks_ok(result) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "SubagentStart",
        "SubagentStop",
        "PostToolUse",
        "Stop",
    }


# ------------------------------------------------------------------------------------------------
# The CI recipe
# ------------------------------------------------------------------------------------------------


def test_ci_recipe_reviews_headless_and_fails_the_job_on_a_high_finding(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path, tmp_path: Path
) -> None:
    high = issue("swallowed-error", auto_fixable=False)  # needs a design decision: stays for a person
    low = issue("misleading-comment", severity="low", auto_fixable=False)
    model = FixloopModel(
        Scenario(
            agents={"silent-failure-hunter": reviewer({1: [high]}), "comment-analyzer": reviewer({1: [low]})}
        )
    )
    api = start_api(model.script())
    runner = make_runner(api, plugin_dir=None, timeout=120.0)
    config, source = install_from_marketplace(runner, api, tmp_path, shared_plugin_data)
    project = runner.new_project(uncommitted=list(CHANGED_FILES))
    # Exactly what the job runs: no --allowedTools, no --permission-mode; the commands approved by the flag.
    result = runner.run("/fixloop:review --trust-config", project_dir=project, config_dir=config)
    succeeded(result)
    assert model.problems == [] and api.unmatched == []
    run = read_run(project)
    assert (run.state["trust"]["status"], run.state["trust"]["by"]) == ("approved", "--trust-config")
    assert run.state["interactive"] is False
    assert run.review["outcome"]["termination_reason"] == "no_fixable_issues"
    assert (run.state["verification"]["status"], run.review["gate"]["passed"]) == ("passed", True)

    engine = source / "scripts" / "fixloop"

    def report(*args: str) -> tuple[int, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC_", "FIXLOOP_"))}
        env["CLAUDE_CONFIG_DIR"] = str(config)  # the job's config: the engine finds the plugin's data there
        done = subprocess.run(
            [str(engine), "review", "report", "latest", *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return done.returncode, done.stdout

    # A remaining high finding fails the job, after the SARIF report is printed.
    code, out = report("--format", "sarif", "--fail-on", "high")
    assert code == 1, out
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    located = {
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in results
    }
    assert located == {("inventory/stock.py", 14), ("inventory/stock.py", 27)}
    # Only a critical finding would fail it at --fail-on critical.
    code, out = report("--format", "sarif", "--fail-on", "critical")
    assert code == 0 and json.loads(out) == sarif


# ------------------------------------------------------------------------------------------------
# No dependency environment
# ------------------------------------------------------------------------------------------------


def has_deps(python: str) -> bool:
    return (
        subprocess.run([python, "-c", CHECK_DEPS], capture_output=True, timeout=60, check=False).returncode
        == 0
    )


def offline_env(work: Path, python3: Path) -> dict[str, str]:
    """An environment where building the dependency environment is impossible: PATH has only ``python3``
    (a wrapper around ``python3``), a ``uv`` that refuses, and the system directories; pip has no index, no
    find-links, no config file; HOME is empty (no user pip config, no ~/.cache/fixloop)."""
    tools = work / "tools"
    tools.mkdir(parents=True)
    (tools / "python3").write_text(f'#!/bin/sh\nexec "{python3}" "$@"\n')
    (tools / "uv").write_text('#!/bin/sh\necho "uv: no package index in this test" >&2\nexit 1\n')
    for script in ("python3", "uv"):
        (tools / script).chmod(0o755)
    (work / "home").mkdir()
    (work / "no-wheels").mkdir()
    return {
        "PATH": f"{tools}:/usr/bin:/bin",
        "HOME": str(work / "home"),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_EXTRA_INDEX_URL": "",
        "PIP_FIND_LINKS": str(work / "no-wheels"),
        "UV_OFFLINE": "1",
        "UV_NO_INDEX": "1",
        "PYTHONPATH": "",
        "FIXLOOP_PYTHON": "",
        "FIXLOOP_DATA": "",
        "FIXLOOP_NO_BUILD": "",
        "FIXLOOP_BUILD_PYTHON": "",
    }


def warnings_of(data: Path) -> list[JSON]:
    path = data / "hook-warnings.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


def build_lock_free(data: Path) -> bool:
    fd = os.open(data / "venv.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def wait_for_builds(data: Path, timeout: float = 90.0) -> str:
    """Wait until every build started has ended: none holds the build lock, bootstrap.log says how the last
    one ended, and each failed one has left its ENGINE_BUILD_FAILED warning (written after the lock is
    released). bootstrap.log's content."""
    deadline = time.monotonic() + timeout
    log, builds = data / "bootstrap.log", data / "venv-builds.log"
    while time.monotonic() < deadline:
        content = log.read_text(encoding="utf-8") if log.exists() else ""
        started = len(builds.read_text(encoding="utf-8").splitlines()) if builds.exists() else 0
        failed = [w for w in warnings_of(data) if w.get("code") == "ENGINE_BUILD_FAILED"]
        ended = "environment ready" in content or len(failed) >= started > 0
        if ended and build_lock_free(data):
            return content
        time.sleep(0.1)
    raise AssertionError(f"the environment build did not end within {timeout}s: {log}")


def test_without_a_dependency_environment_the_review_still_completes_with_python3_on_path(
    start_api: StartAPI, make_runner: MakeRunner, tmp_path: Path
) -> None:
    assert has_deps(sys.executable), (
        f"{sys.executable} lacks the engine's dependencies (run scripts/dev/setup)"
    )
    model = FixloopModel()
    api = start_api(model.script())
    # A fresh, empty plugin data directory: no environment, nothing cached.
    runner = make_runner(api, env=offline_env(tmp_path / "offline", Path(sys.executable)), timeout=120.0)
    project = runner.new_project(uncommitted=["inventory/report.py"])
    result = runner.run("/fixloop:review --trust-config", project_dir=project)
    data = result.config_dir / "plugins" / "data" / "fixloop-inline"
    build_log = wait_for_builds(data)

    # The session went through: every hook exited 0 and none blocked.
    succeeded(result)
    assert model.problems == [] and api.unmatched == []
    assert hooks_ok(result) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "SubagentStart",
        "SubagentStop",
        "PostToolUse",
        "Stop",
    }
    # SessionStart started a build, which could not work: no index, no uv. It is on record, with why.
    assert "cannot build the environment: pip could not download click, jsonschema and pydantic" in build_log
    assert "No matching distribution found" in (data / "venv-build-output.log").read_text(encoding="utf-8")
    assert len((data / "venv-builds.log").read_text(encoding="utf-8").splitlines()) == 1
    assert not (data / "venv" / "fixloop-requirements.sha256").exists()
    (warning,) = warnings_of(data)
    assert (warning["level"], warning["type"], warning["code"]) == ("W", "WARNING", "ENGINE_BUILD_FAILED")
    assert warning["session_id"] == result.session_id
    assert warning["message"].startswith("cannot build the environment: ")
    # The engine ran all along with python3 on PATH, which has the dependencies.
    (checked,) = (data / "interpreters.tsv").read_text().splitlines()
    assert checked.split("\t")[1:3] == ["ok", str(tmp_path / "offline" / "tools" / "python3")]
    # The review completed, with its report.
    run = read_run(project)
    assert (run.state["status"], run.state["changed_files"]) == ("success", ["inventory/report.py"])
    assert run.review["outcome"]["termination_reason"] == "no_fixable_issues"
    assert sorted(e["agent"] for e in run.of_type("AGENT_RESULT")) == sorted(REVIEWER_AGENTS)
    assert not run.of_type("WARNING")
    code, markdown = run_engine_text(project, "review", "report", run.run_id, "--format", "markdown")
    assert code == 0 and "| success | no_fixable_issues | 1 |" in markdown


# ------------------------------------------------------------------------------------------------
# No interpreter with the dependencies
# ------------------------------------------------------------------------------------------------

REVIEWER_SAID = {"status": "success", "agent": "code-reviewer", "issues": [], "positive_observations": []}


def ask_the_reviewer(request: Request) -> Reply:
    """The main thread of the conversation that goes on: call fixloop's code reviewer, then quote it."""
    results = [m for m in request.body["messages"] if m.get("role") == "assistant"]
    if not results:
        return Reply.tools(agent_call("fixloop:code-reviewer", "Review inventory/report.py"))
    last = request.body["messages"][-1]["content"][0]
    text = last["content"][0]["text"] if isinstance(last["content"], list) else str(last["content"])
    return Reply.text("REVIEWER SAID: " + (subagent_report(text) or "?"))


def test_with_no_interpreter_that_has_the_dependencies_the_command_stops_with_one_sentence(
    start_api: StartAPI, make_runner: MakeRunner, tmp_path: Path
) -> None:
    bare = tmp_path / "bare-venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(bare)  # python without click/jsonschema/pydantic
    assert not has_deps(str(bare / "bin" / "python3"))
    scenario = Scenario(agents={"code-reviewer": lambda turn: REVIEWER_SAID}, main=ask_the_reviewer)
    model = FixloopModel(scenario)
    api = start_api(model.script())
    runner = make_runner(api, env=offline_env(tmp_path / "offline", bare / "bin" / "python3"), timeout=120.0)
    project = runner.new_project(uncommitted=["inventory/report.py"])
    result = runner.run("/fixloop:review", project_dir=project)
    data = result.config_dir / "plugins" / "data" / "fixloop-inline"

    # The command's `!` line (fixloop start) could not start the engine: one sentence for a person, and
    # Claude Code ended the command with it; the model was never called. Every hook exited 0.
    succeeded(result)
    assert result.message_requests() == []
    text = result.result_text or ""
    (sentence,) = [line for line in text.splitlines() if line.startswith("fixloop cannot start: ")]
    assert sentence.endswith("(ENGINE_UNAVAILABLE)")
    assert f'run "{REPO_ROOT / "scripts" / "fixloop"}" --version once to build {data / "venv"}' in sentence
    assert "FIXLOOP_PYTHON" in sentence and '{"status"' not in text
    assert hooks_ok(result) == {"SessionStart", "UserPromptSubmit"}
    assert not (project / ".claude" / "fixloop" / "runs").exists()
    # Every build started (SessionStart's in the background, the entry point's own) failed and said so.
    wait_for_builds(data)
    builds = (data / "venv-builds.log").read_text(encoding="utf-8").splitlines()
    assert len(builds) >= 1
    assert [w["code"] for w in warnings_of(data)] == ["ENGINE_BUILD_FAILED"] * len(builds)

    # The session is not broken: the same conversation goes on, and a fixloop agent still runs, its answer
    # handed back untouched (no run to record it in), with every hook exiting 0.
    again = runner.run(
        "Does the reviewer still work?",
        project_dir=project,
        config_dir=result.config_dir,
        extra_args=["--resume", str(result.session_id)],
    )
    succeeded(again)
    assert again.session_id == result.session_id
    assert "ENGINE_UNAVAILABLE" in json.dumps(again.message_requests()[0]["body"]["messages"])
    assert [r["rule"] for r in again.message_requests()] == [MAIN, "code-reviewer", MAIN]
    assert again.result_text == "REVIEWER SAID: " + json.dumps(REVIEWER_SAID)
    assert {"PreToolUse", "SubagentStart", "SubagentStop", "PostToolUse"} <= hooks_ok(again)
    # No run, so no task for the reviewer: the one thing the model noticed.
    assert [p.split(": ", 1)[1] for p in model.problems] == [
        "code-reviewer started without its task (no SubagentStart context)"
    ]
    assert api.unmatched == []
    assert not (project / ".claude" / "fixloop" / "runs").exists()
