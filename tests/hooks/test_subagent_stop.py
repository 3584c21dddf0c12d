"""SubagentStop: contract enforcement for every fixloop agent but the coordinator, bounded retries, the
engine's `continue`, failing open."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hook_helpers import HookEnv, Run, engine_calls, fake_engine

VALID_REVIEW = {
    "status": "success",
    "agent": "code-reviewer",
    "issues": [],
    "positive_observations": ["Small, focused change."],
}
# Wrong on purpose: confidence out of range and an unknown field.
INVALID_REVIEW = {
    "status": "success",
    "agent": "code-reviewer",
    "issues": [
        {
            "id": "CR-001",
            "file": "src/app.py",
            "line": 2,
            "severity": "high",
            "category": "bug",
            "description": "Off by one.",
            "suggestion": "Return x.",
            "confidence": 150,
            "auto_fixable": True,
        }
    ],
    "surprise": 1,
}


def request_review_round(run: Run) -> None:
    """Bring a `review` run to "waiting for reviewers" with the real engine: `fixloop next` dispatches
    round 1."""
    code, action = run.engine("next", run.run_id)
    assert (code, action["action"], action["label"]) == (0, "agents", "review round 1"), action


def reviewer_record(run: Run, agent: str = "code-reviewer") -> dict[str, Any]:
    record: dict[str, Any] = run.state()["review"]["rounds"][-1]["records"][agent]
    return record


def stop(
    hooks: HookEnv,
    agent_id: str,
    message: str,
    active: bool = False,
    env: dict[str, str] | None = None,
    agent_type: str = "fixloop:code-reviewer",
) -> tuple[int, str]:
    done = hooks.run("SubagentStop", hooks.subagent_stop(agent_type, agent_id, message, active), env)
    assert done.returncode == 0, done.stderr
    return done.returncode, done.stdout


def test_a_valid_result_is_recorded_into_the_run(hooks: HookEnv, review_run: Run) -> None:
    run = review_run
    request_review_round(run)
    message = json.dumps(VALID_REVIEW)
    assert stop(hooks, "agent-cr", message) == (0, "")
    (line,) = run.ledger()
    assert line == {
        "kind": "stop",
        "ts_ms": line["ts_ms"],
        "agent_type": "fixloop:code-reviewer",
        "agent": "code-reviewer",
        "agent_id": "agent-cr",
        "message_sha256": hashlib.sha256(message.encode()).hexdigest(),
        "stop_hook_active": False,
        "attempt": 1,
    }
    record = reviewer_record(run)
    assert (record["valid"], record["provenance"], record["agent_id"], record["attempts"]) == (
        True,
        "hook",
        "agent-cr",
        1,
    )
    assert record["document"]["positive_observations"] == ["Small, focused change."]
    assert run.events("WARNING", "CONTRACT_VIOLATION") == []


def test_invalid_answers_block_twice_then_the_agent_may_stop(hooks: HookEnv, review_run: Run) -> None:
    run = review_run
    request_review_round(run)
    message = json.dumps(INVALID_REVIEW)
    reasons = []
    for attempt, active in ((1, False), (2, True)):
        _code, out = stop(hooks, "agent-cr", message, active)
        decision = json.loads(out)
        assert sorted(decision) == ["decision", "reason"]
        assert decision["decision"] == "block"
        reason = decision["reason"]
        reasons.append(reason)
        error = reviewer_record(run)["last_error"]
        lines = reason.splitlines()
        assert f"- {error['code']}: {error['message']}" in lines
        assert error["violations"], error
        for violation in error["violations"]:
            assert f"- {violation['path']}: {violation['message']}" in lines
        assert f"(attempt {attempt} of 3)" in lines[0]
        assert lines[-1].startswith("Answer again with only the corrected JSON document and nothing else.")
        assert run.events("CONTRACT_VIOLATION") == []
    assert any("confidence" in line for line in reasons[0].splitlines())
    # Third invalid answer: no block, the engine logged CONTRACT_VIOLATION.
    assert stop(hooks, "agent-cr", message, True) == (0, "")
    (violation,) = run.events("CONTRACT_VIOLATION")
    assert (violation["agent"], violation["attempts"], violation["level"]) == ("code-reviewer", 3, "E")
    record = reviewer_record(run)
    assert (record["valid"], record["invalid_attempts"], record["exhausted"]) == (False, 3, True)
    assert [line["attempt"] for line in run.ledger()] == [1, 2, 3]
    verdict = json.loads((run.dir / "hooks-state.json").read_text())["verdicts"]["agent-cr"]
    assert (verdict["valid"], verdict["final"]) == (False, True)


def test_a_corrected_answer_after_a_block_is_recorded(hooks: HookEnv, review_run: Run) -> None:
    run = review_run
    request_review_round(run)
    _code, out = stop(hooks, "agent-cr", "I found no issues, all good!")
    assert json.loads(out)["decision"] == "block"
    assert stop(hooks, "agent-cr", json.dumps(VALID_REVIEW), True) == (0, "")
    record = reviewer_record(run)
    assert (record["valid"], record["attempts"], record["invalid_attempts"]) == (True, 2, 1)


def test_every_agent_but_the_coordinator_is_held_to_its_contract(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    engine_dir = tmp_path / "engine"
    engine = fake_engine(engine_dir, [{"status": "recorded", "valid": True, "retry": False}])
    env = {"FIXLOOP_HOOK_ENGINE": str(engine)}
    agents = ("review-fixer", "review-verifier", "type-design-analyzer", "test-writer")
    for agent in agents:
        assert stop(hooks, f"id-{agent}", "{}", env=env, agent_type=f"fixloop:{agent}") == (0, "")
    calls = engine_calls(engine_dir)
    assert [call["argv"] for call in calls] == [
        ["record", run.run_id, "--agent", agent, "--from-hook", f"id-{agent}", "-"] for agent in agents
    ]
    assert {call["stdin_sha256"] for call in calls} == {hashlib.sha256(b"{}").hexdigest()}


def test_the_coordinator_is_not_recorded(hooks: HookEnv, run: Run, tmp_path: Path) -> None:
    engine_dir = tmp_path / "engine"
    engine = fake_engine(engine_dir, [{"status": "recorded", "valid": False, "retry": True}])
    out = stop(
        hooks,
        "coord",
        "anything",
        env={"FIXLOOP_HOOK_ENGINE": str(engine)},
        agent_type="fixloop:coordinator",
    )
    assert out == (0, "")
    assert engine_calls(engine_dir) == []
    assert [line["kind"] for line in run.ledger()] == ["stop"]


def test_the_coordinator_s_tokens_come_from_its_transcript(hooks: HookEnv, review_run: Run) -> None:
    run = review_run
    response = {
        "type": "assistant",
        "message": {
            "id": "msg_1",
            "model": "claude-haiku-5-5",
            "usage": {"input_tokens": 9000, "output_tokens": 120, "cache_read_input_tokens": 800},
            "content": [{"type": "text", "text": "fixloop review: done"}],
        },
    }
    (hooks.project / "agent-coord.jsonl").write_text(
        json.dumps(response) + "\n" + json.dumps(response) + "\n"
    )
    assert stop(hooks, "coord", "fixloop review: done", agent_type="fixloop:coordinator") == (0, "")
    usage_line = run.ledger()[-1]
    assert usage_line == {
        "kind": "usage",
        "ts_ms": usage_line["ts_ms"],
        "agent": "coordinator",
        "agent_id": "coord",
        "usage": {
            "input_tokens": 9000,
            "output_tokens": 120,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 800,
        },
        "total_tokens": 9920,
        "model": "claude-haiku-5-5",
        "responses": 1,
        "complete": True,
    }
    code, report = run.engine("review", "report", run.run_id, "--format", "json")
    assert code == 0
    spent = report["usage"]["by_agent"]["coordinator"]
    assert (spent["calls"], spent["total_tokens"]) == (1, 9920)


def test_the_hook_blocks_at_most_twice_even_if_the_engine_always_asks_again(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    answer = {
        "status": "recorded",
        "agent": "code-reviewer",
        "round": 1,
        "valid": False,
        "retry": True,
        "attempt": 1,
        "error": {
            "code": "SCHEMA_VIOLATION",
            "message": "bad",
            "violations": [{"path": "$.x", "message": "no"}],
        },
        "hint": "Remove x.",
    }
    engine = fake_engine(tmp_path / "engine", [answer])
    env = {"FIXLOOP_HOOK_ENGINE": str(engine)}
    outputs = [stop(hooks, "agent-loop", "bad", active=n > 0, env=env)[1] for n in range(4)]
    assert [json.loads(out)["decision"] for out in outputs[:2]] == ["block", "block"]
    assert json.loads(outputs[0])["reason"].splitlines()[1:5] == [
        "Violations:",
        "- SCHEMA_VIOLATION: bad",
        "- $.x: no",
        "Remove x.",
    ]
    assert outputs[2:] == ["", ""]
    warnings = run.events("WARNING")
    assert [w["code"] for w in warnings] == ["CONTRACT_RETRY_CAP", "CONTRACT_RETRY_CAP"]


def test_no_block_when_the_engine_says_no_retry(hooks: HookEnv, run: Run, tmp_path: Path) -> None:
    answer = {
        "status": "recorded",
        "valid": False,
        "retry": False,
        "attempt": 3,
        "error": {"code": "X", "message": "y"},
    }
    engine = fake_engine(tmp_path / "engine", [answer])
    assert stop(hooks, "a", "bad", active=True, env={"FIXLOOP_HOOK_ENGINE": str(engine)}) == (0, "")
    assert stop(hooks, "b", "bad", active=False, env={"FIXLOOP_HOOK_ENGINE": str(engine)}) == (0, "")


@pytest.mark.parametrize(
    ("answer", "code", "expected_code"),
    [
        (
            {
                "status": "failed",
                "error": {"code": "ENGINE_UNAVAILABLE", "message": "no python", "suggestion": "s"},
            },
            3,
            "ENGINE_UNAVAILABLE",
        ),
        ("Traceback (most recent call last):\n  boom", 1, "ENGINE_UNAVAILABLE"),
        (
            {"status": "failed", "error": {"code": "UNEXPECTED_AGENT_RESULT", "message": "not waiting"}},
            2,
            "RECORD_REFUSED",
        ),
    ],
)
def test_engine_failures_let_the_agent_stop_with_a_warning(
    hooks: HookEnv, run: Run, tmp_path: Path, answer: dict[str, Any] | str, code: int, expected_code: str
) -> None:
    engine = fake_engine(tmp_path / "engine", [answer], [code])
    assert stop(hooks, "agent-x", "{}", env={"FIXLOOP_HOOK_ENGINE": str(engine)}) == (0, "")
    (warning,) = run.events("WARNING")
    assert (warning["code"], warning["agent"], warning["agent_id"]) == (
        expected_code,
        "code-reviewer",
        "agent-x",
    )


def test_an_engine_that_hangs_is_abandoned(hooks: HookEnv, run: Run, tmp_path: Path) -> None:
    engine = fake_engine(
        tmp_path / "engine", [{"status": "recorded", "valid": False, "retry": True}], sleep=30
    )
    env = {"FIXLOOP_HOOK_ENGINE": str(engine), "FIXLOOP_RECORD_TIMEOUT": "0.5"}
    assert stop(hooks, "agent-slow", "{}", env=env) == (0, "")
    (warning,) = run.events("WARNING")
    assert warning["code"] == "ENGINE_UNAVAILABLE"
    assert "did not answer within 0.5s" in warning["message"]


def test_the_real_entry_point_without_dependencies_fails_open(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    bare = tmp_path / "bare-venv"
    import venv

    venv.EnvBuilder(with_pip=False, symlinks=True).create(bare)
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("bash", "sh", "readlink", "dirname", "sha256sum", "mkdir", "cat"):
        for folder in ("/usr/bin", "/bin"):
            if os.path.exists(f"{folder}/{tool}"):
                (tools / tool).symlink_to(f"{folder}/{tool}")
                break
    # A wrapper, not a symlink: a symlink outside the venv would start the base interpreter.
    wrapper = tools / "python3"
    wrapper.write_text(f'#!/bin/sh\nexec {bare / "bin" / "python3"} "$@"\n')
    wrapper.chmod(0o755)
    env = {"PATH": str(tools), "FIXLOOP_PYTHON": str(bare / "bin" / "python3"), "FIXLOOP_NO_BUILD": "1"}
    assert stop(hooks, "agent-y", json.dumps(VALID_REVIEW), env=env) == (0, "")
    (warning,) = run.events("WARNING")
    assert warning["code"] == "ENGINE_UNAVAILABLE"
    assert "building is disabled" in warning["message"]


def test_a_reviewer_outside_any_run_is_let_go(hooks: HookEnv, tmp_path: Path) -> None:
    engine_dir = tmp_path / "engine"
    engine = fake_engine(engine_dir, [{"status": "recorded", "valid": False, "retry": True}])
    assert stop(hooks, "free", "bad", env={"FIXLOOP_HOOK_ENGINE": str(engine)}) == (0, "")
    assert engine_calls(engine_dir) == []


def test_an_unwritable_ledger_fails_open_without_recording(hooks: HookEnv, run: Run, tmp_path: Path) -> None:
    (run.dir / "agents.jsonl").mkdir()
    engine_dir = tmp_path / "engine"
    engine = fake_engine(engine_dir, [{"status": "recorded", "valid": False, "retry": True}])
    assert stop(hooks, "agent-z", "bad", env={"FIXLOOP_HOOK_ENGINE": str(engine)}) == (0, "")
    assert engine_calls(engine_dir) == []
    (warning,) = run.events("WARNING")
    assert warning["code"] == "HOOK_FAILED"


def test_the_launcher_exits_zero_when_the_hook_prints_a_block(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    engine = fake_engine(tmp_path / "engine", [{"status": "recorded", "valid": False, "retry": True}])
    done = hooks.run(
        "SubagentStop",
        hooks.subagent_stop("fixloop:code-reviewer", "agent-q", "bad"),
        {"FIXLOOP_HOOK_ENGINE": str(engine)},
    )
    assert done.returncode == 0
    assert json.loads(done.stdout)["decision"] == "block"


def test_stop_with_an_unpaired_surrogate_hashes_what_it_sends(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    engine_dir = tmp_path / "engine"
    engine = fake_engine(engine_dir, [{"status": "recorded", "valid": True, "retry": False}])
    payload = json.dumps(hooks.subagent_stop("fixloop:code-reviewer", "agent-s", "x")).replace(
        '"x"', '"a\\ud800b"'
    )
    done = hooks.run("SubagentStop", payload, {"FIXLOOP_HOOK_ENGINE": str(engine)})
    assert (done.returncode, done.stdout) == (0, "")
    (line,) = run.ledger()
    (call,) = engine_calls(engine_dir)
    assert line["message_sha256"] == call["stdin_sha256"] == hashlib.sha256(b"a?b").hexdigest()


def test_only_what_a_real_subagent_said_can_be_recorded_by_hand(
    hooks: HookEnv, review_run: Run, tmp_path: Path
) -> None:
    """The ledger's stop line is what `fixloop record` (without --from-hook) checks the text against."""
    run = review_run
    request_review_round(run)
    engine = fake_engine(tmp_path / "engine", [{"status": "recorded", "valid": True, "retry": False}])
    said = json.dumps(VALID_REVIEW)
    assert stop(hooks, "agent-real", said, env={"FIXLOOP_HOOK_ENGINE": str(engine)}) == (0, "")
    forged = json.dumps({**VALID_REVIEW, "positive_observations": ["Invented."]})
    code, answer = run.engine("record", run.run_id, "--agent", "code-reviewer", "-", stdin=forged)
    assert (code, answer["error"]["code"]) == (2, "UNVERIFIED_AGENT_RESULT")
    code, answer = run.engine("record", run.run_id, "--agent", "code-reviewer", "-", stdin=said)
    assert (code, answer["status"], answer["valid"]) == (0, "recorded", True)
    assert reviewer_record(run)["provenance"] == "ledger"


