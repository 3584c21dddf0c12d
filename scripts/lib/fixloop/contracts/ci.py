"""What the agent of `/fixloop:fix-ci` returns: the CI analyst, who classifies each failure of a CI job.

The field descriptions are the contract text the agent is sent."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from fixloop.contracts.bugfix import Line, NamedTest
from fixloop.contracts.common import AgentError, AgentStatus, Confidence, Contract, NonEmptyStr, RepoPath
from fixloop.core.agent_names import agent_name

CI_ANALYST = "ci-analyst"
CI_CATEGORIES: tuple[str, ...] = ("test", "build", "lint", "type", "flaky", "infrastructure")
# What fixloop fixes in the code; flaky and infrastructure failures are reported, never "fixed".
FIXABLE_CATEGORIES: tuple[str, ...] = ("test", "build", "lint", "type")
CiCategory = Literal["test", "build", "lint", "type", "flaky", "infrastructure"]
FailureId = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^F[1-9][0-9]{0,5}$")]


class CiFailure(Contract):
    failure_id: FailureId = Field(description="The failure's id, exactly as given (F1, F2, ...).")
    category: CiCategory = Field(
        description="test: the code fails a test; build: it does not compile; lint, type: a linter or "
        "type checker; flaky: fails by chance; infrastructure: the CI itself."
    )
    confidence: Confidence = Field(description="How sure you are of the category, 0-100.")
    summary: NonEmptyStr = Field(description="What fails, in one sentence.")
    test: NamedTest | None = Field(
        default=None, description="For test: the failing test, so the engine can run it locally."
    )
    file: RepoPath | None = Field(default=None, description="The file at fault, if you found it.")
    line: Line | None = Field(default=None, description="Its line, if known.")
    cause: str | None = Field(default=None, description="The cause in the code, if you found it.")
    fix: str | None = Field(
        default=None, description="For test, build, lint and type: the change that fixes it."
    )


class CiAnalystOutput(Contract):
    status: AgentStatus = Field(description="success: every failure classified; failed: see error.")
    agent: NonEmptyStr = Field(description="Your agent name.", json_schema_extra={"enum": [CI_ANALYST]})
    failures: list[CiFailure] = Field(default_factory=list, description="One entry per failure given.")
    summary: str | None = Field(default=None, description="What the failures have in common, if anything.")
    error: AgentError | None = Field(
        default=None, description="Only with status failed: why you could not do the task."
    )

    @field_validator("agent")
    @classmethod
    def _is_agent(cls, value: str) -> str:
        if agent_name(value) != CI_ANALYST:
            raise ValueError(f"must be {CI_ANALYST}")
        return CI_ANALYST

    @model_validator(mode="after")
    def _complete(self) -> CiAnalystOutput:
        if self.status == "failed" and self.error is None:
            raise ValueError("a failed answer needs an error object")
        if self.status == "success" and not self.failures:
            raise ValueError("a successful analysis classifies at least one failure")
        ids = [item.failure_id for item in self.failures]
        repeated = sorted({failure for failure in ids if ids.count(failure) > 1})
        if repeated:
            raise ValueError(f"each failure once; repeated: {', '.join(repeated)}")
        return self


CI_MODELS: dict[str, type[Contract]] = {CI_ANALYST: CiAnalystOutput}
