"""Asking the user, choosing, and rolling back."""

from __future__ import annotations

import pytest
from helpers_review import (
    CR,
    A,
    Loop,
    Round,
    Script,
    all_fixed,
    drive,
    make_state,
    only,
)

from fixloop.core.errors import FixloopError


def test_rollback_after_failed_verification_restores_the_round_snapshot() -> None:
    loop, _labels, final = drive(Script([Round(only(A), verify=False, choice="rollback")]))
    assert loop.effects.rollbacks == ["snap-1"]
    first = loop.review_doc["rounds"][0]
    assert first["rolled_back"] is True
    assert first["rollback_files"] == ["src/app.py"]
    assert final["status"] == "partial"
    answers = [fields for fields in loop.of_type("USER_INTERACTION") if "user_response" in fields]
    assert answers == [
        {
            "context": "review_verification_failed",
            "user_response": "rollback",
            "wait_duration_ms": 1000,
            "default": False,
            "iteration": 1,
        }
    ]


@pytest.mark.parametrize(
    ("configured", "context_round", "expected"),
    [
        ("rollback", "post_fix", "rollback"),
        ("continue", "post_fix", "continue"),
        ("manual", "post_fix", "manual"),
        ("rollback", "initial", "manual"),  # nothing to roll back before a fix
        ("continue", "initial", "continue"),
    ],
)
def test_default_choice_applies_on_verification_failure(
    configured: str, context_round: str, expected: str
) -> None:
    loop = Loop(make_state(use_verifier=False, on_verification_failure=configured))
    loop.next()
    if context_round == "initial":
        loop.verify(False)
    else:
        loop.verify(True)
        loop.next()
        loop.review({CR: [A]})
    asked = loop.next()
    if context_round == "post_fix":
        assert asked["action"] == "fix"
        loop.record("review-fixer", all_fixed(["FL-001"]))
        assert loop.next()["action"] == "verify"
        loop.verify(False)
        asked = loop.next()
    assert asked["action"] == "ask_user"
    assert asked["default"] == expected
    answer = loop.choose(None, default=True)
    assert (answer["choice"], answer["default"]) == (expected, True)


def test_choose_validates_the_choice() -> None:
    loop = Loop(make_state())
    with pytest.raises(FixloopError) as no_question:
        loop.choose("continue")
    assert no_question.value.code == "NO_PENDING_QUESTION"
    loop.next()
    loop.verify(False)
    asked = loop.next()
    assert [item["label"] for item in asked["options"]] == ["continue", "manual", "cancel"]
    with pytest.raises(FixloopError) as bad:
        loop.choose("retry")
    assert bad.value.code == "INVALID_CHOICE"
    assert bad.value.details["valid_values"] == ["continue", "manual", "cancel"]
    with pytest.raises(FixloopError) as conflicting:
        loop.choose("continue", default=True)  # the default here is manual
    assert conflicting.value.code == "INVALID_CHOICE"
    answer = loop.choose("rollback")  # before any fix, rollback means manual
    assert answer["choice"] == "manual"
    assert loop.next()["termination_reason"] == "verification_failed"


def test_ask_user_is_asked_once_and_repeated_until_answered() -> None:
    loop = Loop(make_state())
    loop.next()
    loop.verify(False)
    first = loop.next()
    second = loop.next()
    assert first == second
    asks = [fields for fields in loop.of_type("USER_INTERACTION") if "question" in fields]
    assert len(asks) == 1
    assert asks[0]["context"] == "initial_verification_failed"
    assert "tests failed (exit code 1)" in asks[0]["question"]
