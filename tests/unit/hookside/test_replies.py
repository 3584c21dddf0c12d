"""The JSON a hook answers Claude Code with."""

from __future__ import annotations

import json

from fixloop.hookside import replies


def test_additional_context() -> None:
    assert json.loads(replies.additional_context("SubagentStart", "Your task: é")) == {
        "hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "Your task: é"}
    }
    assert replies.additional_context("SubagentStart", "é").endswith('é"}}\n')  # UTF-8, not \u escapes


def test_updated_tool_output_replaces_only_the_content() -> None:
    response = {"status": "completed", "agentId": "a1", "content": [{"type": "text", "text": "long"}], "x": 1}
    assert json.loads(replies.updated_tool_output(response, "short")) == {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "updatedToolOutput": {
                "status": "completed",
                "agentId": "a1",
                "content": [{"type": "text", "text": "short"}],
                "x": 1,
            },
        }
    }
    assert response["content"] == [{"type": "text", "text": "long"}]  # the payload is left as it was


def test_updated_input_is_the_whole_input() -> None:
    tool_input = {"subagent_type": "fixloop:code-reviewer", "prompt": "p", "model": "haiku"}
    assert json.loads(replies.updated_input(tool_input)) == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": tool_input}
    }
