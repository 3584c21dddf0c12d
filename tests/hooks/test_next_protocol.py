"""The hooks carry `fixloop next` with the real engine: the coordinator's first step, each agent's task and
model, one line per agent result, and the next step once the dispatch is complete (delivered once)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers_imports import NOT_IN_HOOKS, in_packages
from hook_helpers import PLUGIN_ROOT, HookEnv, Run, fake_engine, hook_command

from fixloop.core.agent_names import REVIEWER_AGENTS as REVIEWERS

ISSUE = {
    "id": "CR-001",
    "file": "src/app.py",
    "line": 2,
    "severity": "high",
    "category": "bug",
    "description": "Off by one.",
    "suggestion": "Return x.",
    "confidence": 90,
    "auto_fixable": True,
}


def review(agent: str) -> str:
    """A valid answer of reviewer `agent`; the code-reviewer finds one issue."""
    issues = [ISSUE] if agent == "code-reviewer" else []
    return json.dumps(
        {"status": "success", "agent": agent, "issues": issues, "positive_observations": ["ok"]}
    )


def answer_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)["hookSpecificOutput"]
    return doc


def dispatch_reviewers(hooks: HookEnv, run: Run) -> dict[str, Any]:
    """`fixloop next` dispatches review round 1; the coordinator calls the six reviewers (PreToolUse)."""
    code, action = run.engine("next", run.run_id)
    assert (code, action["action"], action["label"]) == (0, "agents", "review round 1"), action
    for agent in REVIEWERS:
        done = hooks.run("PreToolUse", hooks.pre_tool_use(f"fixloop:{agent}", f"toolu_{agent}"))
        assert done.returncode == 0, done.stderr
    return action


def stop_reviewers(hooks: HookEnv) -> None:
    """The six reviewers end; the real engine records each answer."""
    for agent in REVIEWERS:
        done = hooks.run(
            "SubagentStop", hooks.subagent_stop(f"fixloop:{agent}", f"id-{agent}", review(agent))
        )
        assert (done.returncode, done.stdout) == (0, ""), done.stderr


def post(hooks: HookEnv, agent: str) -> dict[str, Any]:
    return hooks.post_tool_use(f"fixloop:{agent}", f"toolu_{agent}", f"id-{agent}", review(agent))


def line_of(agent: str, run: Run) -> str:
    issues = "1 issue" if agent == "code-reviewer" else "0 issues"
    return f"{agent}: recorded, {issues} (run {run.run_id})"


def handed_back(done: subprocess.CompletedProcess[str], payload: dict[str, Any]) -> str:
    """The text PostToolUse put in place of the answer; the rest of tool_response is the payload's own."""
    output = answer_of(done)
    assert sorted(output) == ["hookEventName", "updatedToolOutput"]
    assert output["hookEventName"] == "PostToolUse"
    replaced = output["updatedToolOutput"]
    assert {key: value for key, value in replaced.items() if key != "content"} == {
        key: value for key, value in payload["tool_response"].items() if key != "content"
    }
    ((item,),) = [replaced["content"]]
    assert sorted(item) == ["text", "type"] and item["type"] == "text"
    text: str = item["text"]
    return text


