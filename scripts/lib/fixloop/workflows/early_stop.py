"""The model that carries a run stopped while the run still needs it: how often the engine sends it back.

Each stop with a step left to do is a WARNING COORDINATOR_STOPPED_EARLY; the step is handed out again. The
count is kept per step (`flow.early_stops`): a model that carries out the step it was sent back to starts
afresh at the next one. Past MAX_EARLY_STOPS stops on one step the engine ends the run itself, failed, with
that code: a run never stays `running` because its model went away.
"""

from __future__ import annotations

from typing import Any

from fixloop.review.step import Event
from fixloop.workflows.context import RunState, flow_of

MAX_EARLY_STOPS = 2
CODE = "COORDINATOR_STOPPED_EARLY"


def note(state: RunState, action: dict[str, Any]) -> tuple[bool, Event]:
    """Count a stop while `action` (agents to call) was pending: (past the bound, the WARNING)."""
    flow = flow_of(state)
    step = action.get("step")
    seen = flow.get("early_stops")
    count = 1
    if isinstance(seen, dict) and seen.get("step") == step:
        count = int(seen.get("count") or 0) + 1
    flow["early_stops"] = {"step": step, "count": count}
    flow["early_stops_total"] = int(flow.get("early_stops_total") or 0) + 1
    over = count > MAX_EARLY_STOPS
    message = f"The coordinator stopped with step {step} ({action.get('label')}) not done" + (
        "; the engine ends the run." if over else f"; sent back to it ({count} of {MAX_EARLY_STOPS})."
    )
    return over, ("W", "WARNING", {"code": CODE, "message": message, "step": step})


def end_message(action: dict[str, Any]) -> str:
    agents = ", ".join(str(call.get("subagent_type")) for call in action.get("calls") or [])
    return (
        f"The coordinator stopped {MAX_EARLY_STOPS + 1} times without step {action.get('step')} "
        f"({action.get('label')}): {agents} never called. The engine ended the run."
    )
