"""SubagentStop in process: the verdict comes from the engine's one pass over the answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hook_helpers import engine_calls, fake_engine, recorded_answer

from fixloop.hookside import context, stop

if TYPE_CHECKING:
    from conftest import BoundRun  # the fixture's type (tests/unit/hookside/conftest.py)

# What the agent says; the engine's answer below disagrees, and the verdict follows the engine.
CLAIM = json.dumps({"status": "failed", "agent": "code-reviewer", "issues": [{"id": "1"}, {"id": "2"}]})


def stop_of(
    bound_run: BoundRun,
    agent: str,
    agent_id: str,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    engine: Path,
) -> str | None:
    monkeypatch.setenv("FIXLOOP_HOOK_ENGINE", str(engine))
    payload = bound_run.payload(
        "SubagentStop", agent_type=f"fixloop:{agent}", agent_id=agent_id, last_assistant_message=message
    )
    found = context.find_run(payload)
    assert found is not None
    return stop.handle(payload, found)


def test_a_contracted_agents_verdict_is_the_engines_reading(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = fake_engine(tmp_path / "engine", [recorded_answer("code-reviewer", 5, "partial")])
    assert stop_of(bound_run, "code-reviewer", "id-cr", CLAIM, monkeypatch, engine) is None
    assert bound_run.hooks_state()["verdicts"]["id-cr"] == {
        "valid": True,
        "final": True,
        "error": None,
        "status": "partial",
        "issues": 5,
    }
    (call,) = engine_calls(tmp_path / "engine")
    assert call["argv"] == [
        "record",
        bound_run.run_id,
        "--agent",
        "code-reviewer",
        "--from-hook",
        "id-cr",
        "-",
    ]


def test_an_invalid_answer_keeps_no_status_nor_count(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = {
        **recorded_answer("code-reviewer"),
        "valid": False,
        "retry": True,
        "agent_status": None,
        "error": {
            "code": "SCHEMA_VIOLATION",
            "message": "bad",
            "violations": [{"path": "$.x", "message": "no"}],
        },
        "hint": "Remove x.",
    }
    engine = fake_engine(tmp_path / "engine", [answer])
    decision = json.loads(stop_of(bound_run, "code-reviewer", "id-cr", CLAIM, monkeypatch, engine) or "")
    assert decision["decision"] == "block"
    assert decision["reason"].splitlines()[1:5] == [
        "Violations:",
        "- SCHEMA_VIOLATION: bad",
        "- $.x: no",
        "Remove x.",
    ]
    assert bound_run.hooks_state()["verdicts"]["id-cr"] == {
        "valid": False,
        "final": False,
        "error": "SCHEMA_VIOLATION",
        "status": None,
        "issues": None,
    }


def test_a_coordinators_status_is_read_from_its_answer(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = fake_engine(tmp_path / "engine", [recorded_answer("coordinator")])
    assert stop_of(bound_run, "coordinator", "id-rc", CLAIM, monkeypatch, engine) is None
    assert engine_calls(tmp_path / "engine") == []
    verdict = bound_run.hooks_state()["verdicts"]["id-rc"]
    assert (verdict["valid"], verdict["status"], verdict["issues"]) == (None, "failed", None)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (None, []),
        ("plain", ["- plain"]),
        (
            {
                "code": "SCHEMA_VIOLATION",
                "message": "2 violations",
                "violations": [{"loc": "$.a", "message": "x"}, "loose", {"message": {"k": 1}}],
                "missing_fields": ["agent", "status"],
                "parse_error": "Expecting value",
            },
            [
                "- SCHEMA_VIOLATION: 2 violations",
                "- $.a: x",
                "- loose",
                '- {"k":1}',
                "- missing fields: agent, status",
                "- JSON parse error: Expecting value",
            ],
        ),
        ({"message": "no code"}, ["- ERROR: no code"]),
    ],
)
def test_violation_lines(error: Any, expected: list[str]) -> None:
    assert stop.violation_lines(error) == expected


def test_block_reason_without_details() -> None:
    lines = stop.block_reason("review-fixer", {}, 2).splitlines()
    assert lines[0].startswith("fixloop rejected your final answer (attempt 2 of 3)")
    assert "fixloop:review-fixer" in lines[0]
    assert lines[1:3] == ["Violations:", "- (the engine gave no details)"]


# ---- the tokens of all the agent's turns, from its transcript ------------------------------------------

INVALID_ANSWER = {
    **recorded_answer("code-reviewer"),
    "valid": False,
    "retry": True,
    "error": {"code": "SCHEMA_VIOLATION", "message": "bad"},
}


def response(message_id: str, inp: int, out: int, text: str | None = None) -> str:
    content = [{"type": "text", "text": text}] if text is not None else []
    usage = {"input_tokens": inp, "output_tokens": out}
    message = {"id": message_id, "model": "claude-opus-5-1", "usage": usage, "content": content}
    return json.dumps({"type": "assistant", "message": message}) + "\n"


def stop_with_transcript(
    bound_run: BoundRun, transcript: Path, monkeypatch: pytest.MonkeyPatch, engine: Path
) -> str | None:
    monkeypatch.setenv("FIXLOOP_HOOK_ENGINE", str(engine))
    payload = bound_run.payload(
        "SubagentStop",
        agent_type="fixloop:code-reviewer",
        agent_id="id-cr",
        agent_transcript_path=str(transcript),
        last_assistant_message=CLAIM,
    )
    found = context.find_run(payload)
    assert found is not None
    return stop.handle(payload, found)


def usage_lines(bound_run: BoundRun) -> list[dict[str, Any]]:
    lines = (bound_run.dir / "agents.jsonl").read_text().splitlines()
    return [line for line in map(json.loads, lines) if line["kind"] == "usage"]


def transcript_warnings(bound_run: BoundRun) -> list[dict[str, Any]]:
    return [e for e in bound_run.events("WARNING") if e["code"] == "TRANSCRIPT_USAGE_INCOMPLETE"]


def test_a_contracted_agent_s_turns_are_summed_after_its_verdict(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = tmp_path / "agent.jsonl"
    transcript.write_text(response("m1", 100, 5) + response("m1", 100, 5) + response("m2", 200, 9, CLAIM))
    engine = fake_engine(tmp_path / "engine", [INVALID_ANSWER])
    decision = stop_with_transcript(bound_run, transcript, monkeypatch, engine)
    assert json.loads(decision or "")["decision"] == "block"  # the retry is untouched
    (line,) = usage_lines(bound_run)
    assert (line["agent"], line["agent_id"], line["total_tokens"], line["responses"]) == (
        "code-reviewer",
        "id-cr",
        314,
        2,
    )
    assert line["complete"] is True and transcript_warnings(bound_run) == []


def test_a_final_message_that_never_arrives_is_an_incomplete_count(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fixloop.hookside import transcript_usage

    monkeypatch.setattr(transcript_usage, "FINAL_WAIT_SECONDS", 0.1)
    transcript = tmp_path / "agent.jsonl"
    transcript.write_text(response("m1", 100, 5))
    engine = fake_engine(tmp_path / "engine", [recorded_answer("code-reviewer", 0)])
    assert stop_with_transcript(bound_run, transcript, monkeypatch, engine) is None
    (line,) = usage_lines(bound_run)
    assert (line["total_tokens"], line["complete"]) == (105, False)
    (warning,) = transcript_warnings(bound_run)
    assert warning["message"] == (
        "The tokens of code-reviewer (id-cr) were not all read from its transcript: its final message did "
        "not reach it in time."
    )
    assert warning["impact"].startswith("the run's usage counts only this agent's last model turn")


def test_a_transcript_longer_than_the_bound_is_an_incomplete_count(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fixloop.hookside import transcript_usage

    first = response("m1", 100, 5)
    monkeypatch.setattr(transcript_usage, "MAX_TRANSCRIPT_BYTES", len(first) + 10)
    transcript = tmp_path / "agent.jsonl"
    transcript.write_text(first + response("m2", 200, 9, CLAIM))
    engine = fake_engine(tmp_path / "engine", [recorded_answer("code-reviewer", 0)])
    assert stop_with_transcript(bound_run, transcript, monkeypatch, engine) is None
    (line,) = usage_lines(bound_run)
    assert (line["total_tokens"], line["complete"]) == (105, False)
    (warning,) = transcript_warnings(bound_run)
    assert warning["message"].endswith("its transcript: it is longer than the hook reads.")


def test_reading_the_transcript_fails_open(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fixloop.hookside import transcript_usage

    def broken(path: str) -> None:
        raise MemoryError("no room")

    real = transcript_usage.transcript_usage
    monkeypatch.setattr(transcript_usage, "transcript_usage", broken)
    transcript = tmp_path / "agent.jsonl"
    transcript.write_text(response("m1", 100, 5, CLAIM))
    engine = fake_engine(tmp_path / "engine", [INVALID_ANSWER])
    decision = stop_with_transcript(bound_run, transcript, monkeypatch, engine)
    assert json.loads(decision or "")["decision"] == "block"
    assert usage_lines(bound_run) == []
    (warning,) = transcript_warnings(bound_run)
    assert warning["message"].endswith("its transcript: MemoryError: no room.")
    # Garbled, it is a warning too; missing, it is no line and no warning (the run's usage says so).
    monkeypatch.setattr(transcript_usage, "transcript_usage", real)
    monkeypatch.setattr(transcript_usage, "FINAL_WAIT_SECONDS", 0.1)
    transcript.write_text("{torn\n")
    stop_with_transcript(bound_run, transcript, monkeypatch, engine)
    transcript.unlink()
    stop_with_transcript(bound_run, transcript, monkeypatch, engine)
    assert [w["message"].rsplit(": ", 1)[-1] for w in transcript_warnings(bound_run)] == [
        "no room.",
        "it holds no readable model response.",
    ]
