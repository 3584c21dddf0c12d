"""Subagent calls of a run: AGENT_CALL / AGENT_RESULT and the reviewer group's REVIEW_PARALLEL_START / END.

Durations are measured here from the ledger's own `ts_ms` clock readings (call line -> result), never
taken from Claude Code's payload (kept as `reported_duration_ms`).

The reviewer group lives in hooks-state.json under "review_group": opened by the first reviewer call
when none is open, one member per tool_use_id, closed (REVIEW_PARALLEL_END) when its last member
returns. A finished group is kept as "last_review_group".
"""

from __future__ import annotations

import hooklib

from fixloop.core import agent_names
from fixloop.store import ledger

TYPE_CHECKING = False  # every subagent call runs this module: typing is not loaded at run time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from hooklib import RunContext

INPUT_SUMMARY_CHARS = 200
ERROR_MESSAGE_CHARS = 500


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def record_call(context: RunContext, payload: Mapping[str, Any], agent_type: str, agent: str) -> None:
    """PreToolUse of a fixloop subagent."""
    tool_input = payload.get("tool_input")
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    tool_use_id = payload.get("tool_use_id")
    background = tool_input.get("run_in_background")
    ts = hooklib.now_ms()
    ledger.append(
        context.run_dir,
        {
            "kind": "call",
            "ts_ms": ts,
            "agent_type": agent_type,
            "agent": agent,
            "tool_use_id": tool_use_id,
            "parent_agent_id": payload.get("agent_id"),
            "background": background if isinstance(background, bool) else None,
        },
    )
    phase = hooklib.current_phase(context.state)
    if agent in agent_names.REVIEWER_AGENTS and isinstance(tool_use_id, str) and tool_use_id:
        _join_review_group(context, tool_use_id, agent, ts, phase)
    summary = tool_input.get("description")
    if not isinstance(summary, str) or not summary.strip():
        summary = tool_input.get("prompt")
    context.emit(
        "I",
        "AGENT_CALL",
        phase=phase,
        agent=agent,
        model=hooklib.agent_model(agent, tool_input),
        input_summary=summary.strip()[:INPUT_SUMMARY_CHARS] if isinstance(summary, str) else None,
        tool_use_id=tool_use_id,
    )


def _join_review_group(context: RunContext, tool_use_id: str, agent: str, ts: int, phase: str | None) -> None:
    opened: dict[str, Any] = {}
    stale: dict[str, Any] = {}

    def join(state: dict[str, Any]) -> None:
        group = state.get("review_group")
        round_number = hooklib.review_round(context.state)
        if isinstance(group, dict) and isinstance(group.get("members"), dict):
            members = group["members"].values()
            again = any(isinstance(m, dict) and m.get("agent") == agent for m in members)
            other_round = round_number is not None and group.get("iteration") != round_number
            if again or other_round:
                # A new dispatch while the last group still waits for a result that never came (its
                # PostToolUse hook did not run): close that group with what it has.
                stale.update(_close_group(state, group, ts))
                group = None
        if not isinstance(group, dict) or not isinstance(group.get("members"), dict):
            previous = state.get("last_review_group")
            previous_iteration = _int(previous.get("iteration")) if isinstance(previous, dict) else None
            iteration = round_number or (previous_iteration or 0) + 1
            group = {"iteration": iteration, "started_ms": ts, "phase": phase, "members": {}}
            state["review_group"] = group
            opened["iteration"] = iteration
        group["members"][tool_use_id] = {"agent": agent, "call_ms": ts, "done": False}

    ledger.update_hooks_state(context.run_dir, join)
    if stale:
        context.emit("W", "REVIEW_PARALLEL_END", **stale)
    if opened:
        context.emit(
            "I",
            "REVIEW_PARALLEL_START",
            phase=phase,
            iteration=opened["iteration"],
            agents=list(agent_names.REVIEWER_AGENTS),
        )


def _close_group(state: dict[str, Any], group: dict[str, Any], ts: int) -> dict[str, Any]:
    """The REVIEW_PARALLEL_END fields of `group`, which becomes the last group; a member that never
    returned counts as failed (NO_RESULT)."""
    members: dict[str, Any] = group["members"]
    results: list[dict[str, Any]] = []
    for item in sorted(members.values(), key=lambda m: _int(m.get("call_ms")) or 0):
        done = bool(item.get("done"))
        result: dict[str, Any] = {
            "agent": item.get("agent"),
            "status": item.get("status") if done else "failed",
            "issues": (item.get("issues") or 0) if done else 0,
            "duration_ms": item.get("duration_ms") if done else None,
        }
        error = item.get("error") if done else "NO_RESULT"
        if error:
            result["error"] = error
        results.append(result)
    ends = [_int(m.get("end_ms")) for m in members.values() if m.get("done")]
    last_end = max((end for end in ends if end is not None), default=ts)
    group["closed_ms"] = ts
    state["last_review_group"] = group
    state.pop("review_group", None)
    return {
        "phase": group.get("phase"),
        "iteration": group.get("iteration"),
        "results": results,
        "total_issues": sum(r["issues"] for r in results if r["status"] != "failed"),
        "duration_ms": max(0, last_end - (_int(group.get("started_ms")) or last_end)),
    }


