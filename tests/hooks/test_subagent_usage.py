"""SubagentStop reads the tokens of all an agent's model turns from its transcript; the run's usage prefers
them to the Agent tool result's usage, which covers the last turn only."""

from __future__ import annotations

import json
from typing import Any

from hook_helpers import REPORTED_USAGE, HookEnv, Run

VALID_REVIEW = json.dumps(
    {"status": "success", "agent": "code-reviewer", "issues": [], "positive_observations": ["Small."]}
)
TOOL = "toolu_cr"


def response(message_id: str, usage: dict[str, int], content: list[dict[str, Any]]) -> dict[str, Any]:
    """An `assistant` line of a subagent transcript, as Claude Code 2.1.328 writes one per content block."""
    message = {"id": message_id, "model": "claude-haiku-5-5", "role": "assistant", "usage": usage}
    return {"type": "assistant", "isSidechain": True, "message": {**message, "content": content}}


def reviewer_transcript() -> list[dict[str, Any]]:
    """Read, Grep, then the answer: three responses, the first one written as two lines."""
    read = {"input_tokens": 3000, "output_tokens": 40, "cache_read_input_tokens": 0}
    grep = {"input_tokens": 3500, "output_tokens": 30, "cache_read_input_tokens": 3000}
    answer = {"input_tokens": 3900, "output_tokens": 80, "cache_read_input_tokens": 3500}
    return [
        {"type": "user", "message": {"role": "user", "content": "Review src/app.py."}},
        response("msg_1", read, [{"type": "text", "text": "Reading the file."}]),
        response("msg_1", read, [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]),
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "x"}]}},
        response("msg_2", grep, [{"type": "tool_use", "id": "t2", "name": "Grep", "input": {}}]),
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "y"}]}},
        response("msg_3", answer, [{"type": "text", "text": VALID_REVIEW}]),
    ]


def call_and_stop(hooks: HookEnv, run: Run, transcript: list[Any] | str | None) -> None:
    """One foreground code-reviewer call of review round 1, its transcript as given (None: none)."""
    code, action = run.engine("next", run.run_id)
    assert (code, action["label"]) == (0, "review round 1"), action
    path = hooks.project / "agent-agent-cr.jsonl"
    if isinstance(transcript, list):
        path.write_text("".join(json.dumps(line) + "\n" for line in transcript))
    elif isinstance(transcript, str):
        path.write_text(transcript)
    assert hooks.run("PreToolUse", hooks.pre_tool_use("fixloop:code-reviewer", TOOL)).returncode == 0
    done = hooks.run("SubagentStop", hooks.subagent_stop("fixloop:code-reviewer", "agent-cr", VALID_REVIEW))
    assert (done.returncode, done.stdout) == (0, "")
    post = hooks.post_tool_use("fixloop:code-reviewer", TOOL, "agent-cr", VALID_REVIEW)
    assert hooks.run("PostToolUse", post).returncode == 0


def report_usage(run: Run) -> dict[str, Any]:
    code, report = run.engine("review", "report", run.run_id, "--format", "json")
    assert code == 0, report
    usage: dict[str, Any] = report["usage"]
    return usage


def transcript_warnings(run: Run) -> list[dict[str, Any]]:
    return [e for e in run.events("WARNING") if e["code"] == "TRANSCRIPT_USAGE_INCOMPLETE"]


def test_every_turn_of_the_agent_is_counted_from_its_transcript(hooks: HookEnv, review_run: Run) -> None:
    run = review_run
    call_and_stop(hooks, run, reviewer_transcript())
    (line,) = [entry for entry in run.ledger() if entry["kind"] == "usage"]
    assert line == {
        "kind": "usage",
        "ts_ms": line["ts_ms"],
        "agent": "code-reviewer",
        "agent_id": "agent-cr",
        "usage": {
            "input_tokens": 10400,
            "output_tokens": 150,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 6500,
        },
        "total_tokens": 17050,
        "model": "claude-haiku-5-5",
        "responses": 3,
        "complete": True,
    }
    # The tool result reported its last turn (REPORTED_USAGE); the run counts the transcript's whole.
    (result,) = [entry for entry in run.ledger() if entry["kind"] == "result"]
    assert result["total_tokens"] == REPORTED_USAGE["total_tokens"]
    usage = report_usage(run)
    spent = usage["by_agent"]["code-reviewer"]
    assert (spent["calls"], spent["input_tokens"], spent["output_tokens"], spent["total_tokens"]) == (
        1,
        10400,
        150,
        17050,
    )
    assert usage["by_round"]["1"]["total_tokens"] == 17050
    assert usage["incomplete"] == []
    assert transcript_warnings(run) == []


def test_without_a_transcript_the_last_turn_counts_and_the_usage_says_so(
    hooks: HookEnv, review_run: Run
) -> None:
    run = review_run
    call_and_stop(hooks, run, None)
    assert [entry["kind"] for entry in run.ledger()] == ["call", "stop", "result"]
    usage = report_usage(run)
    assert usage["by_agent"]["code-reviewer"]["total_tokens"] == REPORTED_USAGE["total_tokens"]
    assert usage["incomplete"] == [{"agent": "code-reviewer", "agent_id": "agent-cr", "counted": "last_turn"}]
    assert transcript_warnings(run) == []


def test_a_garbled_transcript_is_a_warning_and_the_hook_goes_on(hooks: HookEnv, review_run: Run) -> None:
    run = review_run
    garbled = '{"type": "assistant", "message": {"id": "m", "usage": \n\x00\x01 not json\n[1, 2]\n'
    garbled += json.dumps(VALID_REVIEW)[1:-1] + "\n"  # the final message is there; no response can be read
    call_and_stop(hooks, run, garbled)
    assert run.state()["review"]["rounds"][-1]["records"]["code-reviewer"]["valid"] is True
    assert [entry["kind"] for entry in run.ledger()] == ["call", "stop", "result"]
    (warning,) = transcript_warnings(run)
    assert warning["message"] == (
        "The tokens of code-reviewer (agent-cr) were not all read from its transcript: it holds no readable "
        "model response."
    )
    assert warning["transcript_path"] == str(hooks.project / "agent-agent-cr.jsonl")
    assert report_usage(run)["incomplete"] == [
        {"agent": "code-reviewer", "agent_id": "agent-cr", "counted": "last_turn"}
    ]
