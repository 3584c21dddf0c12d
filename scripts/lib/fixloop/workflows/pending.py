"""The pending dispatch, whatever the model did with it: made every call, some, none, or stopped.

The model that carries a run (the coordinator) may leave agents out, or stop before it makes a step's
calls. The engine, not the model, decides what follows:

- no call made yet: the dispatch is handed out again as it is (the model has not acted on it);
- some calls made, others never: a follow-up dispatch (a new step number) hands out only the missing
  calls;
- the model stopped (`stopped`) with a follow-up's calls not made: handed out again, at most MAX_REISSUES
  times in a row without a call; past that the step closes with what it has, the missing agents named
  (WARNING AGENTS_NOT_CALLED, kept in `flow.not_called` for the final message), and the phase decides
  whether that is enough (the review loop: `min_required_agents`). A first dispatch left undone by a
  stopped model is an early stop instead (workflows.early_stop bounds those).

Every follow-up with a call made has fewer calls than the one before, so a step always ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fixloop.review.step import Event
from fixloop.workflows import actions
from fixloop.workflows.context import RunState, flow_of

MAX_REISSUES = 2

# The agents called since a dispatch was issued (ledger `call` lines); None when the run has no ledger
# (outside Claude Code, answers are recorded by hand): every call counts as made.
CallsMade = Callable[[dict[str, Any]], "set[str] | None"]


def missing_agents(dispatch: dict[str, Any], called: set[str] | None) -> list[str]:
    """The agents of `dispatch` that were never called, in the dispatch's order."""
    if called is None:
        return []
    return [call["agent"] for call in dispatch["calls"] if call["agent"] not in called]


def settle(
    state: RunState, pending: dict[str, Any], called: set[str] | None, stopped: bool, now: int
) -> tuple[dict[str, Any] | None, list[Event]]:
    """What to do with the open dispatch `pending`: the agents action to hand out (the same dispatch, or a
    follow-up with the missing calls), or None once it is closed (the phase steps on)."""
    events: list[Event] = []
    follow_up = bool(pending.get("reissue_of"))
    if called is not None and not called and not (stopped and follow_up):
        return actions.agents_action(state, pending), events
    missing = missing_agents(pending, called)
    if missing:
        # Handing out what is left is progress while some calls were made; in a row without any, bounded.
        idle = int(pending.get("idle") or 0) + 1 if not called else 0
        if idle <= MAX_REISSUES:
            again = reissue(state, pending, missing, idle, now)
            events.append(
                (
                    "W",
                    "WARNING",
                    {
                        "code": "AGENTS_MISSING",
                        "message": f"Step {pending['id']} ({pending['label']}): {', '.join(missing)} not "
                        f"called; handed out again as step {again['id']}.",
                        "agents": missing,
                        "step": pending["id"],
                    },
                )
            )
            return actions.agents_action(state, again), events
        events.append(not_called(state, pending, missing))
    pending["closed"] = True
    pending["closed_at_ms"] = now
    return None, events


def reissue(
    state: RunState, pending: dict[str, Any], missing: list[str], idle: int, now: int
) -> dict[str, Any]:
    """A follow-up dispatch with only the `missing` calls of `pending`; the answers already recorded for
    the step stay where they are."""
    pending["closed"] = True
    pending["closed_at_ms"] = now
    return actions.open_dispatch(
        state,
        pending["phase"],
        str(pending["label"]),
        _round_of(flow_of(state), pending),
        [call for call in pending["calls"] if call["agent"] in missing],
        now,
        reissue_of=pending.get("reissue_of") or pending["id"],
        idle=idle,
    )


def _round_of(flow: dict[str, Any], pending: dict[str, Any]) -> Any:
    for item in reversed(flow.get("history") or []):
        if item.get("id") == pending["id"]:
            return item.get("round")
    return None


def not_called(state: RunState, pending: dict[str, Any], missing: list[str]) -> Event:
    """Close a step whose `missing` agents were never called, however often they were handed out."""
    flow = flow_of(state)
    step = pending.get("reissue_of") or pending["id"]
    entry = {"step": step, "label": pending["label"], "phase": pending["phase"], "agents": missing}
    flow.setdefault("not_called", []).append(entry)
    message = (
        f"Step {step} ({pending['label']}) goes on without {', '.join(missing)}: never called, although "
        f"handed out {MAX_REISSUES + 1} times in a row."
    )
    warning = {"phase": f"phase_{pending['phase']}", "code": "AGENTS_NOT_CALLED", "message": message}
    flow["warnings"].append(warning)
    fields = {"code": "AGENTS_NOT_CALLED", "message": message, "agents": missing, "step": step}
    return ("W", "WARNING", fields)
