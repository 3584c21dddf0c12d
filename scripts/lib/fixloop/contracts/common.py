"""Building blocks shared by the agent contracts."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

REVIEWER_AGENTS: tuple[str, ...] = (
    "code-reviewer",
    "silent-failure-hunter",
    "code-simplifier",
    "test-analyzer",
    "comment-analyzer",
    "type-design-analyzer",
)
FIXER_AGENT = "review-fixer"
VERIFIER_AGENT = "review-verifier"
RECORDABLE_AGENTS: tuple[str, ...] = (*REVIEWER_AGENTS, FIXER_AGENT, VERIFIER_AGENT)

NonEmptyStr = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Confidence = Annotated[int, Field(ge=0, le=100, strict=True)]
Score = Annotated[int, Field(ge=0, le=100, strict=True)]
SessionId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{8}$")]

AgentStatus = Literal["success", "failed"]
Severity = Literal["critical", "high", "medium", "low"]


class Contract(BaseModel):
    """Base for agent documents: unknown fields are errors, so typos surface as violations."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class AgentError(Contract):
    code: NonEmptyStr
    message: NonEmptyStr
    phase: str = "unknown"
    recoverable: bool = False
    stack_trace: str | None = None


def canonical_agent_name(value: str) -> str:
    """`fixloop:code-reviewer` and `review-code-reviewer` both name the agent `code-reviewer`."""
    name = value.strip().lower()
    if ":" in name:
        name = name.rsplit(":", 1)[1]
    if name.startswith("review-") and name[len("review-") :] in REVIEWER_AGENTS:
        name = name[len("review-") :]
    return name
