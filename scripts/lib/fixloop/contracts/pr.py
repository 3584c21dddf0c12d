"""What the agents of `/fixloop:fix-pr-review` return: the comment classifier and the reply writer."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from fixloop.contracts.common import AgentError, Confidence, Contract, NonEmptyStr
from fixloop.core.agent_names import agent_name

CLASSIFIER_AGENT = "comment-classifier"
REPLY_WRITER_AGENT = "reply-writer"
MAX_REPLY_CHARS = 60_000  # GitHub takes 65,536; the engine adds its marker
CommentLabel = Literal["fix", "answer", "disagree", "unclear"]
ReplyBody = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_REPLY_CHARS)]


def _named(value: str, expected: str) -> str:
    if agent_name(value) != expected:
        raise ValueError(f"must be {expected}")
    return expected


def _unique_threads(ids: list[str]) -> None:
    repeated = sorted({thread for thread in ids if ids.count(thread) > 1})
    if repeated:
        raise ValueError(f"each thread once; repeated: {', '.join(repeated)}")


class ThreadLabel(Contract):
    thread_id: NonEmptyStr = Field(description="The thread's id, exactly as given.")
    label: CommentLabel = Field(
        description="fix: the code should change; answer: reply without a change; disagree: the request "
        "would not improve the code; unclear: what is asked cannot be told."
    )
    confidence: Confidence = Field(description="How sure you are of the label, 0-100.")
    reason: NonEmptyStr = Field(description="Why, in one or two sentences a reviewer would accept.")
    suggestion: str | None = Field(
        default=None, description="For fix: the change to make, precisely enough for another engineer."
    )


class ClassifierOutput(Contract):
    status: Literal["success", "failed"] = Field(description="failed only when you could not work at all.")
    agent: NonEmptyStr = Field(description="Your agent name.", json_schema_extra={"enum": [CLASSIFIER_AGENT]})
    classifications: list[ThreadLabel] = Field(
        default_factory=list, description="One object per thread given, in any order."
    )
    error: AgentError | None = Field(default=None, description="Only with status failed: what went wrong.")

    @field_validator("agent")
    @classmethod
    def _is_classifier(cls, value: str) -> str:
        return _named(value, CLASSIFIER_AGENT)

    @model_validator(mode="after")
    def _consistent(self) -> ClassifierOutput:
        _unique_threads([item.thread_id for item in self.classifications])
        if self.status == "failed" and self.error is None:
            raise ValueError("a failed answer needs an error object")
        return self


class ThreadReply(Contract):
    thread_id: NonEmptyStr = Field(description="The thread's id, exactly as given.")
    body: ReplyBody = Field(
        description="The reply, in GitHub Markdown, addressed to the reviewer; no signature."
    )


class ReplyWriterOutput(Contract):
    status: Literal["success", "failed"] = Field(description="failed only when you could not work at all.")
    agent: NonEmptyStr = Field(
        description="Your agent name.", json_schema_extra={"enum": [REPLY_WRITER_AGENT]}
    )
    replies: list[ThreadReply] = Field(default_factory=list, description="One reply per thread given.")
    error: AgentError | None = Field(default=None, description="Only with status failed: what went wrong.")

    @field_validator("agent")
    @classmethod
    def _is_writer(cls, value: str) -> str:
        return _named(value, REPLY_WRITER_AGENT)

    @model_validator(mode="after")
    def _consistent(self) -> ReplyWriterOutput:
        _unique_threads([item.thread_id for item in self.replies])
        if self.status == "failed" and self.error is None:
            raise ValueError("a failed answer needs an error object")
        return self


PR_MODELS: dict[str, type[Contract]] = {
    CLASSIFIER_AGENT: ClassifierOutput,
    REPLY_WRITER_AGENT: ReplyWriterOutput,
}
