"""Every event type of fixloop's JSONL run log."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Timestamp = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")]
Level = Literal["I", "D", "W", "E", "X"]
Millis = Annotated[int, Field(ge=0, strict=True)]


class Event(BaseModel):
    """Fields every log line carries. Event types add their own fields; extra fields are allowed."""

    model_config = ConfigDict(extra="allow")
    ts: Timestamp
    level: Level
    type: str
    session_id: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{8}$")]


class SessionStart(Event):
    type: Literal["SESSION_START"]
    workflow: str
    stack: str | None = None
    command: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, Any] = Field(default_factory=dict)


class SessionEnd(Event):
    type: Literal["SESSION_END"]
    status: str
    total_duration_ms: Millis
    phases_completed: list[str] = Field(default_factory=list)
    summary: dict[str, Any] = Field(default_factory=dict)


class PhaseStart(Event):
    type: Literal["PHASE_START"]
    phase: str
    phase_name: str
    agents: list[str] = Field(default_factory=list)


class PhaseEnd(Event):
    type: Literal["PHASE_END"]
    phase: str
    status: str
    duration_ms: Millis
    summary: dict[str, Any] = Field(default_factory=dict)


class AgentCall(Event):
    type: Literal["AGENT_CALL"]
    agent: str
    phase: str | None = None
    model: str | None = None
    input_summary: str | None = None


class AgentResult(Event):
    type: Literal["AGENT_RESULT"]
    agent: str
    status: str
    duration_ms: Millis
    phase: str | None = None
    output_summary: dict[str, Any] | None = None


class StepStart(Event):
    type: Literal["STEP_START"]
    agent: str
    step: str
    step_name: str | None = None
    step_index: int | None = None
    total_steps: int | None = None


class StepEnd(Event):
    type: Literal["STEP_END"]
    agent: str
    step: str
    status: str
    duration_ms: Millis
    step_name: str | None = None
    step_index: int | None = None
    total_steps: int | None = None


class ToolUse(Event):
    type: Literal["TOOL_USE"]
    tool: str
    status: str


class DataCollected(Event):
    type: Literal["DATA_COLLECTED"]
    data_type: str
    summary: dict[str, Any] = Field(default_factory=dict)
    phase: str | None = None


class AnalysisResult(Event):
    type: Literal["ANALYSIS_RESULT"]
    analysis_type: str
    result: dict[str, Any] = Field(default_factory=dict)
    phase: str | None = None


class ConfidenceDecision(Event):
    type: Literal["CONFIDENCE_DECISION"]
    confidence_score: Annotated[int, Field(ge=0, le=100)]
    threshold: dict[str, int]
    decision: Literal["auto_continue", "ask_user", "stop"]
    phase: str | None = None
    factors: dict[str, Any] | None = None
    measured: list[str] | None = None  # factors the engine measured instead of taking the agent's score
    reported: dict[str, Any] | None = None  # the scores the agent gave, before the engine's caps


class UserInteraction(Event):
    type: Literal["USER_INTERACTION"]
    question: str | None = None
    user_response: str | None = None
    wait_duration_ms: Millis | None = None


class ReviewVerificationStart(Event):
    type: Literal["REVIEW_VERIFICATION_START"]
    files_count: int


class ReviewVerificationEnd(Event):
    type: Literal["REVIEW_VERIFICATION_END"]
    tests: str
    lint: str
    typecheck: str
    duration_ms: Millis


class ReviewParallelStart(Event):
    type: Literal["REVIEW_PARALLEL_START"]
    iteration: int
    agents: list[str]


class ReviewParallelEnd(Event):
    type: Literal["REVIEW_PARALLEL_END"]
    iteration: int
    results: list[dict[str, Any]]
    total_issues: int
    duration_ms: Millis


class AgentFailure(Event):
    type: Literal["AGENT_FAILURE"]
    agent: str
    error_code: str
    message: str
    recoverable: bool


class ReviewFixIteration(Event):
    type: Literal["REVIEW_FIX_ITERATION"]
    iteration: int
    direction: Literal["start", "end"]


class ReviewConvergence(Event):
    type: Literal["REVIEW_CONVERGENCE"]
    decision: Literal["converged", "diverged", "stopped"]
    iteration: int


class ReviewComplete(Event):
    type: Literal["REVIEW_COMPLETE"]
    total_iterations: int
    initial_issues: int
    final_issues: int
    fixed_issues: int
    termination_reason: str | None
    total_duration_ms: Millis


class AgentIO(Event):
    type: Literal["AGENT_IO"]
    agent: str
    direction: Literal["input", "output"]
    content: Any


class WarningEvent(Event):
    type: Literal["WARNING"]
    code: str
    message: str
    impact: str | None = None


class ErrorEvent(Event):
    type: Literal["ERROR"]
    code: str
    message: str
    recoverable: bool | None = None


class ContractViolation(Event):
    type: Literal["CONTRACT_VIOLATION"]
    agent: str
    error_code: str
    attempts: int
    violations: list[dict[str, Any]] = Field(default_factory=list)


EVENT_MODELS: dict[str, type[Event]] = {
    model.model_fields["type"].annotation.__args__[0]: model  # type: ignore[union-attr]
    for model in Event.__subclasses__()
}
