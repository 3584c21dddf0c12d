"""Recording an agent's answer in the step of the current round that waits for it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from fixloop.core.agent_names import (
    CONTRACTED_AGENTS,
    FIXER_AGENT,
    REVIEWER_AGENTS,
    VERIFIER_AGENT,
    agent_name,
)
from fixloop.core.errors import FixloopError
from fixloop.core.thresholds import MAX_RETRIES
from fixloop.review.access import current_round
from fixloop.review.state import Fix, Problem, Record, Review, RunState, Verifier, new_record
from fixloop.review.step import StepContext, Transition

# An agent gets its first answer and MAX_RETRIES more: after this many invalid answers `retry` turns false.
MAX_INVALID_ATTEMPTS = 1 + MAX_RETRIES

AgentRole = Literal["reviewer", "fixer", "verifier"]


def agent_role(agent: str) -> AgentRole:
    name = agent_name(agent) or ""
    if name in REVIEWER_AGENTS:
        return "reviewer"
    if name == FIXER_AGENT:
        return "fixer"
    if name == VERIFIER_AGENT:
        return "verifier"
    raise FixloopError(
        "UNKNOWN_AGENT",
        f"Unknown agent {agent!r}.",
        valid_values=list(CONTRACTED_AGENTS),
        received=agent,
    )


def _unexpected(agent: str, why: str) -> FixloopError:
    return FixloopError(
        "UNEXPECTED_AGENT_RESULT",
        f"Result of {agent} not recorded: {why}.",
        agent=agent,
        suggestion="Run `fixloop review next RUN` to see what the loop is waiting for.",
    )


def _open_record(review: Review, role: AgentRole, agent: str) -> tuple[Record, int]:
    """The record of `agent` in the open step of the current round (created on first use), and the round."""
    if review.get("outcome"):
        raise _unexpected(agent, "the review has already finished")
    rnd = current_round(review)
    if rnd is None:
        raise _unexpected(agent, "no review round has been requested yet")
    number = int(rnd["iteration"])
    if role == "reviewer":
        if rnd["review_requested_at_ms"] is None or rnd["closed"]:
            raise _unexpected(agent, f"round {number} is not waiting for reviewers")
        return rnd["records"].setdefault(agent, new_record(agent)), number
    step: Verifier | Fix
    if role == "verifier":
        verifier = rnd.get("verifier")
        if not verifier or verifier.get("done"):
            raise _unexpected(agent, f"round {number} is not waiting for the verifier")
        step = verifier
    else:
        fix = rnd.get("fix")
        if not fix or fix.get("done"):
            raise _unexpected(agent, f"round {number} is not waiting for the fixer")
        step = fix
    record = step.get("record") or new_record(agent)
    step["record"] = record
    return record, number


def _mismatch(document: Mapping[str, Any], name: str) -> Problem | None:
    if agent_name(document.get("agent")) == name:
        return None
    return {
        "code": "AGENT_MISMATCH",
        "message": f"The document names agent {document.get('agent')!r}, but it was recorded as {name}.",
        "violations": [{"path": "$.agent", "message": f"must be {name}"}],
        "hint": f'Set "agent": "{name}" in the JSON document.',
    }


def register_attempt(
    record: Record,
    document: Mapping[str, Any] | None,
    problem: Problem | None,
    now: int,
    provenance: str,
    agent_id: str | None,
) -> tuple[bool, str | None]:
    """Count one answer in `record`: a valid `document`, or the `problem` of an invalid answer.

    A valid answer replaces an earlier valid one; an invalid answer never replaces a valid one. Returns
    (retry, hint): retry while no valid answer came and fewer than MAX_INVALID_ATTEMPTS were invalid.
    """
    record["attempts"] += 1
    record["recorded_at_ms"] = now
    record["provenance"] = provenance
    record["agent_id"] = agent_id
    if problem is None:
        assert document is not None
        record["valid"] = True
        record["document"] = dict(document)
        record["error"] = None
        return False, None
    record["invalid_attempts"] += 1
    record["last_error"] = problem
    if not record["valid"]:
        record["error"] = problem
    hint = problem.get("hint") if isinstance(problem.get("hint"), str) else None
    if record["valid"]:
        hint = (hint + " " if hint else "") + "An earlier valid answer of this agent is kept."
    if record["invalid_attempts"] == MAX_INVALID_ATTEMPTS:
        record["exhausted"] = True
    return not record["valid"] and record["invalid_attempts"] < MAX_INVALID_ATTEMPTS, hint


def contract_violation(name: str, problem: Problem, record: Record) -> tuple[str, str, dict[str, Any]]:
    """The CONTRACT_VIOLATION event of an agent whose invalid answers are exhausted."""
    violations = problem.get("violations")
    return (
        "E",
        "CONTRACT_VIOLATION",
        {
            "agent": name,
            "error_code": str(problem.get("code", "SCHEMA_VIOLATION")),
            "attempts": record["invalid_attempts"],
            "violations": violations if isinstance(violations, list) else [],
        },
    )


def record_agent_result(
    state: RunState,
    agent: str,
    document: Mapping[str, Any] | None,
    error: Mapping[str, Any] | None = None,
    *,
    provenance: str = "cli",
    agent_id: str | None = None,
    now_ms: int | None = None,
    inplace: bool = False,
) -> Transition:
    """Record one agent answer: a validated document, or the validation error of an invalid answer.

    The same agent in the same round replaces its earlier valid answer; an invalid answer never replaces a
    valid one. Every call counts as an attempt; after MAX_INVALID_ATTEMPTS invalid ones `retry` turns false
    and a CONTRACT_VIOLATION event is returned. The document holds the CLI answer fields.
    """
    if document is None and error is None:
        raise ValueError("record_agent_result needs a document or an error")
    ctx = StepContext(state, None, now_ms, inplace)
    role = agent_role(agent)
    name = agent_name(agent) or ""
    record, number = _open_record(ctx.review, role, name)

    problem = dict(error) if error is not None else None
    if problem is None and document is not None:
        problem = _mismatch(document, name)

    retry, hint = register_attempt(record, document, problem, ctx.now, provenance, agent_id)
    if problem is None:
        content = dict(document or {})
        ctx.emit("D", "AGENT_IO", agent=name, direction="output", iteration=number, content=content)
    elif record["invalid_attempts"] == MAX_INVALID_ATTEMPTS:
        level, kind, fields = contract_violation(name, problem, record)
        ctx.emit(level, kind, **fields, iteration=number)
    recorded = problem is None and document is not None
    return ctx.transition(
        {
            "status": "recorded",
            "agent": name,
            "round": number,
            "valid": problem is None,
            "retry": retry,
            "attempt": record["attempts"],
            "error": problem,
            "hint": hint,
            # What hooks report of the call, so that they never parse the answer again.
            "agent_status": document.get("status") if recorded and document is not None else None,
            "issues_count": len(document.get("issues") or [])
            if recorded and document is not None and role == "reviewer"
            else None,
        }
    )
