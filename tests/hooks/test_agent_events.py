"""PreToolUse / PostToolUse (Agent|Task) and SubagentStart: the ledger, AGENT_* and REVIEW_PARALLEL_*."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers_imports import ENGINE_PACKAGES, NOT_IN_HOOKS, in_packages, modules_imported_by_process
from hook_helpers import (
    PLUGIN_ROOT,
    REPORTED_MS,
    REPORTED_USAGE,
    HookEnv,
    Run,
    fake_engine,
    hook_command,
    open_phase,
    recorded_answer,
    start_run,
    write_executable,
)

from fixloop.core.agent_names import REVIEWER_AGENTS as REVIEWERS
from fixloop.runs import ending


def reviewer_report(agent: str, issues: int) -> str:
    return json.dumps(
        {"status": "success", "agent": agent, "issues": [{"id": f"X-{n}"} for n in range(issues)]}
    )


def stop_recorded(
    hooks: HookEnv,
    engines: Path,
    agent: str,
    agent_id: str,
    report: str,
    issues: int | None,
    status: str = "success",
) -> None:
    """The SubagentStop that comes before a contracted agent's PostToolUse: the engine records its answer (a
    fake engine here, answering as the real one does) and the hook keeps the engine's status and count."""
    engine = fake_engine(engines / agent_id, [recorded_answer(agent, issues, status)])
    stop = hooks.subagent_stop(f"fixloop:{agent}", agent_id, report)
    assert_silent(hooks.run("SubagentStop", stop, {"FIXLOOP_HOOK_ENGINE": str(engine)}))


def frontmatter_model(agent: str) -> str | None:
    text = (PLUGIN_ROOT / "agents" / f"{agent}.md").read_text()
    head = text.split("---")[1]
    for line in head.splitlines():
        if line.startswith("model:"):
            return line.split(":", 1)[1].strip()
    return None


def assert_silent(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


def assert_hands_back(done: subprocess.CompletedProcess[str], payload: dict[str, Any], text: str) -> None:
    """PostToolUse answered the payload's own tool_response with only its content replaced by `text`."""
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "updatedToolOutput": {**payload["tool_response"], "content": [{"type": "text", "text": text}]},
        }
    }


def strip_core(event: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in event.items() if key not in ("ts", "session_id")}