def outcome(
    agent: str, tool_status: object, report_text: str, verdict: Mapping[str, Any] | None
) -> tuple[str, int | None, str | None]:
    """(status, issues, error code) of a finished call.

    A contract verdict recorded at SubagentStop wins: an invalid final answer is a failure. Otherwise the
    agent's own `status` when its answer parses, else what the tool reported (completed -> success).
    """
    report = hooklib.parse_report(report_text) if report_text else None
    issues = hooklib.issues_count(report) if agent in agent_names.REVIEWER_AGENTS else None
    if verdict is not None and verdict.get("valid") is False:
        error = verdict.get("error")
        return "failed", issues, error if isinstance(error, str) else "CONTRACT_VIOLATION"
    status = hooklib.report_status(report)
    if status is not None:
        return status, issues, None
    if tool_status in (None, "completed", "success"):
        return "success", issues, None
    return "failed", issues, str(tool_status)


def verdict_for(context: RunContext, agent_id: object) -> dict[str, Any] | None:
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
) -> None:
    """Write the `result` ledger line and AGENT_RESULT; close the reviewer group member."""
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
            "duration_ms": duration,
            "reported_duration_ms": reported,
        },
    )
    phase = hooklib.current_phase(context.state)
    fields: dict[str, Any] = {
        "phase": phase,
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
    context.emit("I" if status != "failed" else "E", "AGENT_RESULT", **fields)
    if agent in agent_names.REVIEWER_AGENTS and isinstance(tool_use_id, str) and tool_use_id:
        _leave_review_group(context, tool_use_id, status, issues, error, duration, ts)


def _leave_review_group(
    context: RunContext,
    tool_use_id: str,
    status: str,
    issues: int | None,
    error: str | None,
    duration: int,
    ts: int,
) -> None:
    closed: dict[str, Any] = {}

    def leave(state: dict[str, Any]) -> None:
        group = state.get("review_group")
        if not isinstance(group, dict) or not isinstance(group.get("members"), dict):
            return
        members: dict[str, Any] = group["members"]
        member = members.get(tool_use_id)
        if not isinstance(member, dict) or member.get("done"):
            return
        member.update(done=True, status=status, issues=issues, error=error, duration_ms=duration, end_ms=ts)
        if all(isinstance(m, dict) and m.get("done") for m in members.values()):
            closed.update(_close_group(state, group, ts))

    ledger.update_hooks_state(context.run_dir, leave)
    if closed:
        context.emit("I", "REVIEW_PARALLEL_END", **closed)


def outcome_from_verdict(verdict: Mapping[str, Any] | None) -> tuple[str, int | None, str | None]:
    """(status, issues, error code) of a call closed at its SubagentStop, from what that hook stored."""
    if verdict is None:
        return "success", None, None
    issues = _int(verdict.get("issues"))
    if verdict.get("valid") is False:
        error = verdict.get("error")
        return "failed", issues, error if isinstance(error, str) else "CONTRACT_VIOLATION"
    status = verdict.get("status")
    return (status if isinstance(status, str) else "success"), issues, None


def close_background(
    context: RunContext, stop: Mapping[str, Any], tool_use_id: object, call: Mapping[str, Any] | None
) -> None:
    """Finish a background call at its subagent's stop (the `stop` ledger line's time)."""
    records = ledger.read(context.run_dir)
    if ledger.find_result(records, tool_use_id) is not None:
        return
    agent_id = stop.get("agent_id")
    status, issues, error = outcome_from_verdict(verdict_for(context, agent_id))
    agent = stop.get("agent")
    agent_type = stop.get("agent_type")
    ts = _int(stop.get("ts_ms"))
    calls_call = call if call is not None else ledger.find_call(records, tool_use_id)
    record_result(
        context,
        agent_type=str(agent_type),
        agent=str(agent),
        tool_use_id=tool_use_id,
        agent_id=agent_id,
        call=calls_call,
        status=status,
        issues=issues,
        error=error,
        reported_duration_ms=None,
        ts=ts if ts is not None else hooklib.now_ms(),
    )
