"""The run's pending dispatch of agents, as the hooks carry it out: each agent's task and model, and the
next step once the last of its agents has returned.

A dispatch (store.runview.DispatchView) is pending while the engine has not closed it. It is complete when
every call made since it was issued has a `result` line in the ledger (calls it names that were never
made are the engine's to hand out again); the one hook that first sees that (claimed in hooks-state.json
as `delivered_dispatch`) asks the engine for the next step.
"""

from __future__ import annotations

import os

from fixloop.store import ledger

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from fixloop.hookside.context import RunContext
    from fixloop.store.runview import DispatchView, RunView

TASKS_DIR = "tasks"
DELIVERED = "delivered_dispatch"


def pending(view: RunView) -> DispatchView | None:
    dispatch = view.dispatch
    return dispatch if dispatch is not None and not dispatch.closed else None


def model_for(view: RunView, agent: str) -> str | None:
    """The model the pending dispatch asks for `agent` (None: it asks for none, or has no such call)."""
    dispatch = pending(view)
    for name, _subagent_type, model in dispatch.calls if dispatch is not None else ():
        if name == agent and model is not None:
            return model
    return None


def task_text(context: RunContext, agent: str) -> str | None:
    """The task of `agent` in the pending dispatch (runs/<id>/tasks/<agent>.md), if it has a call for it,
    as context Claude Code delivers whole: a long task becomes its head, the file to read it from and its
    contract (hookside.task_delivery)."""
    dispatch = pending(context.view)
    if dispatch is None or all(name != agent for name, _type, _model in dispatch.calls):
        return None
    if "/" in agent or agent.startswith("."):  # a name, never a path out of tasks/
        return None
    path = os.path.abspath(os.path.join(context.run_dir, TASKS_DIR, f"{agent}.md"))
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.strip():
        return None
    from fixloop.hookside import task_delivery

    return task_delivery.context_for(text, path)


def complete(dispatch: DispatchView, records: Iterable[Mapping[str, Any]]) -> bool:
    """Whether every call of `dispatch` made since it was issued has returned (a ledger `result` line),
    and at least one was made. Calls it names but the model never made do not hold it up: the engine hands
    them out again (workflows.pending)."""
    agents = {name for name, _subagent_type, _model in dispatch.calls}
    calls, results = ledger.step_calls(records, dispatch.id, dispatch.at_ms, agents)
    made = set(calls)
    return bool(made) and made <= {result.get("tool_use_id") for result in results}


def claim(context: RunContext, dispatch_id: int) -> bool:
    """True for the one hook that claims the delivery of the next step after dispatch `dispatch_id`."""
    won: list[bool] = []

    def take(state: dict[str, Any]) -> None:
        delivered = state.get(DELIVERED)
        if isinstance(delivered, int) and not isinstance(delivered, bool) and delivered >= dispatch_id:
            return
        state[DELIVERED] = dispatch_id
        won.append(True)

    ledger.update_hooks_state(context.run_dir, take)
    return bool(won)


def next_if_complete(context: RunContext, hook: str) -> str | None:
    """The engine's next step when this hook's result completed the pending dispatch and this hook is the
    first to see it; else None."""
    dispatch = pending(context.view)
    if dispatch is None or not complete(dispatch, ledger.read(context.run_dir)):
        return None
    if not claim(context, dispatch.id):
        return None
    from fixloop.hookside import engine

    return engine.next_step(context, hook)
