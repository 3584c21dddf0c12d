"""PreToolUse / PostToolUse / PostToolUseFailure (Agent|Task) and SubagentStart: the record of subagent calls,
and the delivery of the engine's steps to the coordinator and its agents.

For a fixloop subagent (`subagent_type` `fixloop:<name>`) in a session that has a running fixloop run,
appends to the run's ledger (runs/<id>/agents.jsonl) and writes AGENT_CALL, AGENT_RESULT and
REVIEW_PARALLEL_START/END to the run's log. Besides:
- SubagentStart hands the coordinator the engine's next step (`fixloop next`), and an agent of the pending
  dispatch its task;
- PreToolUse holds a call to the pending step (hookside.normalise): refused when the step does not name
  the agent or it was already called, run in the foreground, with the model the step asks for;
- PostToolUse replaces an agent's answer (which the engine already holds) with one line saying what became
  of it, followed by the engine's next step when this result completes the dispatch; PostToolUseFailure
  adds that next step as context.
Anything else: nothing.
"""

from __future__ import annotations

from fixloop.core.agent_names import COORDINATOR_AGENT
from fixloop.hookside import replies
from fixloop.hookside.context import now_ms
from fixloop.hookside.payload import agent_of_tool, subagent_of, tool_input_of
from fixloop.store import ledger

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fixloop.hookside.context import RunContext

# fixloop.hookside.calls and .dispatch are imported by the handlers: a payload of no fixloop run never
# needs them.


def relevant(payload: dict[str, Any]) -> bool:
    """Whether the payload concerns a fixloop subagent at all (checked before the run is looked for)."""
    event = payload.get("hook_event_name")
    if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        return agent_of_tool(payload) is not None
    if event == "SubagentStart":
        return subagent_of(payload) is not None
    return False


def pre_tool_use(payload: dict[str, Any], context: RunContext) -> str | None:
    from fixloop.hookside import calls, normalise

    found = agent_of_tool(payload)
    if found is None:
        return None
    agent_type, agent = found
    reason = normalise.refusal(context, agent, ledger.read(context.run_dir))
    if reason is not None:
        normalise.note_refusal(context, payload, agent, reason, now_ms())
        return replies.denied(reason)
    tool_input = tool_input_of(payload)
    changed = normalise.normalised_input(context, agent, tool_input)
    calls.record_call(context, payload, agent_type, agent, changed or tool_input)
    return replies.updated_input(changed) if changed is not None else None


def post_tool_use(payload: dict[str, Any], context: RunContext) -> str | None:
    from fixloop.hookside import calls, results

    found = agent_of_tool(payload)
    if found is None:
        return None
    agent_type, agent = found
    ts = now_ms()
    tool_use_id = payload.get("tool_use_id")
    given = payload.get("tool_response")
    response = given if isinstance(given, dict) else {"content": given}
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
        return None
    if ledger.find_result(records, tool_use_id) is not None:
        return None
    verdict = calls.verdict_for(context, agent_id)
    status, issues, error = calls.outcome(agent, response.get("status"), response.get("content"), verdict)
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
        usage=results.usage_of(response),
    )
    if agent == COORDINATOR_AGENT:
        return None  # the coordinator's final message is for whoever called it
    from fixloop.hookside import dispatch

    text = results.result_line(agent, verdict, context.run_id)
    following = dispatch.next_if_complete(context, "PostToolUse")
    if following is not None:
        text = f"{text}\n\n{following}"
    if isinstance(given, dict):
        return replies.updated_tool_output(given, text)
    return replies.additional_context("PostToolUse", text)  # nothing to rewrite: the line comes beside it


def post_tool_use_failure(payload: dict[str, Any], context: RunContext) -> str | None:
    """The Agent tool failed (unknown agent type, interrupted, ...): no subagent result will come. It
    counts toward the dispatch all the same; the next step comes as context (this hook cannot rewrite)."""
    from fixloop.hookside import calls, dispatch

    found = agent_of_tool(payload)
    if found is None:
        return None
    agent_type, agent = found
    ts = now_ms()
    tool_use_id = payload.get("tool_use_id")
    records = ledger.read(context.run_dir)
    if ledger.find_result(records, tool_use_id) is not None or ledger.find_refused(records, tool_use_id):
        return None  # already counted, or refused before it ran (PreToolUse): no agent result either way
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
    following = dispatch.next_if_complete(context, "PostToolUseFailure")
    return replies.additional_context("PostToolUseFailure", following) if following is not None else None


def subagent_start(payload: dict[str, Any], context: RunContext) -> str | None:
    agent = subagent_of(payload)
    if agent is None:
        return None
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
    if agent == COORDINATOR_AGENT:
        from fixloop.hookside import engine

        return replies.additional_context("SubagentStart", engine.next_step(context, "SubagentStart"))
    from fixloop.hookside import dispatch

    task = dispatch.task_text(context, agent)
    return replies.additional_context("SubagentStart", task) if task is not None else None


HANDLERS = {
    "PreToolUse": pre_tool_use,
    "PostToolUse": post_tool_use,
    "PostToolUseFailure": post_tool_use_failure,
    "SubagentStart": subagent_start,
}


def handle(payload: dict[str, Any], context: RunContext) -> str | None:
    handler = HANDLERS.get(str(payload.get("hook_event_name")))
    return handler(payload, context) if handler is not None else None
