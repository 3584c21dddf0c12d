"""Workflows, missing dependencies, installing the plugin, and a forged agent result, end to end: the real
pinned Claude Code CLI, the real plugin and a scripted model (tests/e2e/workflow_model.py for the bugfix
workflow, tests/e2e/fixloop_model.py for the review it reaches).

6. ``/fixloop:fix-backend``: phases 0-5 in order, the review at phase 5 on the same run; ``--phase=0,1``;
   ``--phase=9`` refused before the model is called.
7. No dependency environment and no package index: hooks fail open, the failed build is on record
   (ENGINE_BUILD_FAILED), the review completes with an interpreter that has the dependencies; with none at
   all, ``/fixloop:review`` ends with ENGINE_UNAVAILABLE and the session goes on working.
8. ``claude plugin marketplace add`` + ``claude plugin install`` in an isolated config, then
   ``/fixloop:review`` from the installed plugin, without ``--plugin-dir``.
9. A reviewer result written by the main thread itself (no Agent call) is refused: UNVERIFIED_AGENT_RESULT.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
import venv
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from claude_runner import REPO_ROOT, ClaudeRunner, RunResult, child_env, git
from fixloop_model import (
    CLI_PERMISSION_MODE,
    COORDINATOR,
    MAIN,
    FixloopModel,
    RunRecord,
    read_run,
    reply_text,
    reply_tool_uses,
    run_engine,
)
from scripted_api import (
    Reply,
    Request,
    Rule,
    Script,
    ScriptedAPI,
    agent_call,
    prompt_text,
    subagent_report,
    system_text,
    tool_results,
)
from workflow_model import BUGFIX, WORKFLOW_MAIN, WorkflowModel, forged_record_rules

from fixloop.core.agent_names import REVIEWER_AGENTS

StartAPI = Callable[..., ScriptedAPI]
MakeRunner = Callable[..., ClaudeRunner]
JSON = dict[str, Any]

BUG = "load_stock returns an empty stock for a corrupt stock file instead of raising"
REVIEW_BODY = "You run fixloop's review-fix loop."  # agents/review-coordinator.md
ENGINE = REPO_ROOT / "scripts" / "fixloop"
CHECK_DEPS = "import click, jsonschema, pydantic"


def hooks_ok(result: RunResult) -> list[dict[str, Any]]:
    """Every hook the stream reported exited 0 with outcome success, and none printed a block decision."""
    hooks = result.hook_responses()
    assert hooks, "the stream has no hook records"
    assert {(h.get("exit_code"), h.get("outcome")) for h in hooks} == {(0, "success")}, hooks
    assert not [h for h in hooks if '"decision"' in str(h.get("stdout", ""))], hooks
    return hooks


def phase_events(events: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return [(str(e["type"]), str(e["phase"])) for e in events if e["type"] in ("PHASE_START", "PHASE_END")]


def bracketed(phases: Sequence[int]) -> list[tuple[str, str]]:
    return [(kind, f"phase_{n}") for n in phases for kind in ("PHASE_START", "PHASE_END")]


def rules_of(result: RunResult) -> list[str]:
    return [str(r.get("rule")) for r in result.message_requests()]


def requests_of(result: RunResult, rule: str) -> list[JSON]:
    return [r for r in result.message_requests() if r.get("rule") == rule]


def run_workflow(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path, arguments: str
) -> tuple[RunResult, WorkflowModel, ScriptedAPI, Path]:
    model = WorkflowModel()
    api = start_api(model.script())
    runner = make_runner(api, shared_plugin_data=shared_plugin_data, timeout=120.0)
    project = runner.new_project()
    result = runner.run(
        f"/fixloop:fix-backend {arguments}", project_dir=project, permission_mode=CLI_PERMISSION_MODE
    )
    requests = len(result.message_requests())
    print(f"/fixloop:fix-backend {arguments}: {result.duration_s:.2f}s, {requests} requests")
    assert (result.exit_code, result.timed_out, result.is_error) == (0, False, False), result.summary()
    assert model.all_problems() == []
    assert api.unmatched == []
    return result, model, api, project


# ------------------------------------------------------------------------------------------------
# 6. A workflow
# ------------------------------------------------------------------------------------------------


def test_fix_backend_runs_phases_0_to_5_in_order_and_reviews_the_fix_at_phase_5(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    result, model, _api, project = run_workflow(start_api, make_runner, shared_plugin_data, BUG)
    run = read_run(project)
    run_id, state, plan = run.run_id, run.state, model.plan

    # The run state: the bugfix workflow of this session, every phase selected and completed.
    assert (state["workflow"], state["stack"], state["free_text"]) == ("bugfix", "backend", BUG)
    assert state["claude_session_id"] == result.session_id
    assert state["phases"] == [0, 1, 2, 3, 4, 5]
    assert state["phases_completed"] == [f"phase_{n}" for n in range(6)]
    assert [(p["phase"], p["status"]) for p in state["phase_results"]] == [
        (f"phase_{n}", "success") for n in range(6)
    ]
    assert (state["status"], state["open_phases"]) == ("success", {})

    # The JSONL log: PHASE_START/PHASE_END of phase_0 .. phase_5, exactly in this order, inside the session.
    events = run.events
    types = [e["type"] for e in events]
    # The workflow coordinator ends its run, then returns: its own result is the last line.
    assert (types[0], types[-2], types[-1]) == ("SESSION_START", "SESSION_END", "AGENT_RESULT")
    assert events[-1]["agent"] == "bugfix-coordinator"
    assert phase_events(events) == bracketed(range(6))
    assert [e["status"] for e in run.of_type("PHASE_END")] == ["success"] * 6
    assert run.of_type("PHASE_END", phase="phase_0")[0]["summary"] == {"failures": 1, "category": "exception"}
    (confidence,) = run.of_type("CONFIDENCE_DECISION")
    assert (confidence["phase"], confidence["confidence_score"], confidence["decision"]) == (
        "phase_1",
        plan.confidence,
        "auto_continue",
    )
    assert run.of_type("SESSION_END")[0]["phases_completed"] == [f"phase_{n}" for n in range(6)]

    # The review happened inside phase 5, on this very run: the hooks logged the review-coordinator's call
    # and result, the gate and the reviewers between PHASE_START and PHASE_END of phase_5 of this log.
    start5 = events.index(run.of_type("PHASE_START", phase="phase_5")[0])
    end5 = events.index(run.of_type("PHASE_END", phase="phase_5")[0])
    (call,) = [e for e in events if e["type"] == "AGENT_CALL" and e["agent"] == COORDINATOR]
    (done,) = [e for e in events if e["type"] == "AGENT_RESULT" and e["agent"] == COORDINATOR]
    assert start5 < events.index(call) < events.index(done) < end5
    assert (call["phase"], done["status"]) == ("phase_5", "success")
    review_events = [i for i, e in enumerate(events) if str(e["type"]).startswith("REVIEW_")]
    assert review_events and start5 < min(review_events) and max(review_events) < end5
    assert [e["type"] for e in events if e["type"] == "REVIEW_COMPLETE"] == ["REVIEW_COMPLETE"]
    outcome = run.review["outcome"]
    assert (outcome["status"], outcome["termination_reason"]) == ("success", "no_fixable_issues")
    assert state["changed_files"] == sorted([plan.fix_file, plan.plan_file(run_id), plan.test_file])

    # The request log: the bugfix-coordinator launched the review-coordinator in the foreground with
    # "Run RUN" right after `run files RUN --git-diff`; the review-coordinator worked on that run only.
    coordinator = requests_of(result, BUGFIX)
    launches = [(i, u) for i, r in enumerate(coordinator) for u in reply_tool_uses(r) if u["name"] == "Agent"]
    ((index, launch),) = launches
    assert launch["input"]["subagent_type"] == f"fixloop:{COORDINATOR}"
    assert (launch["input"]["prompt"], launch["input"]["run_in_background"]) == (f"Run {run_id}", False)
    (previous,) = reply_tool_uses(coordinator[index - 1])
    assert previous["input"]["command"] == f'"{ENGINE}" run files {run_id} --git-diff'
    review = requests_of(result, COORDINATOR)
    assert review and all(REVIEW_BODY in system_text(r["body"]) for r in review)
    assert {r["body"]["messages"][0]["content"][-1]["text"] for r in review} == {f"Run {run_id}"}
    rules = rules_of(result)
    assert rules.index(COORDINATOR) > rules.index(BUGFIX)
    # ... and its final message, the engine's report, came back to the bugfix-coordinator as the tool result.
    back = [t for t in tool_results(coordinator[index + 1]["body"]) if t.name == "Agent"]
    assert [json.loads(subagent_report(t.text) or "") for t in back] == [json.loads(reply_text(review[-1]))]

    # The coordinator's tool calls: run show, then each phase's start, work and end, then run end.
    commands = [
        str(u["input"].get("command", u["name"])).replace(f'"{ENGINE}" ', "").split(" --summary")[0]
        if u["name"] == "Bash"
        else f"{u['name']} {u['input'].get('subagent_type') or Path(str(u['input'].get('file_path'))).name}"
        for r in coordinator
        for u in reply_tool_uses(r)
    ]
    assert commands == [
        f"run show {run_id}",
        f"run phase {run_id} --start 0",
        f"run phase {run_id} --end 0 --status success",
        f"run phase {run_id} --start 1",
        f"policy confidence {plan.confidence} --run {run_id} --phase 1",
        f"run phase {run_id} --end 1 --status success",
        f"run phase {run_id} --start 2",
        f"run phase {run_id} --end 2 --status success",
        f"run phase {run_id} --start 3",
        f"Write {run_id}.md",
        f"run phase {run_id} --end 3 --status success",
        f"run phase {run_id} --start 4",
        f"Write {Path(plan.test_file).name}",
        f"Read {Path(plan.fix_file).name}",
        f"Edit {Path(plan.fix_file).name}",
        f"run phase {run_id} --end 4 --status success",
        f"run phase {run_id} --start 5",
        f"run files {run_id} --git-diff",
        f"Agent fixloop:{COORDINATOR}",
        f"run phase {run_id} --end 5 --status success",
        f"run end {run_id} --status success",
    ]
    final = json.loads(reply_text(coordinator[-1]))
    assert (final["status"], final["agent"], final["root_cause"]) == ("success", BUGFIX, plan.root_cause)
    assert final["phases_completed"] == [f"phase_{n}" for n in range(6)]

    # What the phases left in the project: the plan, the regression test, the fix.
    assert (project / plan.plan_file(run_id)).read_text(encoding="utf-8") == plan.plan_text
    assert (project / plan.test_file).read_text(encoding="utf-8") == plan.test_text
    stock = (project / plan.fix_file).read_text(encoding="utf-8")
    assert plan.fix_new in stock and plan.fix_old not in stock

    # The main thread: the bugfix-coordinator, then (the review phase ran) the Markdown report, shown.
    main = requests_of(result, WORKFLOW_MAIN)
    assert len(main) == 3
    (first,) = reply_tool_uses(main[0])
    assert (first["input"]["subagent_type"], first["input"]["prompt"]) == (
        f"fixloop:{BUGFIX}",
        f"Run {run_id}.",
    )
    assert first["input"]["run_in_background"] is False
    (second,) = reply_tool_uses(main[1])
    assert second["input"]["command"] == f'"{ENGINE}" review report {run_id} --format markdown'
    code, markdown = run_engine(project, "review", "report", run_id, "--format", "markdown")
    assert code == 0
    assert str(markdown["content"]) in (result.result_text or "")
    assert f"fixloop bugfix run {run_id}: success; phases completed: phase_0, phase_1" in (
        result.result_text or ""
    )
    hooks_ok(result)


def test_fix_backend_with_phase_0_1_runs_only_those_phases_and_no_review(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    result, _model, _api, project = run_workflow(
        start_api, make_runner, shared_plugin_data, f"--phase=0,1 {BUG}"
    )
    run = read_run(project)
    state = run.state
    assert (state["phases"], state["args"]["phase"], state["free_text"]) == ([0, 1], "0,1", BUG)
    assert state["phases_completed"] == ["phase_0", "phase_1"]
    assert state["status"] == "success"
    assert phase_events(run.events) == bracketed([0, 1])
    assert not [e for e in run.events if str(e["type"]).startswith("REVIEW_")]
    assert [e["agent"] for e in run.of_type("AGENT_CALL")] == [BUGFIX]
    assert run.review == {}
    # No review-coordinator, no report; nothing in the project changed.
    assert set(rules_of(result)) == {WORKFLOW_MAIN, BUGFIX}
    assert COORDINATOR not in json.dumps([reply_tool_uses(r) for r in result.message_requests()])
    main = requests_of(result, WORKFLOW_MAIN)
    assert len(main) == 2 and reply_tool_uses(main[1]) == []
    assert git(project, "status", "--porcelain") == ""
    assert f"fixloop bugfix run {run.run_id}: success; phases completed: phase_0, phase_1;" in (
        result.result_text or ""
    )
    hooks_ok(result)


def test_fix_backend_with_phase_9_answers_invalid_phase_before_the_model_is_called(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    model = WorkflowModel()
    api = start_api(model.script())
    runner = make_runner(api, shared_plugin_data=shared_plugin_data, timeout=60.0)
    project = runner.new_project()
    result = runner.run(f"/fixloop:fix-backend --phase=9 {BUG}", project_dir=project)
    # The command's `!` line (fixloop run start) failed, so Claude Code ended the command there: the model
    # was never called, and the engine's error document is the result the user sees.
    assert (result.exit_code, result.timed_out, result.is_error) == (0, False, False)
    assert api.message_requests() == [] and result.message_requests() == []
    assert (result.result or {}).get("num_turns") == 0
    text = result.result_text or ""
    assert text.startswith("Shell command failed for pattern")
    error = json.JSONDecoder().raw_decode(text, text.index('{\n  "status": "failed"'))[0]
    assert error == {
        "status": "failed",
        "error": {
            "code": "INVALID_PHASE",
            "message": "Invalid phase value(s) for bugfix: 9.",
            "valid_values": ["0", "1", "2", "3", "4", "5", "all"],
            "received": "9",
            "suggestion": "Use numbers 0-5 or 'all'; separate several with commas, e.g. 0,1.",
        },
    }
    # No run was created, no log written.
    assert not (project / ".claude" / "fixloop").exists()
    assert not (project / ".claude" / "logs").exists()
    assert [h["hook_event"] for h in hooks_ok(result)] == ["SessionStart"]


# ------------------------------------------------------------------------------------------------
# 7. No dependencies
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


def wait_for_builds(data: Path, timeout: float = 60.0) -> str:
    """Wait until no process holds the build lock and a build has ended; bootstrap.log's content."""
    deadline = time.monotonic() + timeout
    log = data / "bootstrap.log"
    while time.monotonic() < deadline:
        content = log.read_text(encoding="utf-8") if log.exists() else ""
        if "cannot build the environment" in content or "environment ready" in content:
            fd = os.open(data / "venv.lock", os.O_RDWR | os.O_CREAT)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return content
            except BlockingIOError:
                pass
            finally:
                os.close(fd)
        time.sleep(0.1)
    raise AssertionError(f"the environment build did not end within {timeout}s: {log}")


