"""Building blocks shared by the agent contracts."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from fixloop.contracts.repo_paths import repo_relative_path as repo_relative_path

NonEmptyStr = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Confidence = Annotated[int, Field(ge=0, le=100, strict=True)]
Score = Annotated[int, Field(ge=0, le=100, strict=True)]
SessionId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{8}$")]

MAX_LINE = 10_000_000
LineNumber = Annotated[int, Field(ge=1, le=MAX_LINE, strict=True)]


RepoPath = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1), AfterValidator(repo_relative_path)
]

AgentStatus = Literal["success", "failed"]
Severity = Literal["critical", "high", "medium", "low"]


class Contract(BaseModel):
    """Base for agent documents: unknown fields are errors, so typos surface as violations."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class AgentError(Contract):
    code: NonEmptyStr = Field(description="Upper-case error code, e.g. MISSING_INPUT or TIMEOUT.")
    message: NonEmptyStr = Field(description="What went wrong.")
    phase: str = Field(default="unknown", description="Where it went wrong, e.g. reading or analysis.")
    recoverable: bool = Field(default=False, description="true when another attempt could succeed.")
    stack_trace: str | None = Field(default=None, description="Technical detail, if any.")
