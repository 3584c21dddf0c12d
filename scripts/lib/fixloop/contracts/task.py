"""The review task: one document shared by every reviewer of a round."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from fixloop.contracts.common import Contract, NonEmptyStr


class RetryContext(Contract):
    attempt_number: Annotated[int, Field(ge=1, strict=True)] = 1
    previous_errors: list[str] = Field(default_factory=list)
    recovery_actions_taken: list[str] = Field(default_factory=list)


class ReviewTask(Contract):
    task_id: NonEmptyStr
    review_type: Literal["diff", "file", "snippet"]
    working_directory: NonEmptyStr
    task_desc: str | None = None
    priority_focus: list[str] = Field(default_factory=list)
    extra_requirements: list[str] = Field(default_factory=list)
    retry_context: RetryContext = Field(default_factory=RetryContext)

    @field_validator("working_directory")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must be an absolute path")
        return value
