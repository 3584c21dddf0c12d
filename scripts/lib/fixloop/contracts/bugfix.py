"""What the four bugfix agents return: the failure analyst, the root-cause analyst, the fix designer and the
implementer. The field descriptions are the contract text the agents are sent."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from fixloop.contracts.common import AgentError, AgentStatus, Contract, NonEmptyStr, RepoPath, Score
from fixloop.core.agent_names import agent_name

FAILURE_ANALYST = "failure-analyst"
ROOT_CAUSE_ANALYST = "root-cause-analyst"
FIX_DESIGNER = "fix-designer"
IMPLEMENTER = "implementer"
BUGFIX_AGENTS: tuple[str, ...] = (FAILURE_ANALYST, ROOT_CAUSE_ANALYST, FIX_DESIGNER, IMPLEMENTER)

# The failure categories of each stack; a stack the run does not name (or "mixed") uses all of them.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "frontend": ("render", "mock", "async-timing", "selector", "type", "build"),
    "backend": ("assertion", "exception", "data-or-fixture", "contract", "config"),
    "e2e": ("selector", "wait-or-timing", "navigation", "environment", "test-data", "flaky"),
}
ALL_CATEGORIES: tuple[str, ...] = tuple(dict.fromkeys(c for names in CATEGORIES.values() for c in names))
Category = Literal[
    "render",
    "mock",
    "async-timing",
    "selector",
    "type",
    "build",
    "assertion",
    "exception",
    "data-or-fixture",
    "contract",
    "config",
    "wait-or-timing",
    "navigation",
    "environment",
    "test-data",
    "flaky",
]
Line = Annotated[int, Field(ge=1, strict=True)]


def categories_for(stack: object) -> tuple[str, ...]:
    return CATEGORIES.get(str(stack), ALL_CATEGORIES)


def _agent_field(name: str) -> Any:
    return Field(description="Your agent name.", json_schema_extra={"enum": [name]})


def _canonical(value: str, name: str) -> str:
    if agent_name(value) != name:
        raise ValueError(f"must be {name}")
    return name


def _failed_needs_error(status: str, error: AgentError | None) -> None:
    if status == "failed" and error is None:
        raise ValueError("a failed answer needs an error object")


ERROR_FIELD = Field(default=None, description="Only with status failed: why you could not do the task.")


# ---- failure-analyst --------------------------------------------------------------------------------


class ClassifiedFailure(Contract):
    test_id: NonEmptyStr = Field(
        description="The failure's test_id as given, or a short name for a failure the user described."
    )
    category: Category = Field(description="One of the categories your task lists for this stack.")
    summary: NonEmptyStr = Field(description="What fails, in one sentence.")
    file: RepoPath | None = Field(default=None, description="The file where it shows, if known.")
    line: Line | None = Field(default=None, description="Its line, if known.")


class FailureAnalystOutput(Contract):
    status: AgentStatus = Field(description="success: every failure classified; failed: see error.")
    agent: NonEmptyStr = _agent_field(FAILURE_ANALYST)
    failures: list[ClassifiedFailure] = Field(
        default_factory=list, description="One entry per failure given (and per failure the user described)."
    )
    summary: str | None = Field(default=None, description="What the failures have in common, if anything.")
    error: AgentError | None = ERROR_FIELD

    @field_validator("agent")
    @classmethod
    def _is_agent(cls, value: str) -> str:
        return _canonical(value, FAILURE_ANALYST)

    @model_validator(mode="after")
    def _complete(self) -> FailureAnalystOutput:
        _failed_needs_error(self.status, self.error)
        if self.status == "success" and not self.failures:
            raise ValueError("a successful analysis classifies at least one failure")
        return self


# ---- root-cause-analyst -----------------------------------------------------------------------------


class RootCause(Contract):
    summary: NonEmptyStr = Field(description="The cause of the failure, in one or two sentences.")
    file: RepoPath | None = Field(default=None, description="The file holding the faulty code.")
    line: Line | None = Field(default=None, description="The faulty line in that file.")
    evidence: list[NonEmptyStr] = Field(
        min_length=1, description="What you read or ran that shows it: code lines, output, a reproduction."
    )


class Factors(Contract):
    clarity: Score = Field(description="How clearly the evidence points to this cause alone.")
    specificity: Score = Field(description="How exactly you located it (file and line, not a module).")
    context: Score = Field(description="How much of the surrounding code and history you checked.")


class RootCauseAnalystOutput(Contract):
    status: AgentStatus = Field(description="success: a root cause found; failed: see error.")
    agent: NonEmptyStr = _agent_field(ROOT_CAUSE_ANALYST)
    root_cause: RootCause | None = Field(default=None, description="Required with status success.")
    factors: Factors | None = Field(
        default=None, description="Your honest scores; the engine measures reproducibility itself."
    )
    error: AgentError | None = ERROR_FIELD

    @field_validator("agent")
    @classmethod
    def _is_agent(cls, value: str) -> str:
        return _canonical(value, ROOT_CAUSE_ANALYST)

    @model_validator(mode="after")
    def _complete(self) -> RootCauseAnalystOutput:
        _failed_needs_error(self.status, self.error)
        if self.status == "success" and (self.root_cause is None or self.factors is None):
            raise ValueError("a successful diagnosis needs root_cause and factors")
        return self


# ---- fix-designer -----------------------------------------------------------------------------------


class FileChange(Contract):
    file: RepoPath = Field(description="A file to change, relative to the repository root.")
    change: NonEmptyStr = Field(description="What changes in it, and why.")


class NamedTest(Contract):
    file: RepoPath = Field(description="The test file, relative to the repository root.")
    name: NonEmptyStr = Field(
        description="The test's name as its runner names it (pytest: test_x or Class::test_x)."
    )
    line: Line | None = Field(default=None, description="The line the test starts at, if known.")


class Alternative(Contract):
    approach: NonEmptyStr = Field(description="Another way to fix it.")
    rejected_because: NonEmptyStr = Field(description="Why this plan does not take it.")


class FixDesignerOutput(Contract):
    status: AgentStatus = Field(description="success: a plan; failed: see error.")
    agent: NonEmptyStr = _agent_field(FIX_DESIGNER)
    summary: str | None = Field(default=None, description="The fix in one or two sentences.")
    changes: list[FileChange] = Field(default_factory=list, description="One entry per file to change.")
    test: NamedTest | None = Field(
        default=None, description="The test that fails now and will pass once fixed."
    )
    risks: list[NonEmptyStr] = Field(default_factory=list, description="What the change could break.")
    alternatives: list[Alternative] = Field(default_factory=list, description="Approaches you rejected.")
    error: AgentError | None = ERROR_FIELD

    @field_validator("agent")
    @classmethod
    def _is_agent(cls, value: str) -> str:
        return _canonical(value, FIX_DESIGNER)

    @model_validator(mode="after")
    def _complete(self) -> FixDesignerOutput:
        _failed_needs_error(self.status, self.error)
        if self.status == "success" and not (self.summary and self.changes and self.test):
            raise ValueError("a successful design needs summary, changes and test")
        return self


# ---- implementer ------------------------------------------------------------------------------------


class ImplementerOutput(Contract):
    status: AgentStatus = Field(description="success: the stage is done; failed: see error.")
    agent: NonEmptyStr = _agent_field(IMPLEMENTER)
    stage: Literal["test", "fix"] | None = Field(
        default=None, description="test: the reproducing test is written; fix: the code is fixed."
    )
    test: NamedTest | None = Field(
        default=None, description="Required at stage test: the test you added or changed."
    )
    files_modified: list[RepoPath] = Field(
        default_factory=list, description="Required at stage fix: every file you changed but the test."
    )
    summary: str | None = Field(default=None, description="What you did, in one or two sentences.")
    error: AgentError | None = ERROR_FIELD

    @field_validator("agent")
    @classmethod
    def _is_agent(cls, value: str) -> str:
        return _canonical(value, IMPLEMENTER)

    @model_validator(mode="after")
    def _complete(self) -> ImplementerOutput:
        _failed_needs_error(self.status, self.error)
        if self.status == "success":
            if self.stage is None:
                raise ValueError("a successful answer names its stage")
            if self.stage == "test" and self.test is None:
                raise ValueError("stage test needs the test")
            if self.stage == "fix" and not self.files_modified:
                raise ValueError("stage fix needs files_modified")
        return self


BUGFIX_MODELS: dict[str, type[Contract]] = {
    FAILURE_ANALYST: FailureAnalystOutput,
    ROOT_CAUSE_ANALYST: RootCauseAnalystOutput,
    FIX_DESIGNER: FixDesignerOutput,
    IMPLEMENTER: ImplementerOutput,
}
