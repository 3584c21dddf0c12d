"""What one reviewer's answer of a review pass amounts to: its agents_results entry, issues and positive
observations, or the failure of a missing, invalid or failed answer."""

from __future__ import annotations

from typing import Any, NamedTuple

from fixloop.review.state import AgentResult, ErrorDocument, Round


class AgentOutcome(NamedTuple):
    result: AgentResult
    issues: list[dict[str, Any]]
    positive: list[str]


def error_doc(
    code: str, message: str, phase: str = "unknown", recoverable: bool = False, stack_trace: str | None = None
) -> ErrorDocument:
    return {
        "code": code,
        "message": message,
        "phase": phase,
        "recoverable": recoverable,
        "stack_trace": stack_trace,
    }


def _failed(agent: str, error: ErrorDocument) -> AgentOutcome:
    return AgentOutcome({"agent": agent, "status": "failed", "error": error}, [], [])


def agent_result(rnd: Round, agent: str) -> AgentOutcome:
    """The outcome of `agent`'s record in the pass (or shard) being closed."""
    record = rnd["records"].get(agent)
    if record is None:
        return _failed(
            agent, error_doc("NULL_RESPONSE", f"Agent {agent} returned nothing", "execution", True)
        )
    if not record["valid"]:
        problem = record.get("error") or {}
        return _failed(
            agent,
            error_doc(
                str(problem.get("code") or "SCHEMA_VIOLATION"),
                str(problem.get("message") or f"Agent {agent} returned an invalid result"),
                "parsing",
                False,
            ),
        )
    document = record["document"] or {}
    if document.get("status") != "success":
        problem = document.get("error") or {}
        return _failed(
            agent,
            error_doc(
                str(problem.get("code") or "UNKNOWN_ERROR"),
                str(problem.get("message") or "unknown error"),
                str(problem.get("phase") or "unknown"),
                bool(problem.get("recoverable", False)),
                problem.get("stack_trace"),
            ),
        )
    issues = list(document.get("issues") or [])
    observations = [str(item) for item in document.get("positive_observations") or []]
    return AgentOutcome(
        {"agent": agent, "status": "success", "issues_count": len(issues)}, issues, observations
    )