def test_hooks_json_wires_the_subagent_tool_and_fixloop_agents() -> None:
    config = json.loads((PLUGIN_ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    assert sorted(config) == [
        "PostToolUse",
        "PostToolUseFailure",
        "PreToolUse",
        "SessionStart",
        "Stop",
        "SubagentStart",
        "SubagentStop",
        "UserPromptSubmit",
    ]
    for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        assert config[event][0]["matcher"] == "Agent|Task"
    assert config["SubagentStart"][0]["matcher"] == "fixloop:.*"
    assert config["SubagentStop"][0]["matcher"] == "fixloop:.*"
    assert "matcher" not in config["UserPromptSubmit"][0]
    assert "matcher" not in config["Stop"][0]
    # The hooks that may run the engine (tests, verification) wait for it; PreToolUse never does.
    timeouts = {event: entries[0]["hooks"][0]["timeout"] for event, entries in config.items()}
    assert timeouts == {
        "SessionStart": 10,
        "UserPromptSubmit": 10,
        "PreToolUse": 10,
        "PostToolUse": 1800,
        "PostToolUseFailure": 1800,
        "SubagentStart": 1800,
        "SubagentStop": 1800,
        "Stop": 1800,
    }
    for event, entries in config.items():
        for entry in entries:
            for hook in entry["hooks"]:
                assert hook["type"] == "command"
                assert '"${CLAUDE_PLUGIN_ROOT}/hooks/run-hook"' in hook["command"], event
                assert isinstance(hook["timeout"], int) and hook["timeout"] > 0


def test_foreground_call_and_result(hooks: HookEnv, run: Run, tmp_path: Path) -> None:
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", "toolu_01")))
    stop_recorded(hooks, tmp_path, "code-reviewer", "agent-a1", reviewer_report("code-reviewer", 2), 2)
    post = hooks.post_tool_use(
        "fixloop:code-reviewer", "toolu_01", "agent-a1", reviewer_report("code-reviewer", 2)
    )
    done = hooks.run("PostToolUse", post)
    assert_hands_back(done, post, f"code-reviewer: recorded, 2 issues (run {run.run_id})")
    call, stop, result = run.ledger()
    assert stop["kind"] == "stop"
    assert call == {
        "kind": "call",
        "ts_ms": call["ts_ms"],
        "agent_type": "fixloop:code-reviewer",
        "agent": "code-reviewer",
        "tool_use_id": "toolu_01",
        "parent_agent_id": None,
        "background": False,
    }
    duration = result["ts_ms"] - call["ts_ms"]
    assert result == {
        "kind": "result",
        "ts_ms": result["ts_ms"],
        "agent_type": "fixloop:code-reviewer",
        "agent": "code-reviewer",
        "tool_use_id": "toolu_01",
        "agent_id": "agent-a1",
        "status": "success",
        "error": None,
        "duration_ms": duration,
        "reported_duration_ms": REPORTED_MS,
        **REPORTED_USAGE,
    }
    events = [strip_core(e) for e in run.events("AGENT_CALL", "AGENT_RESULT")]
    assert events == [
        {
            "level": "I",
            "type": "AGENT_CALL",
            "phase": None,
            "agent": "code-reviewer",
            "model": frontmatter_model("code-reviewer"),
            "input_summary": "Review the change",
            "tool_use_id": "toolu_01",
        },
        {
            "level": "I",
            "type": "AGENT_RESULT",
            "phase": None,
            "agent": "code-reviewer",
            "status": "success",
            "duration_ms": duration,
            "reported_duration_ms": REPORTED_MS,
            "duration_source": "measured",
            "tool_use_id": "toolu_01",
            "agent_id": "agent-a1",
            "output_summary": {"issues": 2},
            "usage": {
                **REPORTED_USAGE["usage"],
                "total_tokens": 1234,
                "model": REPORTED_USAGE["model"],
                "tool_uses": 3,
            },
        },
    ]
    assert not run.events("WARNING")


@pytest.mark.parametrize("indent", [None, 2])
def test_shell_syntax_in_the_payload_reaches_the_hook_untouched(
    hooks: HookEnv, run: Run, indent: int | None
) -> None:
    """run-hook hands the payload over in a here-document: nothing in it may be expanded or cut short."""
    description = 'Fix $HOME `id` $(id) \\ \\n "EOF" \u00e9 token=abc123'
    payload = hooks.pre_tool_use("fixloop:review-fixer", "toolu_sh", description=description)
    text = json.dumps(payload, indent=indent, ensure_ascii=False)  # indented: many lines
    assert_silent(hooks.run("PreToolUse", text.encode()))
    (call,) = run.events("AGENT_CALL")
    assert call["input_summary"] == 'Fix $HOME `id` $(id) \\ \\n "EOF" \u00e9 token=[REDACTED]'
    assert not run.events("WARNING")


def test_call_inside_a_subagent_names_the_parent_and_the_open_phase(hooks: HookEnv, run: Run) -> None:
    open_phase(hooks, run, 5)
    payload = hooks.pre_tool_use(
        "fixloop:review-fixer",
        "toolu_fix",
        background=None,
        parent=("agent-coord", "fixloop:coordinator"),
        description="",
        prompt="p" * 300,
    )
    payload["tool_input"]["model"] = "haiku"
    assert_silent(hooks.run("PreToolUse", payload))
    (call,) = run.ledger()
    assert call["parent_agent_id"] == "agent-coord"
    assert call["background"] is None
    (event,) = run.events("AGENT_CALL")
    assert (event["phase"], event["model"], event["input_summary"]) == ("phase_5", "haiku", "p" * 200)


def test_the_task_tool_name_counts_too(hooks: HookEnv, run: Run) -> None:
    assert_silent(
        hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:review-verifier", "toolu_t", tool_name="Task"))
    )
    assert [line["agent"] for line in run.ledger()] == ["review-verifier"]


@pytest.mark.parametrize(
    "payload_change",
    [
        {"tool_input": {"subagent_type": "general-purpose", "prompt": "x", "description": "x"}},
        {"tool_input": {"subagent_type": "other-plugin:code-reviewer", "prompt": "x", "description": "x"}},
        {"tool_name": "Bash", "tool_input": {"command": "ls"}},
    ],
)
def test_other_tools_and_agents_are_ignored(hooks: HookEnv, run: Run, payload_change: dict[str, Any]) -> None:
    payload = {**hooks.pre_tool_use("fixloop:code-reviewer", "toolu_x"), **payload_change}
    assert_silent(hooks.run("PreToolUse", payload))
    post = {**payload, "hook_event_name": "PostToolUse", "tool_response": {"status": "completed"}}
    assert_silent(hooks.run("PostToolUse", post))
    assert run.ledger() == []
    assert run.events("AGENT_CALL", "AGENT_RESULT", "WARNING") == []


def test_a_session_without_a_run_writes_nothing(hooks: HookEnv, run: Run) -> None:
    payload = hooks.pre_tool_use("fixloop:code-reviewer", "toolu_01")
    payload["session_id"] = "another-session"
    assert_silent(hooks.run("PreToolUse", payload, {"CLAUDE_CODE_SESSION_ID": "another-session"}))
    assert run.ledger() == []
    assert not (hooks.data / "hook-warnings.jsonl").exists()


def test_a_finished_run_is_left_alone(hooks: HookEnv, run: Run) -> None:
    ending.end_run(hooks.project, run.run_id, "failed")
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", "toolu_01")))
    assert run.ledger() == []


def test_a_call_made_before_the_run_ended_still_gets_its_result(hooks: HookEnv, run: Run) -> None:
    # The coordinator ends its own run, then returns: its result still belongs to the run.
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:coordinator", "toolu_c")))
    ending.end_run(hooks.project, run.run_id, "failed")
    report = '{"status": "success", "agent": "coordinator"}'
    post = hooks.post_tool_use("fixloop:coordinator", "toolu_c", "agent-c", report)
    assert_silent(hooks.run("PostToolUse", post))
    assert_silent(hooks.run("PostToolUse", post))  # a repeated result is not logged twice
    assert [record["kind"] for record in run.ledger()] == ["call", "result"]
    results = [e for e in run.events() if e["type"] == "AGENT_RESULT"]
    assert [(e["agent"], e["tool_use_id"]) for e in results] == [("coordinator", "toolu_c")]
    other = hooks.post_tool_use("fixloop:code-reviewer", "toolu_x", "agent-x", report)
    assert_silent(hooks.run("PostToolUse", other))  # no call recorded while the run was active
    assert [record["kind"] for record in run.ledger()] == ["call", "result"]


def test_six_reviewers_make_one_parallel_group(hooks: HookEnv, run: Run, tmp_path: Path) -> None:
    # The six PreToolUse hooks of one assistant message run concurrently.
    procs = [
        subprocess.Popen(
            ["sh", "-c", hook_command("PreToolUse")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=hooks.env,
            cwd=hooks.project,
        )
        for _ in REVIEWERS
    ]
    for agent, proc in zip(REVIEWERS, procs, strict=True):
        out, _ = proc.communicate(
            json.dumps(hooks.pre_tool_use(f"fixloop:{agent}", f"toolu_{agent}")).encode()
        )
        assert (proc.returncode, out) == (0, b"")
    assert len(run.events("REVIEW_PARALLEL_START")) == 1
    assert run.events("REVIEW_PARALLEL_END") == []
    issues = {agent: n for n, agent in enumerate(REVIEWERS)}
    for agent in REVIEWERS[:-1]:
        report = reviewer_report(agent, issues[agent])
        stop_recorded(hooks, tmp_path, agent, f"id-{agent}", report, issues[agent])
        payload = hooks.post_tool_use(f"fixloop:{agent}", f"toolu_{agent}", f"id-{agent}", report)
        count = issues[agent]
        line = f"{agent}: recorded, {count} issue{'' if count == 1 else 's'} (run {run.run_id})"
        assert_hands_back(hooks.run("PostToolUse", payload), payload, line)
        assert run.events("REVIEW_PARALLEL_END") == []
    # The last one's SubagentStop hook never ran: the tool's own status stands, and no issue count.
    last = REVIEWERS[-1]
    payload = hooks.post_tool_use(f"fixloop:{last}", f"toolu_{last}", "id-last", "not json")
    line = f"{last}: no answer recorded (run {run.run_id})"
    assert_hands_back(hooks.run("PostToolUse", payload), payload, line)

    ledger = run.ledger()
    calls = {line["agent"]: line for line in ledger if line["kind"] == "call"}
    assert sorted(line["agent"] for line in ledger if line["kind"] == "stop") == sorted(REVIEWERS[:-1])
    results = {line["agent"]: line for line in ledger if line["kind"] == "result"}
    assert sorted(calls) == sorted(REVIEWERS) == sorted(results)
    (start,) = run.events("REVIEW_PARALLEL_START")
    (end,) = run.events("REVIEW_PARALLEL_END")
    assert strip_core(start) == {
        "level": "I",
        "type": "REVIEW_PARALLEL_START",
        "phase": None,
        "iteration": 1,
        "agents": list(REVIEWERS),
    }
    order = sorted(REVIEWERS, key=lambda agent: calls[agent]["ts_ms"])
    expected_results = [
        {
            "agent": agent,
            "status": "success",
            "issues": issues[agent] if agent != last else 0,
            "duration_ms": results[agent]["ts_ms"] - calls[agent]["ts_ms"],
        }
        for agent in order
    ]
    first_call = min(line["ts_ms"] for line in calls.values())
    last_result = max(line["ts_ms"] for line in results.values())
    assert strip_core(end) == {
        "level": "I",
        "type": "REVIEW_PARALLEL_END",
        "phase": None,
        "iteration": 1,
        "results": expected_results,
        "total_issues": sum(issues[agent] for agent in REVIEWERS[:-1]),
        "duration_ms": last_result - first_call,
    }
    types = [
        event["type"] for event in run.events("REVIEW_PARALLEL_START", "REVIEW_PARALLEL_END", "AGENT_RESULT")
    ]
    assert types[0] == "REVIEW_PARALLEL_START" and types[-1] == "REVIEW_PARALLEL_END"
    # The next dispatch of reviewers opens the next group.
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", "toolu_next")))
    starts = run.events("REVIEW_PARALLEL_START")
    assert [event["iteration"] for event in starts] == [1, 2]


def test_the_group_iteration_is_the_runs_review_round(hooks: HookEnv, run: Run) -> None:
    state_file = run.dir / "state.json"
    state = run.state()
    state["review"] = {"rounds": [{"iteration": 1}, {"iteration": 2}, {"iteration": 3}]}
    state_file.write_text(json.dumps(state))
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:test-analyzer", "toolu_1")))
    (start,) = run.events("REVIEW_PARALLEL_START")
    assert start["iteration"] == 3


def test_background_agent_is_closed_at_its_stop(hooks: HookEnv, run: Run, tmp_path: Path) -> None:
    agent_type = "fixloop:coordinator"  # not contracted: its stop records nothing
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use(agent_type, "toolu_bg", background=True)))
    assert_silent(hooks.run("PostToolUse", hooks.post_tool_use_async(agent_type, "toolu_bg", "agent-bg")))
    assert run.events("AGENT_RESULT") == []
    # The coordinator starts with the engine's next step.
    engine = fake_engine(tmp_path / "engine", [f"fixloop next (run {run.run_id}): the run has ended."])
    started = hooks.run(
        "SubagentStart", hooks.subagent_start(agent_type, "agent-bg"), {"FIXLOOP_HOOK_ENGINE": str(engine)}
    )
    assert json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"].startswith(
        "fixloop next (run"
    )
    assert_silent(
        hooks.run("SubagentStop", hooks.subagent_stop(agent_type, "agent-bg", '{"status":"success"}'))
    )
    kinds = [line["kind"] for line in run.ledger()]
    assert kinds == ["call", "launch", "start", "stop", "result"]
    call, launch, start, stop, result = run.ledger()
    assert launch == {
        "kind": "launch",
        "ts_ms": launch["ts_ms"],
        "agent_type": agent_type,
        "agent": "coordinator",
        "tool_use_id": "toolu_bg",
        "agent_id": "agent-bg",
    }
    assert start == {
        "kind": "start",
        "ts_ms": start["ts_ms"],
        "agent_type": agent_type,
        "agent": "coordinator",
        "agent_id": "agent-bg",
    }
    assert call["background"] is True
    assert result["ts_ms"] == stop["ts_ms"]
    assert result["duration_ms"] == stop["ts_ms"] - call["ts_ms"]
    assert result["reported_duration_ms"] is None
    (event,) = run.events("AGENT_RESULT")
    assert (event["agent"], event["status"], event["duration_ms"], event["duration_source"]) == (
        "coordinator",
        "success",
        result["duration_ms"],
        "measured",
    )


