"""Asking one of a phase's agents for its answer, and taking that answer once its dispatch has closed
(shared by the workflows whose phases consult one agent each: bugfix, fix-ci).

A phase that needs an agent's answer calls `consult` on every step: the first time it dispatches the
agent; once the dispatch closed it gets the agent's valid answer, or dispatches it again (at most
MAX_DISPATCHES times) when it gave no valid answer or failed recoverably, or ends the phase when the agent
failed for good (AGENT_FAILED) or never answered validly (AGENT_NO_VALID_ANSWER).
"""

from __future__ import annotations

from typing import Any

from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Call, Dispatch, PhaseFailed

MAX_DISPATCHES = 2
ANALYSTS = "analysts"  # the config's `models` role of the agents that diagnose, classify or design
WAITING = "waiting"  # ctx.data key: the agent of this phase's open dispatch
DISPATCHES = "dispatches"  # ctx.data key: agent -> how often this phase dispatched it


def dispatch(
    ctx: PhaseContext, agent: str, description: str, task: str, label: str, role: str = ANALYSTS
) -> Dispatch:
    ctx.data[WAITING] = agent
    counts = ctx.data.setdefault(DISPATCHES, {})
    counts[agent] = int(counts.get(agent) or 0) + 1
    return Dispatch((Call(agent, description, task, role),), label)


def dispatches(ctx: PhaseContext, agent: str) -> int:
    return int((ctx.data.get(DISPATCHES) or {}).get(agent) or 0)


def closed(ctx: PhaseContext, agent: str) -> bool:
    """Whether a dispatch of `agent` by this phase has closed since the phase last looked (and mark it seen).

    The engine steps a phase only once its pending dispatch has closed, so a dispatch this phase made and
    has not yet looked at is closed."""
    if ctx.data.get(WAITING) != agent:
        return False
    ctx.data[WAITING] = None
    return True


def agent_failed(agent: str, document: dict[str, Any]) -> PhaseFailed:
    error = document.get("error") or {}
    return PhaseFailed(
        "AGENT_FAILED",
        f"{agent} could not do its task: {error.get('message') or 'no reason given'}",
        details={"agent": agent, "agent_error": error, "recoverable": bool(error.get("recoverable"))},
    )


def no_answer(ctx: PhaseContext, agent: str) -> PhaseFailed:
    record = ctx.result(agent) or {}
    return PhaseFailed(
        "AGENT_NO_VALID_ANSWER",
        f"{agent} gave no valid answer in {dispatches(ctx, agent)} call(s).",
        details={"agent": agent, "last_error": record.get("last_error"), "recoverable": False},
    )


def consult(
    ctx: PhaseContext, agent: str, description: str, task: str, label: str
) -> dict[str, Any] | Dispatch | PhaseFailed:
    """The agent's valid, successful answer; else the dispatch that asks for it or the phase's failure."""
    if closed(ctx, agent):
        document = ctx.document(agent)
        again = dispatches(ctx, agent) < MAX_DISPATCHES
        if document is not None and document.get("status") != "failed":
            return document
        if document is not None and not (again and (document.get("error") or {}).get("recoverable")):
            return agent_failed(agent, document)
        if not again:
            return no_answer(ctx, agent)
    return dispatch(ctx, agent, description, task, label)
