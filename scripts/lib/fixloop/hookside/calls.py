"""Subagent calls of a run: the ledger's `call` and `result` lines, AGENT_CALL and AGENT_RESULT.

Durations are measured here from the ledger's own `ts_ms` clock readings (call line -> result), never
taken from Claude Code's payload (kept as `reported_duration_ms`).

What a call's outcome is: for an agent with a contract (every fixloop agent but the coordinator), the
verdict SubagentStop stored from the engine's answer to `fixloop record`; for the coordinator, the
`status` its answer claims; else what the tool reported.
"""

from __future__ import annotations

from fixloop.core import agent_names
from fixloop.hookside import payload as payloads
from fixloop.hookside.context import now_ms
from fixloop.store import ledger

TYPE_CHECKING = False  # every subagent call runs this module: typing is not loaded at run time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fixloop.hookside.context import RunContext

    Outcome = tuple[str, int | None, str | None]  # status, issues, error code

INPUT_SUMMARY_CHARS = 200
ERROR_MESSAGE_CHARS = 500


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def record_call(
    context: RunContext,
    payload: Mapping[str, Any],
    agent_type: str,
    agent: str,
    tool_input: Mapping[str, Any] | None = None,
) -> None:
    """PreToolUse of a fixloop subagent; `tool_input` is what the call goes on with (default: the
    payload's)."""
    tool_input = tool_input if tool_input is not None else payloads.tool_input_of(payload)
    tool_use_id = payload.get("tool_use_id")
    background = tool_input.get("run_in_background")
    ts = now_ms()
    line = {
        "kind": "call",
        "ts_ms": ts,
        "agent_type": agent_type,
        "agent": agent,
        "tool_use_id": tool_use_id,
        "parent_agent_id": payload.get("agent_id"),
        "background": background if isinstance(background, bool) else None,
    }
    dispatch = context.view.dispatch
    if dispatch is not None and not dispatch.closed:
        line["step"] = dispatch.id
    ledger.append(context.run_dir, line)
    phase = context.view.phase
    if agent in agent_names.REVIEWER_AGENTS and isinstance(tool_use_id, str) and tool_use_id:
        from fixloop.hookside import review_group  # reviewers only

        review_group.join(context, tool_use_id, agent, ts, phase)
    summary = tool_input.get("description")
    if not isinstance(summary, str) or not summary.strip():
        summary = tool_input.get("prompt")
    context.emit(
        "I",
        "AGENT_CALL",
        phase=phase,
        agent=agent,
        model=payloads.agent_model(agent, tool_input),
        input_summary=summary.strip()[:INPUT_SUMMARY_CHARS] if isinstance(summary, str) else None,
        tool_use_id=tool_use_id,
    )


def _tool_outcome(tool_status: object, issues: int | None = None) -> Outcome:
    if tool_status in (None, "completed", "success"):
        return "success", issues, None
    return "failed", issues, str(tool_status)


def verdict_outcome(verdict: Mapping[str, Any] | None, tool_status: object = None) -> Outcome:
    """The outcome of a call whose agent's stop left `verdict`: an invalid final answer is a failure; else
    the agent's own status as the engine read it; else what the tool reported (none: success)."""
    if verdict is None:
        return _tool_outcome(tool_status)
    issues = _int(verdict.get("issues"))
    if verdict.get("valid") is False:
        error = verdict.get("error")
        return "failed", issues, error if isinstance(error, str) else "CONTRACT_VIOLATION"
    status = verdict.get("status")
    if isinstance(status, str):
        return status, issues, None
    return _tool_outcome(tool_status, issues)


def outcome(agent: str, tool_status: object, content: object, verdict: Mapping[str, Any] | None) -> Outcome:
    """(status, issues, error code) of a finished foreground call; `content` is the tool response's."""
    if agent != agent_names.COORDINATOR_AGENT:
        return verdict_outcome(verdict, tool_status)
    status = payloads.report_status(payloads.text_of(content))
    return (status, None, None) if status is not None else _tool_outcome(tool_status)


def verdict_for(context: RunContext, agent_id: object) -> dict[str, Any] | None:
    """What SubagentStop stored of the agent's final answer (hooks-state.json "verdicts")."""
    if not isinstance(agent_id, str) or not agent_id:
        return None
    verdicts = ledger.read_hooks_state(context.run_dir).get("verdicts")
    verdict = verdicts.get(agent_id) if isinstance(verdicts, dict) else None
    return verdict if isinstance(verdict, dict) else None


def record_result(
    context: RunContext,
    *,
    agent_type: str,
    agent: str,
    tool_use_id: object,
    agent_id: object,
    call: Mapping[str, Any] | None,
    status: str,
    issues: int | None,
    error: str | None,
    reported_duration_ms: object,
    ts: int,
    error_message: str | None = None,
    usage: Mapping[str, Any] | None = None,
) -> None:
    """Write the `result` ledger line and AGENT_RESULT; close the reviewer group member. `usage`
    (hookside.results.usage_of) goes into the line as it is, and under `usage` into AGENT_RESULT."""
    call_ms = _int(call.get("ts_ms")) if call is not None else None
    reported = _int(reported_duration_ms)
    if call_ms is not None:
        duration, source = max(0, ts - call_ms), "measured"
    else:  # the call was never seen (its PreToolUse hook failed): the best there is
        duration, source = (reported if reported is not None else 0), "reported"
    ledger.append(
        context.run_dir,
        {
            "kind": "result",
            "ts_ms": ts,
            "agent_type": agent_type,
            "agent": agent,
            "tool_use_id": tool_use_id,
            "agent_id": agent_id,
            "status": status,
            "error": error,
            "duration_ms": duration,
            "reported_duration_ms": reported,
            **(usage or {}),
        },
    )
    fields: dict[str, Any] = {
        "phase": context.view.phase,
        "agent": agent,
        "status": status,
        "duration_ms": duration,
        "reported_duration_ms": reported,
        "duration_source": source,
        "tool_use_id": tool_use_id,
        "agent_id": agent_id,
    }
    if issues is not None:
        fields["output_summary"] = {"issues": issues}
    if error is not None:
        fields["error"] = error
    if error_message:
        fields["error_message"] = error_message[:ERROR_MESSAGE_CHARS]
    if usage is not None:
        fields["usage"] = {**(usage.get("usage") or {}), **{k: v for k, v in usage.items() if k != "usage"}}
    context.emit("I" if status != "failed" else "E", "AGENT_RESULT", **fields)
    if agent in agent_names.REVIEWER_AGENTS and isinstance(tool_use_id, str) and tool_use_id:
        from fixloop.hookside import review_group  # reviewers only

        review_group.leave(context, tool_use_id, status, issues, error, duration, ts)


def close_background(
    context: RunContext, stop: Mapping[str, Any], tool_use_id: object, call: Mapping[str, Any] | None
) -> None:
    """Finish a background call at its subagent's stop (the `stop` ledger line's time)."""
    records = ledger.read(context.run_dir)
    if ledger.find_result(records, tool_use_id) is not None:
        return
    agent_id = stop.get("agent_id")
    status, issues, error = verdict_outcome(verdict_for(context, agent_id))
    ts = _int(stop.get("ts_ms"))
    record_result(
        context,
        agent_type=str(stop.get("agent_type")),
        agent=str(stop.get("agent")),
        tool_use_id=tool_use_id,
        agent_id=agent_id,
        call=call if call is not None else ledger.find_call(records, tool_use_id),
        status=status,
        issues=issues,
        error=error,
        reported_duration_ms=None,
        ts=ts if ts is not None else now_ms(),
    )
