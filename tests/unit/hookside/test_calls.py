"""The outcome of a finished call: a contracted agent's from its stop's verdict, a coordinator's from its
answer, else from the tool."""

from __future__ import annotations

from typing import Any

import pytest

from fixloop.hookside.calls import outcome, verdict_outcome

REPORT = [{"type": "text", "text": '{"status": "failed", "issues": [{}, {}, {}]}'}]
VALID = {"valid": True, "final": True, "error": None, "status": "partial", "issues": 2}
INVALID = {"valid": False, "final": True, "error": "SCHEMA_VIOLATION", "status": None, "issues": None}
UNRECORDED = {"valid": None, "final": True, "error": "ENGINE_UNAVAILABLE", "status": None, "issues": None}


@pytest.mark.parametrize(
    ("verdict", "tool_status", "expected"),
    [
        (VALID, "completed", ("partial", 2, None)),
        (INVALID, "completed", ("failed", None, "SCHEMA_VIOLATION")),
        ({**INVALID, "error": None}, "completed", ("failed", None, "CONTRACT_VIOLATION")),
        (UNRECORDED, "completed", ("success", None, None)),
        (UNRECORDED, "error", ("failed", None, "error")),
        (None, "completed", ("success", None, None)),
        (None, None, ("success", None, None)),
        (None, "killed", ("failed", None, "killed")),
        ({**VALID, "issues": True}, None, ("partial", None, None)),
    ],
)
def test_verdict_outcome(
    verdict: dict[str, Any] | None, tool_status: object, expected: tuple[Any, ...]
) -> None:
    assert verdict_outcome(verdict, tool_status) == expected


def test_a_contracted_agents_answer_is_never_read_by_the_hook() -> None:
    # The verdict (from the engine) says what the answer holds; the text is not parsed again.
    assert outcome("code-reviewer", "completed", REPORT, VALID) == ("partial", 2, None)
    assert outcome("review-fixer", "completed", REPORT, None) == ("success", None, None)


def test_a_coordinators_status_comes_from_its_answer() -> None:
    assert outcome("coordinator", "completed", REPORT, None) == ("failed", None, None)
    assert outcome("coordinator", "completed", "All done.", None) == ("success", None, None)
    assert outcome("coordinator", "error", "All done.", None) == ("failed", None, "error")