def warnings_of(data: Path) -> list[JSON]:
    path = data / "hook-warnings.jsonl"
    return (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    )


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
    result = runner.run("/fixloop:review", project_dir=project, permission_mode=CLI_PERMISSION_MODE)
    data = result.config_dir / "plugins" / "data" / "fixloop-inline"
    build_log = wait_for_builds(data)

    # The session went through: every hook exited 0 and none blocked.
    assert (result.exit_code, result.timed_out, result.is_error) == (0, False, False), result.summary()
    assert model.problems == [] and api.unmatched == []
    events = {h["hook_event"] for h in hooks_ok(result)}
    assert events == {"SessionStart", "PreToolUse", "SubagentStart", "SubagentStop", "PostToolUse"}
    # SessionStart started a build, which could not work: no index, no uv. It is on record, with why.
    assert "No matching distribution found" in build_log
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
    assert run.state["status"] == "success"
    assert (run.review["outcome"]["termination_reason"], run.state["changed_files"]) == (
        "no_fixable_issues",
        ["inventory/report.py"],
    )
    assert sorted(e["agent"] for e in run.of_type("AGENT_RESULT")) == sorted(
        [*REVIEWER_AGENTS, "review-coordinator"]
    )
    assert not run.of_type("WARNING")
    code, markdown = run_engine(project, "review", "report", run.run_id, "--format", "markdown")
    assert code == 0 and str(markdown["content"]) in (result.result_text or "")
    assert "| success | no_fixable_issues | 1 |" in str(markdown["content"])


