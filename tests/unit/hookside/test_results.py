"""What the caller reads of a finished agent: one line from the stored verdict, and the usage kept."""

from __future__ import annotations

from typing import Any

import pytest

from fixloop.hookside.results import result_line, usage_of

VALID = {"valid": True, "final": True, "error": None, "status": "success", "issues": None}


@pytest.mark.parametrize(
    ("agent", "verdict", "line"),
    [
        ("code-reviewer", {**VALID, "issues": 3}, "code-reviewer: recorded, 3 issues (run ab12cd34)"),
        ("code-reviewer", {**VALID, "issues": 1}, "code-reviewer: recorded, 1 issue (run ab12cd34)"),
        ("test-analyzer", {**VALID, "issues": 0}, "test-analyzer: recorded, 0 issues (run ab12cd34)"),
        ("review-fixer", VALID, "review-fixer: recorded (run ab12cd34)"),
        (
            "review-verifier",
            {**VALID, "valid": False, "error": "SCHEMA_VIOLATION"},
            "review-verifier: answer refused: SCHEMA_VIOLATION (run ab12cd34)",
        ),
        (
            "review-fixer",
            {**VALID, "valid": False, "error": None},
            "review-fixer: answer refused: CONTRACT_VIOLATION (run ab12cd34)",
        ),
        (
            "review-fixer",
            {**VALID, "valid": None, "error": "UNEXPECTED_AGENT_RESULT"},
            "review-fixer: no answer recorded: UNEXPECTED_AGENT_RESULT (run ab12cd34)",
        ),
        ("code-reviewer", None, "code-reviewer: no answer recorded (run ab12cd34)"),
        ("code-reviewer", {**VALID, "valid": None}, "code-reviewer: no answer recorded (run ab12cd34)"),
    ],
)
def test_result_line(agent: str, verdict: dict[str, Any] | None, line: str) -> None:
    assert result_line(agent, verdict, "ab12cd34") == line


def test_usage_keeps_the_four_token_counts_and_the_totals() -> None:
    response = {
        "status": "completed",
        "resolvedModel": "claude-haiku-4-5",
        "totalTokens": 900,
        "totalToolUseCount": 7,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 20,
            "cache_creation_input_tokens": 30,
            "cache_read_input_tokens": 40,
            "server_tool_use": {"web_search_requests": 1},
            "service_tier": "standard",
        },
    }
    assert usage_of(response) == {
        "usage": {
            "input_tokens": 10,
            "output_tokens": 20,
            "cache_creation_input_tokens": 30,
            "cache_read_input_tokens": 40,
        },
        "total_tokens": 900,
        "model": "claude-haiku-4-5",
        "tool_uses": 7,
    }


@pytest.mark.parametrize(
    "response",
    [
        {},
        {"usage": "lots", "totalTokens": "9", "resolvedModel": "", "totalToolUseCount": True},
        {"usage": {"input_tokens": 1.5, "output_tokens": None, "cache_read_input_tokens": False}},
    ],
)
def test_usage_that_is_not_reported_reads_as_absent(response: dict[str, Any]) -> None:
    assert usage_of(response) == {"usage": {}, "total_tokens": None, "model": None, "tool_uses": None}