def next_text(run: Run) -> str:
    """What `fixloop next RUN --text` prints now (the same step again while its agents were not called)."""
    done = subprocess.run(
        ["bash", str(PLUGIN_ROOT / "scripts" / "fixloop"), "next", run.run_id, "--text"],
        capture_output=True,
        text=True,
        env=run.hooks.env,
        cwd=run.hooks.project,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def verifier_step(run: Run) -> str:
    """The engine's next step once round 1 is in: the verifier."""
    text = next_text(run)
    assert text.startswith(f"fixloop next (run {run.run_id}, step 2: verify the findings of round 1): call")
    assert "\n- subagent_type: fixloop:review-verifier | description: Verify round 1 | prompt: " in text
    return text


def test_a_review_round_from_dispatch_to_the_next_step(hooks: HookEnv, review_run: Run) -> None:
    run = review_run
    dispatch_reviewers(hooks, run)
    # Each reviewer starts with its task.
    for agent in REVIEWERS:
        started = answer_of(
            hooks.run("SubagentStart", hooks.subagent_start(f"fixloop:{agent}", f"id-{agent}"))
        )
        task = (run.dir / "tasks" / f"{agent}.md").read_text()
        assert started == {"hookEventName": "SubagentStart", "additionalContext": task}
        assert f"fixloop run {run.run_id}: review round 1." in task
    stop_reviewers(hooks)
    for agent in REVIEWERS[:-1]:
        payload = post(hooks, agent)
        assert handed_back(hooks.run("PostToolUse", payload), payload) == line_of(agent, run)
    assert run.state()["flow"]["dispatch"]["id"] == 1  # nothing asked the engine yet
    last = post(hooks, REVIEWERS[-1])
    text = handed_back(hooks.run("PostToolUse", last), last)
    dispatch = run.state()["flow"]["dispatch"]
    assert (dispatch["id"], dispatch["label"], dispatch["closed"]) == (
        2,
        "verify the findings of round 1",
        False,
    )
    assert text == f"{line_of(REVIEWERS[-1], run)}\n\n{verifier_step(run)}"
    assert json.loads((run.dir / "hooks-state.json").read_text())["delivered_dispatch"] == 1
    kinds = [line["kind"] for line in run.ledger()]
    assert (kinds.count("call"), kinds.count("start"), kinds.count("stop"), kinds.count("result")) == (
        6,
        6,
        6,
        6,
    )
    assert run.events("WARNING") == []


def test_exactly_one_of_six_parallel_results_delivers_the_next_step(hooks: HookEnv, review_run: Run) -> None:
    run = review_run
    dispatch_reviewers(hooks, run)
    stop_reviewers(hooks)
    payloads = {agent: post(hooks, agent) for agent in REVIEWERS}
    procs = {
        agent: subprocess.Popen(
            ["sh", "-c", hook_command("PostToolUse")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=hooks.env,
            cwd=hooks.project,
            text=True,
        )
        for agent in REVIEWERS
    }
    texts: dict[str, str] = {}
    for agent, proc in procs.items():
        out, err = proc.communicate(json.dumps(payloads[agent]), timeout=120)
        texts[agent] = handed_back(
            subprocess.CompletedProcess([], proc.returncode, out, err), payloads[agent]
        )
    with_next = [agent for agent, text in texts.items() if text != line_of(agent, run)]
    assert len(with_next) == 1, texts
    (deliverer,) = with_next
    assert texts[deliverer] == f"{line_of(deliverer, run)}\n\n{verifier_step(run)}"
    flow = run.state()["flow"]
    assert (flow["dispatches"], flow["dispatch"]["id"]) == (2, 2)
    assert sorted(line["agent"] for line in run.ledger() if line["kind"] == "result") == sorted(REVIEWERS)


def test_a_failed_call_completes_the_dispatch_and_brings_the_next_step_as_context(
    hooks: HookEnv, review_run: Run
) -> None:
    run = review_run
    dispatch_reviewers(hooks, run)
    *answered, failed = REVIEWERS
    for agent in answered:
        stop = hooks.subagent_stop(f"fixloop:{agent}", f"id-{agent}", review(agent))
        assert hooks.run("SubagentStop", stop).stdout == ""
        payload = post(hooks, agent)
        assert handed_back(hooks.run("PostToolUse", payload), payload) == line_of(agent, run)
    failure = hooks.pre_tool_use(f"fixloop:{failed}", f"toolu_{failed}")
    failure.update(
        hook_event_name="PostToolUseFailure", error="Interrupted", is_interrupt=True, duration_ms=9
    )
    output = answer_of(hooks.run("PostToolUseFailure", failure))
    assert sorted(output) == ["additionalContext", "hookEventName"]
    assert output["hookEventName"] == "PostToolUseFailure"
    assert run.state()["flow"]["dispatch"]["id"] == 2  # the engine went past the reviewers: the verifier
    assert output["additionalContext"] == next_text(run)
    assert output["additionalContext"].startswith(f"fixloop next (run {run.run_id}")
    assert json.loads((run.dir / "hooks-state.json").read_text())["delivered_dispatch"] == 1
    (result,) = [line for line in run.ledger() if line["kind"] == "result" and line["agent"] == failed]
    assert result["status"] == "failed"


def test_the_coordinator_starts_with_the_engines_next_step(hooks: HookEnv, review_run: Run) -> None:
    run = review_run
    started = answer_of(hooks.run("SubagentStart", hooks.subagent_start("fixloop:coordinator", "id-co")))
    text = started["additionalContext"]
    assert started["hookEventName"] == "SubagentStart"
    first, *calls = text.splitlines()
    assert first == (
        f"fixloop next (run {run.run_id}, step 1: review round 1): call these 6 agents, all in ONE message, "
        "with run_in_background false:"
    )
    assert [call.split(" | ")[0] for call in calls] == [
        f"- subagent_type: fixloop:{agent}" for agent in REVIEWERS
    ]
    # Until the agents are called, the engine answers the same dispatch again.
    again = answer_of(hooks.run("SubagentStart", hooks.subagent_start("fixloop:coordinator", "id-co2")))
    assert again["additionalContext"] == text
    assert [(line["kind"], line["agent"]) for line in run.ledger()] == [("start", "coordinator")] * 2


def test_an_agent_outside_the_pending_dispatch_gets_no_task(hooks: HookEnv, review_run: Run) -> None:
    run = review_run
    dispatch_reviewers(hooks, run)
    done = hooks.run("SubagentStart", hooks.subagent_start("fixloop:review-fixer", "id-fix"))
    assert (done.returncode, done.stdout) == (0, "")
    (run.dir / "tasks" / "code-reviewer.md").unlink()
    done = hooks.run("SubagentStart", hooks.subagent_start("fixloop:code-reviewer", "id-cr"))
    assert (done.returncode, done.stdout) == (0, "")
    assert [line["kind"] for line in run.ledger()][-2:] == ["start", "start"]


def set_dispatch_model(run: Run, agent: str, model: str | None) -> None:
    state_file = run.dir / "state.json"
    state = run.state()
    for call in state["flow"]["dispatch"]["calls"]:
        call["model"] = model if call["agent"] == agent else None
    state_file.write_text(json.dumps(state))


def test_a_call_gets_the_model_its_dispatch_asks_for(hooks: HookEnv, review_run: Run) -> None:
    run = review_run
    code, _action = run.engine("next", run.run_id)
    assert code == 0
    set_dispatch_model(run, "code-reviewer", "haiku")
    payload = hooks.pre_tool_use("fixloop:code-reviewer", "toolu_cr")
    output = answer_of(hooks.run("PreToolUse", payload))
    assert output == {
        "hookEventName": "PreToolUse",
        "updatedInput": {**payload["tool_input"], "model": "haiku"},
    }
    # Already the model asked for, or a call the dispatch asks no model for: the input stands.
    set_dispatch_model(run, "silent-failure-hunter", "haiku")
    first = hooks.pre_tool_use("fixloop:silent-failure-hunter", "toolu_sf")
    first["tool_input"]["model"] = "haiku"
    assert hooks.run("PreToolUse", first).stdout == ""
    other = hooks.pre_tool_use("fixloop:test-analyzer", "toolu_ta")
    other["tool_input"]["model"] = "opus"
    assert hooks.run("PreToolUse", other).stdout == ""
    models = [(event["agent"], event["model"]) for event in run.events("AGENT_CALL")]
    assert models == [
        ("code-reviewer", "haiku"),
        ("silent-failure-hunter", "haiku"),
        ("test-analyzer", "opus"),
    ]


def test_the_engine_failing_tells_the_coordinator_to_end(
    hooks: HookEnv, review_run: Run, tmp_path: Path
) -> None:
    run = review_run
    error = {"status": "failed", "error": {"code": "STATE_CORRUPT", "message": "Run state unreadable."}}
    engine = fake_engine(tmp_path / "engine", [error], [2])
    env = {"FIXLOOP_HOOK_ENGINE": str(engine)}
    started = answer_of(hooks.run("SubagentStart", hooks.subagent_start("fixloop:coordinator", "id-co"), env))
    reason = "STATE_CORRUPT: Run state unreadable"
    assert started["additionalContext"] == (
        f"fixloop could not give the next step: {reason}. End now; your final message is exactly: "
        f"fixloop: {reason}"
    )
    (warning,) = run.events("WARNING")
    assert (warning["code"], warning["hook"]) == ("NEXT_STEP_FAILED", "SubagentStart")
    assert reason in warning["message"]


def test_an_engine_that_hangs_on_the_last_result_is_reported_in_its_line(
    hooks: HookEnv, review_run: Run, tmp_path: Path
) -> None:
    run = review_run
    dispatch_reviewers(hooks, run)
    stop_reviewers(hooks)
    for agent in REVIEWERS[:-1]:
        hooks.run("PostToolUse", post(hooks, agent))
    engine = fake_engine(tmp_path / "engine", ["fixloop next (run x): late"], sleep=30)
    env = {"FIXLOOP_HOOK_ENGINE": str(engine), "FIXLOOP_NEXT_TIMEOUT": "0.5"}
    last = post(hooks, REVIEWERS[-1])
    reason = "`fixloop next` did not answer within 0.5s"
    assert handed_back(hooks.run("PostToolUse", last, env), last) == (
        f"{line_of(REVIEWERS[-1], run)}\n\nfixloop could not give the next step: {reason}. End now; your "
        f"final message is exactly: fixloop: {reason}"
    )
    (warning,) = run.events("WARNING")
    assert (warning["code"], warning["hook"]) == ("NEXT_STEP_FAILED", "PostToolUse")


def loaded_by(hooks: HookEnv, payload: dict[str, Any], script: str = "agent_events") -> tuple[set[str], str]:
    """The modules one hook process imports (-X importtime), and what it printed."""
    done = subprocess.run(
        [sys.executable, "-E", "-S", "-X", "importtime", str(PLUGIN_ROOT / "hooks" / f"{script}.py")],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=hooks.env,
        cwd=hooks.project,
        check=True,
    )
    lines = done.stderr.decode().splitlines()
    return {
        line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")
    }, done.stdout.decode()


def test_the_per_call_paths_of_a_dispatch_load_no_upper_layer(hooks: HookEnv, review_run: Run) -> None:
    """A call that gets a model, an agent that gets its task, a result handed back as one line: none of
    them loads contracts, runs, review, report, cli, pydantic, click, json or re, nor starts a process."""
    run = review_run
    code, _action = run.engine("next", run.run_id)
    assert code == 0
    set_dispatch_model(run, "code-reviewer", "haiku")
    loaded, printed = loaded_by(hooks, hooks.pre_tool_use("fixloop:code-reviewer", "toolu_cr"))
    assert '"updatedInput"' in printed
    more, printed = loaded_by(hooks, hooks.subagent_start("fixloop:code-reviewer", "id-cr"))
    assert '"additionalContext"' in printed
    loaded |= more
    more, printed = loaded_by(hooks, post(hooks, "code-reviewer"))
    assert '"updatedToolOutput"' in printed
    loaded |= more
    assert {"fixloop.hookside.dispatch", "fixloop.hookside.results", "fixloop.hookside.replies"} <= loaded
    assert in_packages(loaded, NOT_IN_HOOKS) == []
    assert "subprocess" not in loaded


def test_a_second_call_in_a_step_and_a_call_outside_it_are_refused(hooks: HookEnv, review_run: Run) -> None:
    """The step's counts stay true: a duplicate or a stray call never runs, and nothing of it is recorded."""
    run = review_run
    code, action = run.engine("next", run.run_id)
    assert code == 0 and action["step"] == 1
    first = hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", "toolu_cr")).stdout
    assert "permissionDecision" not in first
    again = answer_of(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", "toolu_cr2")))
    assert again == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "fixloop:code-reviewer was already called in step 1 of run "
        f"{run.run_id}; its answer counts once. Do not call it again: wait for the next fixloop next block.",
    }
    stray = answer_of(hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:review-fixer", "toolu_fx")))
    assert stray["permissionDecision"] == "deny"
    assert stray["permissionDecisionReason"].startswith(
        f"fixloop:review-fixer is not part of step 1 of run {run.run_id}"
    )
    # A background launch runs in the foreground.
    background = hooks.pre_tool_use("fixloop:test-analyzer", "toolu_ta", background=True)
    rewritten = answer_of(hooks.run("PreToolUse", background))["updatedInput"]
    assert rewritten == {**background["tool_input"], "run_in_background": False, "model": rewritten["model"]}
    assert [(line["kind"], line["tool_use_id"]) for line in run.ledger()] == [
        ("call", "toolu_cr"),
        ("refused", "toolu_cr2"),
        ("refused", "toolu_fx"),
        ("call", "toolu_ta"),
    ]
    assert [e["agent"] for e in run.events("AGENT_CALL")] == ["code-reviewer", "test-analyzer"]
    assert [e["code"] for e in run.events("WARNING")] == ["AGENT_CALL_REFUSED", "AGENT_CALL_REFUSED"]
    # A refused call's failure is no agent result.
    failure = {
        **hooks.common("PostToolUseFailure"),
        "tool_name": "Agent",
        "tool_use_id": "toolu_cr2",
        "tool_input": {"subagent_type": "fixloop:code-reviewer"},
        "error": "denied",
    }
    assert hooks.run("PostToolUseFailure", failure).stdout == ""
    assert [line["kind"] for line in run.ledger()].count("result") == 0
