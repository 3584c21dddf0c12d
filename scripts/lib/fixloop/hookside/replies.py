"""What a hook answers Claude Code: one JSON object on stdout (hookSpecificOutput)."""

from __future__ import annotations

from fixloop.core import jsoncodec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def _answer(event: str, **fields: Any) -> str:
    return (
        jsoncodec.dumps({"hookSpecificOutput": {"hookEventName": event, **fields}}, ensure_ascii=False) + "\n"
    )


def additional_context(event: str, text: str) -> str:
    """Text added to what the model reads next (SubagentStart: the subagent's first request)."""
    return _answer(event, additionalContext=text)


def updated_tool_output(response: Mapping[str, Any], text: str) -> str:
    """PostToolUse of the Agent tool: the model sees `text` instead of the agent's answer. Claude Code takes
    only the payload's own tool_response with nothing changed but its content."""
    return _answer("PostToolUse", updatedToolOutput={**response, "content": [{"type": "text", "text": text}]})


def updated_input(tool_input: Mapping[str, Any]) -> str:
    """PreToolUse: the whole tool input the call goes on with (no permission decision)."""
    return _answer("PreToolUse", updatedInput=dict(tool_input))


def denied(reason: str) -> str:
    """PreToolUse: the call does not run; the model reads `reason` as the tool's error."""
    return _answer("PreToolUse", permissionDecision="deny", permissionDecisionReason=reason)