def test_with_no_interpreter_that_has_the_dependencies_review_ends_with_engine_unavailable(
    start_api: StartAPI, make_runner: MakeRunner, tmp_path: Path
) -> None:
    bare = tmp_path / "bare-venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(bare)  # python without click/jsonschema/pydantic
    assert not has_deps(str(bare / "bin" / "python3"))
    reviewer = json.dumps(
        {"status": "success", "agent": "code-reviewer", "issues": [], "positive_observations": []}
    )

    def after_reviewer(request: Request, index: int) -> Reply:
        return Reply.text("REVIEWER SAID: " + (subagent_report(request.tool_results[0].text) or "?"))

    api = start_api(
        Script(
            [
                Rule(
                    name="reviewer",
                    subagent=True,
                    system_contains='"agent": "code-reviewer"',
                    reply=Reply.text(reviewer),
                ),
                Rule(name="after", subagent=False, tool_result_names="Agent", reply=after_reviewer),
                Rule(
                    name="ask",
                    subagent=False,
                    user_contains="still work",
                    reply=Reply.tools(agent_call("fixloop:code-reviewer", "Review inventory/report.py")),
                ),
            ]
        )
    )
    runner = make_runner(api, env=offline_env(tmp_path / "offline", bare / "bin" / "python3"), timeout=120.0)
    project = runner.new_project(uncommitted=["inventory/report.py"])
    result = runner.run("/fixloop:review", project_dir=project)
    data = result.config_dir / "plugins" / "data" / "fixloop-inline"

    # The command's `!` line (fixloop run start) got ENGINE_UNAVAILABLE: Claude Code ended the command,
    # showing the engine's answer; the model was never called. No crash: exit 0, the hook exited 0.
    assert (result.exit_code, result.timed_out, result.is_error) == (0, False, False), result.summary()
    assert result.message_requests() == []
    text = result.result_text or ""
    error = json.JSONDecoder().raw_decode(text, text.index('{"status":"failed"'))[0]["error"]
    assert error["code"] == "ENGINE_UNAVAILABLE"
    assert (
        error["message"] == "No Python interpreter with the engine's dependencies, and building them failed."
    )
    python3 = tmp_path / "offline" / "tools" / "python3"
    assert error["tried"][0] == f"python3 on PATH ({python3}): lacks click, jsonschema or pydantic"
    assert error["tried"][1].startswith(f"building {data / 'venv'} with ")
    assert [h["hook_event"] for h in hooks_ok(result)] == ["SessionStart"]
    assert not (project / ".claude" / "fixloop").exists()
    # Every build started (SessionStart's in the background, the entry point's own) failed and said so.
    wait_for_builds(data)
    builds = (data / "venv-builds.log").read_text(encoding="utf-8").splitlines()
    assert len(builds) >= 1
    assert [w["code"] for w in warnings_of(data)] == ["ENGINE_BUILD_FAILED"] * len(builds)
    assert {w["session_id"] for w in warnings_of(data)} == {result.session_id}

    # The session is not broken: it goes on, and a fixloop agent still runs, with every hook exiting 0 even
    # where a hook needs the engine. To see that, the conversation continues under a session id that the
    # test has bound a review run to (started with an interpreter that has the dependencies; round 1 open).
    session = str(uuid.uuid4())
    run_id = engine_for_test(
        project,
        tmp_path / "test-engine",
        session,
        "run",
        "start",
        "--workflow",
        "review",
        "--changed-files",
        "inventory/report.py",
    )["run_id"]
    for words in (["review", "next"], ["verify"], ["review", "next"]):
        engine_for_test(project, tmp_path / "test-engine", session, *words, run_id)
    again = runner.run(
        "Does the reviewer still work?",
        project_dir=project,
        config_dir=result.config_dir,
        extra_args=["--continue", "--fork-session", "--session-id", session],
    )
    assert (again.exit_code, again.timed_out, again.is_error) == (0, False, False), again.summary()
    assert again.session_id == session
    # the same conversation: the model sees the failed command's output
    assert "ENGINE_UNAVAILABLE" in json.dumps(again.message_requests()[0]["body"]["messages"])
    assert [r["rule"] for r in again.message_requests()] == ["ask", "reviewer", "after"]
    assert again.result_text == f"REVIEWER SAID: {reviewer}"
    hooks = hooks_ok(again)
    assert {"PreToolUse", "SubagentStart", "SubagentStop", "PostToolUse"} <= {h["hook_event"] for h in hooks}
    assert api.unmatched == []
    # The hooks recorded the call in the run; SubagentStop could not record the answer and said why.
    run = read_run(project, run_id)
    assert [(e["type"], e["agent"]) for e in run.events if e["type"].startswith("AGENT_")] == [
        ("AGENT_CALL", "code-reviewer"),
        ("AGENT_RESULT", "code-reviewer"),
    ]
    (warning,) = run.of_type("WARNING")
    assert (warning["level"], warning["code"], warning["agent"]) == (
        "W",
        "ENGINE_UNAVAILABLE",
        "code-reviewer",
    )
    assert warning["message"].startswith("The result of code-reviewer (")
    assert round_records(run) == {}
    wait_for_builds(data)
    builds = (data / "venv-builds.log").read_text(encoding="utf-8").splitlines()
    assert [w["code"] for w in warnings_of(data)] == ["ENGINE_BUILD_FAILED"] * len(builds)


