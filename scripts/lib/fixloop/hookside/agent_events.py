"""PreToolUse / PostToolUse / PostToolUseFailure (Agent|Task) and SubagentStart: the record of subagent calls.

For a fixloop subagent (`subagent_type` `fixloop:<name>`) in a session that has a running fixloop run,
appends to the run's ledger (runs/<id>/agents.jsonl) and writes AGENT_CALL, AGENT_RESULT and
REVIEW_PARALLEL_START/END to the run's log. Anything else: nothing. These hooks never print.
"""

from __future__ import annotations

from fixloop.hookside.context import now_ms
from fixloop.hookside.payload import agent_of_tool, subagent_of
from fixloop.store import ledger

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fixloop.hookside.context import RunContext

# fixloop.hookside.calls is imported by the handlers: a payload of no fixloop run never needs it.


def relevant(payload: dict[str, Any]) -> bool:
    """Whether the payload concerns a fixloop subagent at all (checked before the run is looked for)."""
    event = payload.get("hook_event_name")
    if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        return agent_of_tool(payload) is not None
    if event == "SubagentStart":
        return subagent_of(payload) is not None
    return False


def pre_tool_use(payload: dict[str, Any], context: RunContext) -> None:
    from fixloop.hookside import calls

    found = agent_of_tool(payload)
    if found is not None:
        calls.record_call(context, payload, *found)


def post_tool_use(payload: dict[str, Any], context: RunContext) -> None:
    from fixloop.hookside import calls

    found = agent_of_tool(payload)
    if found is None:
        return
    agent_type, agent = found
    ts = now_ms()
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
        agent, response.get("status"), response.get("content"), calls.verdict_for(context, agent_id)
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
    from fixloop.hookside import calls

    found = agent_of_tool(payload)
    if found is None:
        return
    agent_type, agent = found
    ts = now_ms()
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
    agent = subagent_of(payload)
    if agent is None:
        return
    ledger.append(
        context.run_dir,
        {
            "kind": "start",
            "ts_ms": now_ms(),
            "agent_type": payload.get("agent_type"),
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
