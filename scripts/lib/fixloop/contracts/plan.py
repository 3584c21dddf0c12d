"""What the agent of `/fixloop:execute-plan` returns: the task implementer, once per batch of plan tasks.

The field descriptions are the contract text the agent is sent."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from fixloop.contracts.common import AgentError, AgentStatus, Contract, NonEmptyStr, RepoPath
from fixloop.core.agent_names import agent_name

TASK_IMPLEMENTER = "task-implementer"
TaskId = Annotated[int, Field(ge=1, le=999_999_999, strict=True)]
TaskStatus = Literal["done", "failed"]


class TaskOutcome(Contract):
    task_id: TaskId = Field(description="The task's id, exactly as given.")
    status: TaskStatus = Field(description="done: the task is carried out; failed: it is not (say why).")
    files: list[RepoPath] = Field(
        default_factory=list, description="The files you changed, created or deleted for this task."
    )
    reason: str | None = Field(default=None, description="Required with failed: what stopped you.")

    @model_validator(mode="after")
    def _failed_says_why(self) -> TaskOutcome:
        if self.status == "failed" and not (self.reason and self.reason.strip()):
            raise ValueError("a failed task needs its reason")
        return self


class TaskImplementerOutput(Contract):
    status: AgentStatus = Field(
        description="success: you worked through the batch (each task's outcome in tasks); failed: see error."
    )
    agent: NonEmptyStr = Field(description="Your agent name.", json_schema_extra={"enum": [TASK_IMPLEMENTER]})
    tasks: list[TaskOutcome] = Field(
        default_factory=list, description="One entry per task given, in any order."
    )
    files_modified: list[RepoPath] = Field(
        default_factory=list, description="Every file you changed, created or deleted, for all tasks."
    )
    summary: str | None = Field(default=None, description="What you did, in one or two sentences.")
    error: AgentError | None = Field(
        default=None, description="Only with status failed: why you could not work on the batch at all."
    )

    @field_validator("agent")
    @classmethod
    def _is_agent(cls, value: str) -> str:
        if agent_name(value) != TASK_IMPLEMENTER:
            raise ValueError(f"must be {TASK_IMPLEMENTER}")
        return TASK_IMPLEMENTER

    @model_validator(mode="after")
    def _complete(self) -> TaskImplementerOutput:
        if self.status == "failed" and self.error is None:
            raise ValueError("a failed answer needs an error object")
        if self.status == "success" and not self.tasks:
            raise ValueError("a successful answer gives the outcome of each task")
        ids = [item.task_id for item in self.tasks]
        repeated = sorted({task_id for task_id in ids if ids.count(task_id) > 1})
        if repeated:
            raise ValueError(f"each task once; repeated: {', '.join(str(task_id) for task_id in repeated)}")
        return self


PLAN_MODELS: dict[str, type[Contract]] = {TASK_IMPLEMENTER: TaskImplementerOutput}
