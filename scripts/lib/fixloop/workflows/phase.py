"""A workflow phase: what it does when stepped, and how it takes agent answers, work results and answers.

Subclasses implement `step`. The defaults here record the answers of the phase's own agents (validated
against the agent's contract, with the same attempt counting as the review loop), keep work results and
the user's answers in the phase's slot of the run state, and hold no agent answer for verification first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.core.agent_names import agent_name
from fixloop.core.errors import FixloopError
from fixloop.review.record import MAX_INVALID_ATTEMPTS, contract_violation, register_attempt
from fixloop.review.state import Problem, new_record
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, Work


class Phase:
    """One phase of a workflow. `agents` are the agents whose answers this phase records itself."""

    agents: tuple[str, ...] = ()

    def step(self, ctx: PhaseContext) -> Outcome:
        raise NotImplementedError

    # ---- results coming back ----------------------------------------------------------------------

    def apply_work(self, ctx: PhaseContext, kind: str, result: Any) -> None:
        ctx.store_work(kind, result)

    def apply_answer(self, ctx: PhaseContext, context: str, choice: str, default: bool) -> list[str]:
        """Take the user's `choice` for the question `context`; returns the files it restored (none)."""
        ctx.flow["answers"][context] = {"choice": choice, "default": default, "at_ms": ctx.now}
        return []

    def contract_kind(self, agent: str) -> str | None:
        """The contract an answer of `agent` is validated against here; None: not this phase's agent."""
        return agent if agent in self.agents else None

    def gate(self, ctx: PhaseContext, agent: str, document: Mapping[str, Any]) -> Work | None:
        """Engine work to do with a valid answer before it is recorded (e.g. running the test it wrote)."""
        return None

    def judge(
        self, ctx: PhaseContext, agent: str, document: Mapping[str, Any], work: Any
    ) -> tuple[Problem | None, str | None]:
        """After `gate`'s work: (a problem that refuses the answer, or None; text that sends the agent on)."""
        return None, None

    def record(
        self,
        ctx: PhaseContext,
        agent: str,
        document: Mapping[str, Any] | None,
        error: Mapping[str, Any] | None,
        *,
        provenance: str,
        agent_id: str | None,
    ) -> dict[str, Any]:
        """Record an answer of one of this phase's agents in the current dispatch."""
        dispatch = ctx.flow.get("dispatch")
        wanted = [call["agent"] for call in dispatch["calls"]] if isinstance(dispatch, dict) else []
        if not isinstance(dispatch, dict) or dispatch.get("closed") or agent not in wanted:
            raise FixloopError(
                "UNEXPECTED_AGENT_RESULT",
                f"Result of {agent} not recorded: phase {ctx.number} is not waiting for it.",
                agent=agent,
                waiting_for=[] if not isinstance(dispatch, dict) or dispatch.get("closed") else wanted,
            )
        record = ctx.flow["records"].setdefault(agent, new_record(agent))
        problem = dict(error) if error is not None else None
        if problem is None and document is not None and agent_name(document.get("agent")) != agent:
            problem = {
                "code": "AGENT_MISMATCH",
                "message": f"The document names agent {document.get('agent')!r}, not {agent}.",
                "violations": [{"path": "$.agent", "message": f"must be {agent}"}],
                "hint": f'Set "agent": "{agent}" in the JSON document.',
            }
        retry, hint = register_attempt(record, document, problem, ctx.now, provenance, agent_id)
        if problem is None:
            ctx.emit("D", "AGENT_IO", agent=agent, direction="output", content=dict(document or {}))
        elif record["invalid_attempts"] == MAX_INVALID_ATTEMPTS:
            level, kind, fields = contract_violation(agent, problem, record)
            ctx.emit(level, kind, **fields)
        return {
            "status": "recorded",
            "agent": agent,
            "phase": ctx.phase_key,
            "valid": problem is None,
            "retry": retry,
            "attempt": record["attempts"],
            "error": problem,
            "hint": hint,
            "agent_status": document.get("status") if problem is None and document is not None else None,
            "issues_count": None,
        }
