"""PreToolUse / PostToolUse / PostToolUseFailure (Agent|Task) and SubagentStart: the record of subagent calls.

Reads Claude Code's hook payload on stdin. For a fixloop subagent (`subagent_type` `fixloop:<name>`) in a
session that has a running fixloop run, it appends to the run's ledger (runs/<id>/agents.jsonl) and writes
AGENT_CALL, AGENT_RESULT and REVIEW_PARALLEL_START/END to the run's log. Anything else: nothing.
Never blocks, never prints, always exits 0; a failure leaves a WARNING event.
"""

from __future__ import annotations

import sys

import hooklib

from fixloop.core import agent_names
from fixloop.store import ledger

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from hooklib import RunContext


def _agent_of_tool(payload: Mapping[str, Any]) -> tuple[str, str] | None:
    if payload.get("tool_name") not in hooklib.SUBAGENT_TOOLS:
        return None
    tool_input = payload.get("tool_input")
    agent_type = tool_input.get("subagent_type") if isinstance(tool_input, dict) else None
    agent = agent_names.agent_name(agent_type, plugin_only=True)
    return (str(agent_type), agent) if agent is not None else None


def relevant(payload: dict[str, Any]) -> bool:
    """Whether the payload concerns a fixloop subagent at all (checked before anything is loaded)."""
    event = payload.get("hook_event_name")
    if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        return _agent_of_tool(payload) is not None
    if event == "SubagentStart":
        return agent_names.agent_name(payload.get("agent_type"), plugin_only=True) is not None
    return False


def pre_tool_use(payload: dict[str, Any], context: RunContext) -> None:
    import calls

    found = _agent_of_tool(payload)
    if found is not None:
        calls.record_call(context, payload, *found)


def post_tool_use(payload: dict[str, Any], context: RunContext) -> None:
    import calls

    found = _agent_of_tool(payload)
    if found is None:
        return
    agent_type, agent = found
    ts = hooklib.now_ms()
    tool_use_id = payload.get("tool_use_id")
    response = payload.get("tool_response")
    response = response if isinstance(response, dict) else {"content": response}
    agent_id = response.get("agentId")
    records = ledger.read(context.run_dir)
    call = ledger.find_call(records, tool_use_id)
    if response.get("isAsync") is True or response.get("status") == "async_launched":
        # A background agent: it reports later; SubagentStop closes the call.
        ledger.append(
            context.run_dir,
            {
                "kind": "launch",
                "ts_ms": ts,
                "agent_type": agent_type,
                "agent": agent,
                "tool_use_id": tool_use_id,
                "agent_id": agent_id,
            },
        )
        stops = ledger.stops_of(records, agent_id)
        if stops:  # it already stopped before this hook ran: close it at its stop time
            calls.close_background(context, stops[-1], tool_use_id, call)
        return
    if ledger.find_result(records, tool_use_id) is not None:
        return
    status, issues, error = calls.outcome(
        agent,
        response.get("status"),
        hooklib.text_of(response.get("content")),
        calls.verdict_for(context, agent_id),
    )
    reported = payload.get("duration_ms")
    if reported is None:
        reported = response.get("totalDurationMs")
    calls.record_result(
        context,
        agent_type=agent_type,
        agent=agent,
        tool_use_id=tool_use_id,
        agent_id=agent_id,
        call=call,
        status=status,
        issues=issues,
        error=error,
        reported_duration_ms=reported,
        ts=ts,
    )


def post_tool_use_failure(payload: dict[str, Any], context: RunContext) -> None:
    """The Agent tool failed (unknown agent type, interrupted, ...): no subagent result will come."""
    import calls

    found = _agent_of_tool(payload)
    if found is None:
        return
    agent_type, agent = found
    ts = hooklib.now_ms()
    tool_use_id = payload.get("tool_use_id")
    records = ledger.read(context.run_dir)
    if ledger.find_result(records, tool_use_id) is not None:
        return
    message = payload.get("error")
    calls.record_result(
        context,
        agent_type=agent_type,
        agent=agent,
        tool_use_id=tool_use_id,
        agent_id=None,
        call=ledger.find_call(records, tool_use_id),
        status="failed",
        issues=None,
        error="INTERRUPTED" if payload.get("is_interrupt") is True else "AGENT_TOOL_FAILED",
        reported_duration_ms=payload.get("duration_ms"),
        ts=ts,
        error_message=message if isinstance(message, str) else None,
    )


def subagent_start(payload: dict[str, Any], context: RunContext) -> None:
    agent_type = payload.get("agent_type")
    agent = agent_names.agent_name(agent_type, plugin_only=True)
    if agent is None:
        return
    ledger.append(
        context.run_dir,
        {
            "kind": "start",
            "ts_ms": hooklib.now_ms(),
            "agent_type": agent_type,
            "agent": agent,
            "agent_id": payload.get("agent_id"),
        },
    )


HANDLERS = {
    "PreToolUse": pre_tool_use,
    "PostToolUse": post_tool_use,
    "PostToolUseFailure": post_tool_use_failure,
    "SubagentStart": subagent_start,
}


def handle(payload: dict[str, Any], context: RunContext) -> str | None:
    handler = HANDLERS.get(str(payload.get("hook_event_name")))
    if handler is not None:
        handler(payload, context)
    return None  # these hooks never print: no decision, no context


if __name__ == "__main__":
    sys.exit(hooklib.run(handle, relevant))
