"""Recording agent answers: attempts, retries, replacement, refusals."""

from __future__ import annotations

import pytest
from helpers_review import (
    CR,
    SFH,
    A,
    B,
    Loop,
    failed_reviewer_doc,
    make_state,
    open_review,
    reviewer_doc,
)

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.core.errors import FixloopError

INVALID = {
    "code": "SCHEMA_VIOLATION",
    "message": "1 violation",
    "violations": [{"path": "$.issues[0].confidence", "message": "must be <= 100"}],
    "hint": "Fix $.issues[0].confidence.",
}


def test_record_answer_fields() -> None:
    loop = open_review()
    answer = loop.record(CR, reviewer_doc(CR, [A]))
    assert answer == {
        "status": "recorded",
        "agent": CR,
        "round": 1,
        "valid": True,
        "retry": False,
        "attempt": 1,
        "error": None,
        "hint": None,
        "agent_status": "success",
        "issues_count": 1,
    }
    invalid = loop.record(CR, None, INVALID)
    assert (invalid["valid"], invalid["agent_status"], invalid["issues_count"]) == (False, None, None)
    failed = open_review().record(CR, failed_reviewer_doc(CR))
    assert (failed["agent_status"], failed["issues_count"]) == ("failed", 0)


def test_three_invalid_attempts_stop_retrying_with_a_contract_violation() -> None:
    loop = open_review()
    answers = [loop.record(CR, None, INVALID) for _ in range(4)]
    assert [(item["attempt"], item["retry"], item["valid"]) for item in answers] == [
        (1, True, False),
        (2, True, False),
        (3, False, False),
        (4, False, False),
    ]
    assert answers[0]["hint"] == "Fix $.issues[0].confidence."
    assert answers[0]["error"]["code"] == "SCHEMA_VIOLATION"
    violations = [(level, fields) for level, kind, fields in loop.events if kind == "CONTRACT_VIOLATION"]
    assert violations == [
        (
            "E",
            {
                "agent": CR,
                "error_code": "SCHEMA_VIOLATION",
                "attempts": 3,
                "violations": INVALID["violations"],
                "iteration": 1,
            },
        )
    ]
    for agent in REVIEWER_AGENTS[1:]:
        loop.record(agent, reviewer_doc(agent))
    loop.next()
    result = loop.review_doc["rounds"][0]["agents_results"][0]
    assert result["status"] == "failed"
    assert result["error"]["code"] == "SCHEMA_VIOLATION"
    assert result["error"]["phase"] == "parsing"


def test_same_agent_same_round_replaces_and_invalid_never_replaces_valid() -> None:
    loop = open_review()
    loop.record(CR, None, INVALID)
    loop.record(CR, reviewer_doc(CR, [A]))
    loop.record(CR, reviewer_doc(CR, [A, B]))  # replaces
    late = loop.record(CR, None, INVALID)  # does not replace
    assert (late["attempt"], late["valid"], late["retry"]) == (4, False, False)
    assert "earlier valid answer" in (late["hint"] or "")
    for agent in REVIEWER_AGENTS[1:]:
        loop.record(agent, reviewer_doc(agent))
    doc = loop.next()
    assert [item["id"] for item in doc["issues"]] == ["FL-001", "FL-002"]


def test_agent_mismatch_is_an_invalid_attempt() -> None:
    loop = open_review()
    answer = loop.record(CR, reviewer_doc(SFH, [A]))
    assert answer["valid"] is False
    assert answer["error"]["code"] == "AGENT_MISMATCH"
    assert answer["retry"] is True


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        ("review-fixer", "not waiting for the fixer"),
        ("review-verifier", "not waiting for the verifier"),
    ],
)
def test_results_nobody_waits_for_are_refused(agent: str, expected: str) -> None:
    loop = open_review()
    with pytest.raises(FixloopError) as refused:
        loop.record(agent, {"agent": agent})
    assert refused.value.code == "UNEXPECTED_AGENT_RESULT"
    assert expected in refused.value.message


def test_reviewer_result_before_any_request_is_refused() -> None:
    loop = Loop(make_state())
    with pytest.raises(FixloopError) as refused:
        loop.record(CR, reviewer_doc(CR))
    assert refused.value.code == "UNEXPECTED_AGENT_RESULT"
    with pytest.raises(FixloopError) as unknown:
        loop.record("linter", reviewer_doc(CR))
    assert unknown.value.code == "UNKNOWN_AGENT"
