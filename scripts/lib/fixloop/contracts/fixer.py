"""What the review fixer returns."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from fixloop.contracts.common import AgentError, Contract, NonEmptyStr, RepoPath
from fixloop.core.agent_names import FIXER_AGENT, agent_name


class FixAttempt(Contract):
    issue_id: NonEmptyStr = Field(description="The issue's id.")
    status: Literal["succeeded", "failed", "skipped"] = Field(
        description="skipped: not attempted; failed: attempted without success."
    )
    reason: str | None = Field(default=None, description="Why; required unless status is succeeded.")
    files: list[RepoPath] = Field(
        default_factory=list, description="Files changed for this issue, relative to the repository root."
    )

    @model_validator(mode="after")
    def _reason_when_not_fixed(self) -> FixAttempt:
        if self.status != "succeeded" and not (self.reason or "").strip():
            raise ValueError(f"a {self.status} fix needs a reason")
        return self


class FixerOutput(Contract):
    status: Literal["success", "partial", "failed"] = Field(
        description="success: every issue fixed; partial: some fixed; failed: none fixed."
    )
    agent: NonEmptyStr = Field(description="Your agent name.", json_schema_extra={"enum": [FIXER_AGENT]})
    results: list[FixAttempt] = Field(default_factory=list, description="One object per issue given.")
    files_modified: list[RepoPath] = Field(
        default_factory=list, description="Every file you changed, relative to the repository root."
    )
    error: AgentError | None = Field(
        default=None, description="Only when you could not work at all, e.g. the prompt has no issues."
    )

    @field_validator("agent")
    @classmethod
    def _is_fixer(cls, value: str) -> str:
        if agent_name(value) != FIXER_AGENT:
            raise ValueError(f"must be {FIXER_AGENT}")
        return FIXER_AGENT

    @model_validator(mode="after")
    def _error_matches_status(self) -> FixerOutput:
        if self.status == "failed" and self.error is None and not self.results:
            raise ValueError("a failed fix with no per-issue results needs an error object")
        return self

    def counts(self) -> dict[str, int]:
        attempted = [r for r in self.results if r.status != "skipped"]
        succeeded = [r for r in attempted if r.status == "succeeded"]
        return {
            "attempted": len(attempted),
            "succeeded": len(succeeded),
            "failed": len(attempted) - len(succeeded),
        }
