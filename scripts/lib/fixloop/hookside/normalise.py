"""PreToolUse of a fixloop agent call: the call as the engine's step wants it, or refused with the reason.

- While the engine waits on a step, a call of an agent the step does not name, or of one already called in
  it (answered, or still running), is refused: the model is told why, nothing of it is recorded, and the
  step's counts stay true. A call whose earlier try failed in the tool itself (unknown agent type,
  interrupted) may be made again.
- A background launch (`run_in_background: true`) runs in the foreground instead: its answer then comes
  back to the coordinator with the next step, instead of reaching the user's main thread unasked.
- The model the step asks for is set.
"""

from __future__ import annotations

from fixloop.core.agent_names import COORDINATOR_AGENT
from fixloop.store import ledger

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from fixloop.hookside.context import RunContext
    from fixloop.store.runview import DispatchView

TOOL_FAILURES = ("AGENT_TOOL_FAILED", "INTERRUPTED")  # the call never ran: it may be made again


def refusal(context: RunContext, agent: str, records: Iterable[Mapping[str, Any]]) -> str | None:
    """Why a call of `agent` must not run now (None: it may)."""
    if agent == COORDINATOR_AGENT:
        return None
    from fixloop.hookside import dispatch as dispatches

    pending = dispatches.pending(context.view)
    if pending is None:
        return None  # a run the engine does not dispatch (its answers recorded by hand): nothing to hold to
    step = f"step {pending.id}"
    if all(name != agent for name, _type, _model in pending.calls):
        wanted = ", ".join(subagent_type for _name, subagent_type, _model in pending.calls)
        return f"fixloop:{agent} is not part of {step} of run {context.run_id}: call only {wanted}."
    if called_in(pending, records, agent):
        return (
            f"fixloop:{agent} was already called in {step} of run {context.run_id}; its answer counts once. "
            "Do not call it again: wait for the next fixloop next block."
        )
    return None


def called_in(pending: DispatchView, records: Iterable[Mapping[str, Any]], agent: str) -> bool:
    """Whether `agent` has a call in the pending step that ran or runs (not one the tool failed)."""
    calls, results = ledger.step_calls(records, pending.id, pending.at_ms, (agent,))
    failed = {result.get("tool_use_id") for result in results if result.get("error") in TOOL_FAILURES}
    return any(tool_use_id not in failed for tool_use_id in calls)


def normalised_input(context: RunContext, agent: str, tool_input: Mapping[str, Any]) -> dict[str, Any] | None:
    """The tool input the call goes on with, when it must change (None: as it is)."""
    from fixloop.hookside import dispatch as dispatches

    changed = dict(tool_input)
    model = dispatches.model_for(context.view, agent)
    if model is not None and tool_input.get("model") != model:
        changed["model"] = model
    if tool_input.get("run_in_background") is True and agent != COORDINATOR_AGENT:
        changed["run_in_background"] = False
    return changed if changed != dict(tool_input) else None


def note_refusal(context: RunContext, payload: Mapping[str, Any], agent: str, reason: str, ts: int) -> None:
    """A `refused` ledger line (its PostToolUseFailure, if any, is then no agent result) and a WARNING."""
    tool_use_id = payload.get("tool_use_id")
    line = {"kind": "refused", "ts_ms": ts, "agent": agent, "tool_use_id": tool_use_id}
    ledger.append(context.run_dir, line)
    context.warn("AGENT_CALL_REFUSED", reason, agent=agent, tool_use_id=tool_use_id, phase=context.view.phase)
