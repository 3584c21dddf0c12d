"""Reading Claude Code's payloads: agents, answers, sessions and models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixloop.hookside import PLUGIN_ROOT, payload
from fixloop.hookside.payload import agent_model, parse_report, report_status, text_of


def test_the_plugin_root_holds_the_hooks_and_the_agents() -> None:
    assert (Path(PLUGIN_ROOT) / "hooks" / "hooks.json").is_file()
    assert (Path(PLUGIN_ROOT) / "agents" / "code-reviewer.md").is_file()


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"tool_name": "Agent", "tool_input": {"subagent_type": "fixloop:code-reviewer"}}, "code-reviewer"),
        ({"tool_name": "Task", "tool_input": {"subagent_type": "fixloop:Review-Fixer "}}, "review-fixer"),
        ({"tool_name": "Agent", "tool_input": {"subagent_type": "general-purpose"}}, None),
        ({"tool_name": "Agent", "tool_input": {"subagent_type": "other:code-reviewer"}}, None),
        ({"tool_name": "Bash", "tool_input": {"subagent_type": "fixloop:code-reviewer"}}, None),
        ({"tool_name": "Agent", "tool_input": "fixloop:code-reviewer"}, None),
    ],
)
def test_agent_of_tool(fields: dict[str, Any], expected: str | None) -> None:
    found = payload.agent_of_tool(fields)
    assert (found[1] if found else None) == expected
    if found:
        assert found[0] == fields["tool_input"]["subagent_type"]


def test_subagent_of() -> None:
    assert payload.subagent_of({"agent_type": "fixloop:review-verifier"}) == "review-verifier"
    assert payload.subagent_of({"agent_type": "general-purpose"}) is None
    assert payload.subagent_of({}) is None


def test_the_session_comes_from_the_payload_else_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "from-env")
    assert payload.session_of({"session_id": "abc"}) == "abc"
    assert payload.session_of({"session_id": ""}) == "from-env"
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID")
    assert payload.session_of({}) is None


def test_text_of_a_tool_response() -> None:
    assert text_of("plain") == "plain"
    assert (
        text_of([{"type": "text", "text": "a"}, {"type": "image"}, "x", {"type": "text", "text": "b"}])
        == "a\nb"
    )
    assert text_of(None) == ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"status": "success"}', {"status": "success"}),
        ('```json\n{"status": "failed"}\n```', {"status": "failed"}),
        ('Done. {"status": "partial", "n": 1} Bye.', {"status": "partial", "n": 1}),
        ("no json here", None),
        ("[1, 2]", None),
        ("{broken", None),
    ],
)
def test_parse_report(text: str, expected: dict[str, Any] | None) -> None:
    assert parse_report(text) == expected


def test_report_status_keeps_only_known_statuses() -> None:
    assert report_status('{"status": "partial"}') == "partial"
    assert report_status('{"status": "great"}') is None
    assert report_status("") is None


def frontmatter_model(agent: str) -> str:
    head = (Path(PLUGIN_ROOT) / "agents" / f"{agent}.md").read_text().split("---")[1]
    (line,) = [line for line in head.splitlines() if line.startswith("model:")]
    return line.split(":", 1)[1].strip().strip("\"'")


def test_agent_model_from_the_input_else_the_frontmatter() -> None:
    assert agent_model("code-reviewer", {"model": "haiku"}) == "haiku"
    assert agent_model("code-reviewer", {}) == frontmatter_model("code-reviewer")
    assert agent_model("no-such-agent", {}) is None
    assert agent_model("../../README", {}) is None  # a name, never a path