def test_background_reviewers_close_the_group_at_their_stops(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    stops = (("test-analyzer", 1), ("code-reviewer", 4))
    engine = fake_engine(tmp_path / "engine", [recorded_answer(agent, count) for agent, count in stops])
    env = {"FIXLOOP_HOOK_ENGINE": str(engine)}
    for agent in ("code-reviewer", "test-analyzer"):
        # The hook asks for the foreground; a launch in the background (the hook's answer not taken) is
        # still recorded to its end.
        call = hooks.pre_tool_use(f"fixloop:{agent}", f"toolu_{agent}", background=True)
        done = hooks.run("PreToolUse", call)
        assert json.loads(done.stdout)["hookSpecificOutput"]["updatedInput"]["run_in_background"] is False
    for agent in ("code-reviewer", "test-analyzer"):
        assert_silent(
            hooks.run(
                "PostToolUse", hooks.post_tool_use_async(f"fixloop:{agent}", f"toolu_{agent}", f"id-{agent}")
            )
        )
    assert run.events("REVIEW_PARALLEL_END") == []
    for agent, count in stops:
        stop = hooks.subagent_stop(f"fixloop:{agent}", f"id-{agent}", reviewer_report(agent, count))
        assert_silent(hooks.run("SubagentStop", stop, env))
    (end,) = run.events("REVIEW_PARALLEL_END")
    assert end["total_issues"] == 5
    assert [(r["agent"], r["issues"]) for r in end["results"]] == [("code-reviewer", 4), ("test-analyzer", 1)]


def test_async_launch_hook_after_the_stop_still_closes_the_call(hooks: HookEnv, run: Run) -> None:
    agent_type = "fixloop:coordinator"
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use(agent_type, "toolu_bg", background=True)))
    assert_silent(hooks.run("SubagentStop", hooks.subagent_stop(agent_type, "agent-bg", "done")))
    assert run.events("AGENT_RESULT") == []
    assert_silent(hooks.run("PostToolUse", hooks.post_tool_use_async(agent_type, "toolu_bg", "agent-bg")))
    call, stop, _launch, result = run.ledger()
    assert result["kind"] == "result"
    assert result["duration_ms"] == stop["ts_ms"] - call["ts_ms"]
    assert len(run.events("AGENT_RESULT")) == 1