def engine_for_test(project: Path, data: Path, session: str, *args: str) -> JSON:
    """The engine run by the test itself with this interpreter (which has the dependencies), as if from
    the Bash tool of Claude Code session ``session``; its JSON answer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC_", "FIXLOOP_"))}
    env.update(
        CLAUDE_CODE_SESSION_ID=session,
        CLAUDE_PROJECT_DIR=str(project),
        FIXLOOP_PYTHON=sys.executable,
        FIXLOOP_DATA=str(data),
    )
    done = subprocess.run(
        ["bash", str(ENGINE), *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    answer = json.loads(done.stdout)
    assert isinstance(answer, dict) and "error" not in answer, answer
    return answer


def round_records(run: RunRecord) -> JSON:
    (current,) = run.review["rounds"]
    assert current["review_requested_at_ms"] is not None
    return dict(current["records"])


# ------------------------------------------------------------------------------------------------
# 8. Install as users do
# ------------------------------------------------------------------------------------------------


def export_repository(dest: Path) -> Path:
    """The repository as a user's clone has it: tracked and untracked files, none that git ignores (so no
    node_modules, .venv or caches)."""
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


def test_installed_from_the_marketplace_review_runs_without_plugin_dir(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path, tmp_path: Path
) -> None:
    model = FixloopModel()
    api = start_api(model.script())
    runner = make_runner(api, plugin_dir=None, timeout=120.0)
    source = export_repository(tmp_path / "fixloop-checkout")
    config = tmp_path / "claude-config"
    config.mkdir()
    env = child_env(config_dir=config, base_url=api.url)

    def plugin(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(runner.binary), "plugin", *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )

    added = plugin("marketplace", "add", str(source))
    assert added.returncode == 0, added
    assert "Successfully added marketplace: fixloop" in added.stdout
    installed = plugin("install", "fixloop@fixloop")
    assert installed.returncode == 0, installed
    assert "Successfully installed plugin: fixloop@fixloop" in installed.stdout
    listing = json.loads((config / "plugins" / "installed_plugins.json").read_text())
    assert [p["version"] for p in listing["plugins"]["fixloop@fixloop"]] == ["0.1.0"]
    settings = json.loads((config / "settings.json").read_text())
    assert settings["enabledPlugins"] == {"fixloop@fixloop": True}
    # The environment the plugin builds is shared with the other tests (built once per session).
    data = config / "plugins" / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "fixloop-fixloop").symlink_to(shared_plugin_data.resolve())

    project = runner.new_project()  # committed, nothing changed
    result = runner.run("/fixloop:review", project_dir=project, config_dir=config)
    assert "--plugin-dir" not in result.command
    assert (result.exit_code, result.timed_out, result.is_error) == (0, False, False), result.summary()
    assert model.problems == [] and api.unmatched == []

    # The CLI loaded the installed plugin, from the marketplace's directory.
    init = result.init or {}
    (loaded,) = [p for p in init["plugins"] if p["name"] == "fixloop"]
    assert (loaded["source"], loaded["path"]) == ("fixloop@fixloop", str(source))
    assert "fixloop:review" in init["slash_commands"]
    assert f"fixloop:{COORDINATOR}" in init["agents"]
    # The requests carry the plugin's command body and agent, with the installed paths expanded.
    run = read_run(project)
    engine = source / "scripts" / "fixloop"
    main = requests_of(result, MAIN)
    assert len(main) == 3
    prompt = prompt_text(main[0]["body"])
    assert "<command-name>/fixloop:review</command-name>" in prompt
    assert f'"run_id": "{run.run_id}"' in prompt and f'The engine is `"{engine}"`' in prompt
    coordinator = requests_of(result, COORDINATOR)
    assert coordinator and all(REVIEW_BODY in system_text(r["body"]) for r in coordinator)
    assert all(f'"{engine}"' in system_text(r["body"]) for r in coordinator)
    # The run: no changes, so the loop stopped at once.
    state = run.state
    assert (state["workflow"], state["changed_files"], state["claude_session_id"]) == (
        "review",
        [],
        result.session_id,
    )
    assert (state["status"], run.review["outcome"]["termination_reason"]) == ("success", "no_changes")
    assert state["phases_completed"] == ["phase_0"]
    types = [e["type"] for e in run.events]
    assert (types[0], types[-2], types[-1]) == ("SESSION_START", "SESSION_END", "AGENT_RESULT")
    assert run.events[-1]["agent"] == "review-coordinator"
    hooks = hooks_ok(result)
    assert {h["hook_event"] for h in hooks} == {
        "SessionStart",
        "PreToolUse",
        "SubagentStart",
        "SubagentStop",
        "PostToolUse",
    }


# ------------------------------------------------------------------------------------------------
# 9. A faked result is refused
# ------------------------------------------------------------------------------------------------


def test_a_reviewer_result_written_by_the_main_thread_is_refused(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    forged = {
        "status": "success",
        "agent": "code-reviewer",
        "issues": [],
        "positive_observations": ["looks fine (written by the main thread, not by a reviewer)"],
    }
    api = start_api(Script(forged_record_rules(forged)))
    runner = make_runner(api, shared_plugin_data=shared_plugin_data, timeout=60.0)
    project = runner.new_project(uncommitted=["inventory/report.py"])
    # The user allows every Bash command, so nothing but the engine stands between the forgery and the run.
    result = runner.run("/fixloop:review", project_dir=project, allowed_tools=["Bash"])
    assert (result.exit_code, result.timed_out, result.is_error) == (0, False, False), result.summary()
    assert api.unmatched == []
    run = read_run(project)
    assert run.state["claude_session_id"] == result.session_id

    # The main thread never called the Agent tool; it opened round 1, then recorded the JSON itself.
    requests = result.message_requests()
    uses = [u for r in requests for u in reply_tool_uses(r)]
    assert {u["name"] for u in uses} == {"Bash"}
    assert [str(u["input"]["command"]).split()[1:3] for u in uses] == [
        ["review", "next"],
        ["verify", run.run_id],
        ["review", "next"],
        ["review", "record"],
    ]
    # The tool result the model received: the engine's refusal, exit code 2.
    (answer,) = tool_results(requests[-1]["body"])
    assert (answer.name, answer.is_error) == ("Bash", True)
    assert answer.text.startswith("Exit code 2\n")
    refusal = json.loads(answer.text.split("\n", 1)[1])
    assert refusal["status"] == "failed"
    assert refusal["error"]["code"] == "UNVERIFIED_AGENT_RESULT"
    assert (refusal["error"]["agent"], refusal["error"]["stops_seen"]) == ("code-reviewer", 0)
    assert "UNVERIFIED_AGENT_RESULT" in (result.result_text or "")

    # Nothing was recorded: round 1 is open, with no record for the reviewer (or anyone).
    (round1,) = run.review["rounds"]
    assert round1["iteration"] == 1
    assert round1["records"] == {}
    assert run.ledger == []
    assert not run.of_type("AGENT_RESULT") and not run.of_type("AGENT_CALL")
    code, status = run_engine(project, "review", "status", run.run_id)
    assert code == 0, status
    assert (status["round"]["iteration"], status["round"]["review_requested"]) == (1, True)
    assert status["round"]["recorded"] == {}
    assert status["round"]["missing"] == list(REVIEWER_AGENTS)
    hooks_ok(result)