# ---- the engine sends an agent on: `continue` ------------------------------------------------------


def going_on(instruction: str) -> dict[str, Any]:
    """The engine's answer to a valid answer that is not the end of the agent's work."""
    return {
        "status": "recorded",
        "agent": "review-fixer",
        "valid": True,
        "retry": False,
        "attempt": 1,
        "error": None,
        "hint": None,
        "agent_status": "success",
        "issues_count": None,
        "continue": instruction,
    }


def test_continue_sends_the_agent_on_at_most_four_times(hooks: HookEnv, run: Run, tmp_path: Path) -> None:
    instruction = "Your test fails as expected; now fix the code."
    engine = fake_engine(tmp_path / "engine", [going_on(instruction)])
    env = {"FIXLOOP_HOOK_ENGINE": str(engine)}
    outputs = [
        stop(hooks, "agent-fix", "{}", active=n > 0, env=env, agent_type="fixloop:review-fixer")[1]
        for n in range(5)
    ]
    assert [json.loads(out) for out in outputs[:4]] == [{"decision": "block", "reason": instruction}] * 4
    assert outputs[4] == ""
    (warning,) = run.events("WARNING")
    assert (warning["code"], warning["agent"], warning["agent_id"]) == (
        "CONTINUE_CAP",
        "review-fixer",
        "agent-fix",
    )
    state = json.loads((run.dir / "hooks-state.json").read_text())
    assert state["continues"] == {"agent-fix": 4}
    assert state["verdicts"]["agent-fix"] == {
        "valid": True,
        "final": True,
        "error": None,
        "status": "success",
        "issues": None,
    }
    assert len(engine_calls(tmp_path / "engine")) == 5