def test_result_without_a_seen_call_uses_the_reported_duration(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    stop_recorded(hooks, tmp_path, "review-fixer", "agent-f", '{"status":"failed"}', None, "failed")
    payload = hooks.post_tool_use("fixloop:review-fixer", "toolu_lost", "agent-f", '{"status":"failed"}')
    assert_hands_back(
        hooks.run("PostToolUse", payload), payload, f"review-fixer: recorded (run {run.run_id})"
    )
    (event,) = run.events("AGENT_RESULT")
    assert (event["level"], event["status"], event["duration_ms"], event["duration_source"]) == (
        "E",
        "failed",
        REPORTED_MS,
        "reported",
    )


def test_a_duplicate_post_tool_use_is_recorded_once(hooks: HookEnv, run: Run) -> None:
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:review-fixer", "toolu_f")))
    payload = hooks.post_tool_use("fixloop:review-fixer", "toolu_f", "agent-f", '{"status":"success"}')
    line = f"review-fixer: no answer recorded (run {run.run_id})"
    assert_hands_back(hooks.run("PostToolUse", payload), payload, line)
    assert_silent(hooks.run("PostToolUse", payload))
    assert len(run.events("AGENT_RESULT")) == 1


def test_a_run_without_logging_still_keeps_the_ledger(
    hooks: HookEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(hooks.project))
    quiet = start_run(hooks, log=False)
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", "toolu_q")))
    assert [line["kind"] for line in quiet.ledger()] == ["call"]
    assert quiet.state()["logging"]["log_files"] is None


# ---- failing open ---------------------------------------------------------------------------------


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", b"\xff\xfe"])
def test_bad_stdin_fails_open_with_a_warning(hooks: HookEnv, run: Run, stdin: bytes) -> None:
    assert_silent(hooks.run("PreToolUse", stdin))
    (warning,) = run.events("WARNING")
    assert (warning["level"], warning["code"]) == ("W", "HOOK_BAD_INPUT")
    assert run.ledger() == []


def test_unwritable_run_directory_fails_open_with_a_warning(hooks: HookEnv, run: Run) -> None:
    (run.dir / "agents.jsonl").mkdir()  # any write to the ledger fails, even as root
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", "toolu_01")))
    (warning,) = run.events("WARNING")
    assert warning["code"] == "HOOK_FAILED"
    assert warning["hook"] == "PreToolUse"
    assert "agents.jsonl" in warning["message"]


def test_bad_stdin_without_a_run_warns_in_the_data_directory(hooks: HookEnv) -> None:
    assert_silent(hooks.run("PostToolUse", b"{oops"))
    (line,) = (hooks.data / "hook-warnings.jsonl").read_text().splitlines()
    warning = json.loads(line)
    assert (warning["type"], warning["code"], warning["session_id"]) == (
        "WARNING",
        "HOOK_BAD_INPUT",
        hooks.session,
    )


def test_unwritable_data_directory_and_no_run_is_still_silent(hooks: HookEnv, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = hooks.run("PreToolUse", b"nope", {"CLAUDE_PLUGIN_DATA": str(blocker / "data")})
    assert_silent(done)


def test_session_bound_to_a_missing_run_warns_in_the_data_directory(hooks: HookEnv, run: Run) -> None:
    (run.dir / "state.json").unlink()
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", "toolu_01")))
    warning = json.loads((hooks.data / "hook-warnings.jsonl").read_text())
    assert warning["code"] == "RUN_NOT_FOUND"
    assert run.run_id in warning["message"]


def test_no_python_at_all_exits_zero_silently(hooks: HookEnv, tmp_path: Path) -> None:
    (hooks.data / "python3-path").write_text(str(tmp_path / "gone" / "python3") + "\n")
    no_python = tmp_path / "bin-without-python"
    no_python.mkdir()
    (no_python / "sh").symlink_to("/bin/sh")
    done = subprocess.run(
        ["/bin/sh", "-c", hook_command("PreToolUse")],
        input=json.dumps(hooks.pre_tool_use("fixloop:code-reviewer", "t")).encode(),
        capture_output=True,
        env={**hooks.env, "PATH": str(no_python)},
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"")


def test_a_crashing_interpreter_never_becomes_a_blocking_exit_code(hooks: HookEnv, tmp_path: Path) -> None:
    crashing = write_executable(tmp_path / "python3", "#!/bin/sh\necho boom >&2\nexit 2\n")
    (hooks.data / "python3-path").write_text(f"{crashing}\n")
    done = hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", "t"))
    assert (done.returncode, done.stdout) == (0, "")


def test_a_missing_hook_script_exits_zero(hooks: HookEnv) -> None:
    done = subprocess.run(
        ["sh", str(PLUGIN_ROOT / "hooks" / "run-hook"), "no_such_hook"],
        input=b"{}",
        capture_output=True,
        env=hooks.env,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"")


def test_hook_scripts_use_the_standard_library_only() -> None:
    """The every-call hooks import nothing outside the standard library and the stdlib-only modules."""
    probe = (
        "import sys, runpy; sys.argv=['x']; sys.path.insert(0, {hooks!r});"
        "import agent_events, subagent_stop;"
        "import fixloop.hookside.calls, fixloop.hookside.review_group, fixloop.hookside.engine;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('click','pydantic','jsonschema'));"
        "print(bad)"
    ).format(hooks=str(PLUGIN_ROOT / "hooks"))
    done = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# What the every-call hooks must not load: each of these costs about as much as the interpreter's own
# start once `re` comes with it, and the hook budget is 2x that start.
HEAVY_MODULES = ("json", "re", "enum", "pathlib", "typing", "collections", "contextlib", "functools", "math")


def modules_loaded_by(
    hooks: HookEnv, payload: dict[str, Any], script: str = "agent_events", env: dict[str, str] | None = None
) -> set[str]:
    """The modules one hook process imports (from -X importtime), run as run-hook runs it."""
    return modules_imported_by_process(
        [sys.executable, "-E", "-S", "-X", "importtime", str(PLUGIN_ROOT / "hooks" / f"{script}.py")],
        json.dumps(payload).encode(),
        {**hooks.env, **(env or {})},
        hooks.project,
    )


def test_every_call_hooks_and_a_coordinators_stop_load_no_heavy_module(hooks: HookEnv, run: Run) -> None:
    loaded = modules_loaded_by(hooks, hooks.pre_tool_use("fixloop:code-reviewer", "toolu_cr"))
    loaded |= modules_loaded_by(hooks, hooks.pre_tool_use("fixloop:test-analyzer", "toolu_ta"))
    loaded |= modules_loaded_by(hooks, hooks.subagent_start("fixloop:code-reviewer", "id-cr"))
    for agent, tool_use_id, agent_id in (
        ("code-reviewer", "toolu_cr", "id-cr"),
        ("test-analyzer", "toolu_ta", "id-ta"),
    ):
        post = hooks.post_tool_use(f"fixloop:{agent}", tool_use_id, agent_id, reviewer_report(agent, 2))
        loaded |= modules_loaded_by(hooks, post)
    coordinator_stop = hooks.subagent_stop("fixloop:coordinator", "id-rc", "Review finished.")
    loaded |= modules_loaded_by(hooks, coordinator_stop, "subagent_stop")
    assert "fixloop.store.logwriter" in loaded  # the hooks did their work, below
    assert sorted(loaded & {*HEAVY_MODULES, "subprocess"}) == []
    assert in_packages(loaded, NOT_IN_HOOKS) == []
    assert [line["kind"] for line in run.ledger()][-1] == "stop"
    assert [event["type"] for event in run.events()][-6:] == [
        "REVIEW_PARALLEL_START",
        "AGENT_CALL",
        "AGENT_CALL",
        "AGENT_RESULT",
        "AGENT_RESULT",
        "REVIEW_PARALLEL_END",
    ]


def test_no_per_call_hook_path_loads_the_engines_upper_layers(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    """Whole packages: no module of contracts, runs, review, report or cli, nor pydantic, click, json, re,
    pathlib, typing or collections, on any path a subagent call takes through the hooks."""
    engine = fake_engine(tmp_path / "engine", [recorded_answer("review-fixer")])
    coordinator = "fixloop:coordinator"
    paths: list[tuple[dict[str, Any], str]] = [
        (hooks.pre_tool_use("fixloop:review-fixer", "toolu_f"), "agent_events"),
        (hooks.subagent_start("fixloop:review-fixer", "id-f"), "agent_events"),
        (
            hooks.post_tool_use("fixloop:review-fixer", "toolu_f", "id-f", '{"status": "success"}'),
            "agent_events",
        ),
        (hooks.pre_tool_use("fixloop:code-reviewer", "toolu_cr"), "agent_events"),
        (failure_payload(hooks, "fixloop:code-reviewer", "toolu_cr"), "agent_events"),
        (hooks.pre_tool_use(coordinator, "toolu_rc", background=True), "agent_events"),
        (hooks.post_tool_use_async(coordinator, "toolu_rc", "id-rc"), "agent_events"),
        (hooks.subagent_stop(coordinator, "id-rc", '{"status": "success"}'), "subagent_stop"),
        (hooks.pre_tool_use("general-purpose", "toolu_gp"), "agent_events"),
    ]
    loaded: set[str] = set()
    for payload, script in paths:
        loaded |= modules_loaded_by(hooks, payload, script)
    assert in_packages(loaded, NOT_IN_HOOKS) == []
    assert {"fixloop.hookside.calls", "fixloop.hookside.review_group", "fixloop.store.runview"} <= loaded
    assert [line["kind"] for line in run.ledger()] == [
        "call", "start", "result", "call", "result", "call", "launch", "stop", "result"
    ]  # fmt: skip
    # A contracted agent's stop runs the engine in a subprocess (which brings re and collections): the
    # hook's own process still loads none of the engine's upper layers.
    stop = hooks.subagent_stop("fixloop:review-fixer", "id-f2", '{"status": "success"}')
    loaded = modules_loaded_by(hooks, stop, "subagent_stop", {"FIXLOOP_HOOK_ENGINE": str(engine)})
    assert "subprocess" in loaded
    assert in_packages(loaded, (*ENGINE_PACKAGES, "pydantic", "click", "json", "pathlib", "typing")) == []


def test_a_foreground_reviewer_with_a_rejected_answer_counts_as_failed(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    answer = {
        "status": "recorded",
        "valid": False,
        "retry": False,
        "attempt": 3,
        "error": {"code": "SCHEMA_VIOLATION", "message": "bad"},
    }
    engine = fake_engine(tmp_path / "engine", [answer])
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", "toolu_cr")))
    stop = hooks.subagent_stop("fixloop:code-reviewer", "id-cr", reviewer_report("code-reviewer", 3))
    assert_silent(hooks.run("SubagentStop", stop, {"FIXLOOP_HOOK_ENGINE": str(engine)}))
    post = hooks.post_tool_use(
        "fixloop:code-reviewer", "toolu_cr", "id-cr", reviewer_report("code-reviewer", 3)
    )
    line = f"code-reviewer: answer refused: SCHEMA_VIOLATION (run {run.run_id})"
    assert_hands_back(hooks.run("PostToolUse", post), post, line)
    (result,) = run.events("AGENT_RESULT")
    assert (result["level"], result["status"], result["error"]) == ("E", "failed", "SCHEMA_VIOLATION")
    (end,) = run.events("REVIEW_PARALLEL_END")
    assert end["results"][0]["status"] == "failed"
    assert end["results"][0]["error"] == "SCHEMA_VIOLATION"
    assert end["total_issues"] == 0


def failure_payload(
    hooks: HookEnv, agent_type: str, tool_use_id: str, interrupted: bool = False
) -> dict[str, Any]:
    """PostToolUseFailure as Claude Code 2.1.328 sends it for an Agent call that failed."""
    payload = hooks.pre_tool_use(agent_type, tool_use_id)
    payload.update(
        hook_event_name="PostToolUseFailure",
        error=f"Agent type '{agent_type}' not found. Available agents: general-purpose",
        is_interrupt=interrupted,
        duration_ms=12,
    )
    return payload


def test_a_failed_agent_call_is_a_failed_result(hooks: HookEnv, run: Run) -> None:
    for agent in ("code-reviewer", "test-analyzer"):
        assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use(f"fixloop:{agent}", f"toolu_{agent}")))
    for agent, interrupted in (("code-reviewer", False), ("test-analyzer", True)):
        payload = failure_payload(hooks, f"fixloop:{agent}", f"toolu_{agent}", interrupted)
        assert_silent(hooks.run("PostToolUseFailure", payload))
    results = run.events("AGENT_RESULT")
    assert [(e["agent"], e["status"], e["error"]) for e in results] == [
        ("code-reviewer", "failed", "AGENT_TOOL_FAILED"),
        ("test-analyzer", "failed", "INTERRUPTED"),
    ]
    assert results[0]["error_message"].startswith("Agent type 'fixloop:code-reviewer' not found")
    call, _other_call, result, _other_result = run.ledger()
    assert (call["kind"], result["kind"], result["tool_use_id"]) == ("call", "result", "toolu_code-reviewer")
    assert result["duration_ms"] == result["ts_ms"] - call["ts_ms"]
    assert result["reported_duration_ms"] == 12
    (end,) = run.events("REVIEW_PARALLEL_END")
    assert [(r["agent"], r["status"], r["error"]) for r in end["results"]] == [
        ("code-reviewer", "failed", "AGENT_TOOL_FAILED"),
        ("test-analyzer", "failed", "INTERRUPTED"),
    ]


def test_a_group_left_waiting_is_closed_by_the_next_dispatch(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    for agent in ("code-reviewer", "test-analyzer"):
        assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use(f"fixloop:{agent}", f"toolu_1_{agent}")))
    stop_recorded(hooks, tmp_path, "code-reviewer", "a1", reviewer_report("x", 2), 2)
    payload = hooks.post_tool_use(
        "fixloop:code-reviewer", "toolu_1_code-reviewer", "a1", reviewer_report("x", 2)
    )
    line = f"code-reviewer: recorded, 2 issues (run {run.run_id})"
    assert_hands_back(hooks.run("PostToolUse", payload), payload, line)
    # test-analyzer never reports; the reviewers are dispatched again.
    assert_silent(
        hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", "toolu_2_code-reviewer"))
    )
    (end,) = run.events("REVIEW_PARALLEL_END")
    assert end["level"] == "W"
    assert end["results"] == [
        {
            "agent": "code-reviewer",
            "status": "success",
            "issues": 2,
            "duration_ms": end["results"][0]["duration_ms"],
        },
        {
            "agent": "test-analyzer",
            "status": "failed",
            "issues": 0,
            "duration_ms": None,
            "error": "NO_RESULT",
        },
    ]
    assert end["total_issues"] == 2
    assert [e["iteration"] for e in run.events("REVIEW_PARALLEL_START")] == [1, 2]


def test_every_event_written_fits_its_event_model(hooks: HookEnv, run: Run, tmp_path: Path) -> None:
    from fixloop.contracts.events import EVENT_MODELS

    open_phase(hooks, run, 5)
    for agent in REVIEWERS[:2]:
        assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use(f"fixloop:{agent}", f"toolu_{agent}")))
    post = hooks.post_tool_use(
        f"fixloop:{REVIEWERS[0]}", f"toolu_{REVIEWERS[0]}", "a0", reviewer_report("x", 1)
    )
    line = f"{REVIEWERS[0]}: no answer recorded (run {run.run_id})"
    assert_hands_back(hooks.run("PostToolUse", post), post, line)
    assert_silent(
        hooks.run(
            "PostToolUseFailure", failure_payload(hooks, f"fixloop:{REVIEWERS[1]}", f"toolu_{REVIEWERS[1]}")
        )
    )
    assert_silent(hooks.run("PreToolUse", b"broken"))
    events = run.events()
    types = {event["type"] for event in events}
    assert {"AGENT_CALL", "AGENT_RESULT", "REVIEW_PARALLEL_START", "REVIEW_PARALLEL_END", "WARNING"} <= types
    for event in events:
        EVENT_MODELS[event["type"]].model_validate(event)


def test_a_payload_without_a_fixloop_agent_starts_no_interpreter(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    marker = tmp_path / "python-started"
    spy = tmp_path / "spy-python"
    spy.write_text(f'#!/bin/sh\ntouch "{marker}"\nexec "{sys.executable}" "$@"\n')
    spy.chmod(0o755)
    (hooks.data / "python3-path").write_text(f"{spy}\n")
    payload = hooks.pre_tool_use("fixloop:code-reviewer", "toolu_01")
    payload["tool_input"]["subagent_type"] = "general-purpose"
    assert_silent(hooks.run("PreToolUse", payload))
    assert not marker.exists()
    assert_silent(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", "toolu_02")))
    assert marker.exists()
    assert [line["tool_use_id"] for line in run.ledger()] == ["toolu_02"]
