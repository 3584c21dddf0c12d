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