def test_an_agent_sent_on_is_not_final_and_keeps_its_retries(
    hooks: HookEnv, run: Run, tmp_path: Path
) -> None:
    invalid = {
        "status": "recorded",
        "valid": False,
        "retry": True,
        "attempt": 1,
        "error": {"code": "SCHEMA_VIOLATION", "message": "bad"},
    }
    engine = fake_engine(tmp_path / "engine", [going_on("Go on."), going_on("Go on."), invalid])
    env = {"FIXLOOP_HOOK_ENGINE": str(engine)}
    for _ in range(2):
        _code, out = stop(hooks, "agent-fix", "{}", env=env, agent_type="fixloop:review-fixer")
        assert json.loads(out) == {"decision": "block", "reason": "Go on."}
        verdict = json.loads((run.dir / "hooks-state.json").read_text())["verdicts"]["agent-fix"]
        assert (verdict["valid"], verdict["final"]) == (True, False)
    # Two stops already, both sent on: an invalid answer still gets its retries.
    _code, out = stop(hooks, "agent-fix", "bad", env=env, agent_type="fixloop:review-fixer")
    decision = json.loads(out)
    assert decision["decision"] == "block"
    assert decision["reason"].startswith("fixloop rejected your final answer (attempt 1 of 3)")


def test_an_unexpected_agent_is_a_warning_not_a_block(hooks: HookEnv, review_run: Run) -> None:
    """The real engine: nothing waits for the fixer while the reviewers are dispatched."""
    request_review_round(review_run)
    assert stop(hooks, "agent-fix", '{"status": "success"}', agent_type="fixloop:review-fixer") == (0, "")
    (warning,) = review_run.events("WARNING")
    assert (warning["code"], warning["error_code"], warning["agent"]) == (
        "RECORD_REFUSED",
        "UNEXPECTED_AGENT_RESULT",
        "review-fixer",
    )
