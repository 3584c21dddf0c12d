"""What each of the six reviewers returns."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from pydantic import Field, field_validator, model_validator

from fixloop.contracts.common import (
    AgentError,
    AgentStatus,
    Confidence,
    Contract,
    LineNumber,
    NonEmptyStr,
    Severity,
)
from fixloop.contracts.repo_paths import repo_relative_path
from fixloop.core.agent_names import REVIEWER_AGENTS, agent_name

# The simple array's issue field names, accepted as input, and the reviewer-issue fields they stand for.
SUPERVISOR_FIELD_MAP: dict[str, str] = {
    "relevantFile": "file",
    "existingCode": "existing_code",
    "suggestionContent": "description",
    "improvedCode": "improved_code",
    "label": "category",
    "suggestionLine": "line",
}
SUPERVISOR_LABELS = ("Quality", "Security", "Performance", "Functionality")
_LINE_TEXT = re.compile(r"[0-9]{1,20}")  # a line number given as text (ASCII digits; int() takes others)


class ReviewerIssue(Contract):
    id: NonEmptyStr = Field(description="Unique in this document: your id prefix and a number, e.g. CR-001.")
    severity: Severity = Field(
        description="critical: security hole, data loss, crash in normal use; high: wrong behaviour likely; "
        "medium: robustness or maintainability cost; low: minor."
    )
    confidence: Confidence = Field(description="How sure you are that the issue is real.")
    file: NonEmptyStr = Field(description="Path relative to the repository root.")
    line: LineNumber = Field(description="First line of the issue.")
    end_line: LineNumber | None = Field(default=None, description="Last line of the issue, not before line.")
    category: NonEmptyStr = Field(description="Short kebab-case label, e.g. logic-error.")
    rule: str | None = Field(default=None, description="The written rule or convention broken, and its file.")
    description: NonEmptyStr = Field(description="What is wrong and why it matters.")
    suggestion: str = Field(description="The concrete change to make.")
    auto_fixable: bool = Field(
        description="true when a fixer can make the change locally, with no design decision."
    )
    existing_code: str | None = Field(default=None, description="The code at fault, a short excerpt.")
    improved_code: str | None = Field(default=None, description="The code as it should be, a short excerpt.")

    @model_validator(mode="before")
    @classmethod
    def _accept_supervisor_fields(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        renamed = dict(data)
        for source, target in SUPERVISOR_FIELD_MAP.items():
            if source in renamed and target not in renamed:
                renamed[target] = renamed.pop(source)
        line = renamed.get("line")
        if isinstance(line, str) and _LINE_TEXT.fullmatch(line.strip()):
            renamed["line"] = int(line.strip())
        if isinstance(renamed.get("severity"), str):
            renamed["severity"] = renamed["severity"].strip().lower()
        if "label" in data and isinstance(renamed.get("category"), str):
            renamed["category"] = renamed["category"].strip().lower()
        return renamed

    @field_validator("file")
    @classmethod
    def _repo_relative(cls, value: str) -> str:
        return repo_relative_path(value)

    @model_validator(mode="after")
    def _range_is_ordered(self) -> ReviewerIssue:
        if self.end_line is not None and self.end_line < self.line:
            raise ValueError(f"end_line ({self.end_line}) must not be before line ({self.line})")
        return self

    def supervisor_label(self) -> str:
        for label in SUPERVISOR_LABELS:
            if self.category.lower() == label.lower():
                return label
        return "Quality"

    def to_supervisor_item(self) -> dict[str, Any]:
        """The simple-array item of this issue."""
        return {
            "relevantFile": self.file,
            "existingCode": self.existing_code or "",
            "suggestionContent": self.description,
            "improvedCode": self.improved_code or self.suggestion,
            "label": self.supervisor_label(),
            "suggestionLine": self.line,
        }


class ReviewerOutput(Contract):
    status: AgentStatus = Field(description="success, or failed when you could not review (then give error).")
    agent: NonEmptyStr = Field(
        description="Your own agent name.", json_schema_extra={"enum": list(REVIEWER_AGENTS)}
    )
    issues: list[ReviewerIssue] = Field(
        default_factory=list, description="One object per issue at or above the confidence threshold."
    )
    positive_observations: list[str] = Field(default_factory=list, description="Things done well.")
    error: AgentError | None = Field(default=None, description="Only with status failed: why.")

    @field_validator("agent")
    @classmethod
    def _known_reviewer(cls, value: str) -> str:
        name = agent_name(value)
        if name not in REVIEWER_AGENTS:
            raise ValueError(f"must be one of {', '.join(REVIEWER_AGENTS)}")
        return name

    @model_validator(mode="after")
    def _error_matches_status(self) -> ReviewerOutput:
        if self.status == "failed" and self.error is None:
            raise ValueError("a failed result needs an error object (code, message, phase, recoverable)")
        if self.status == "success" and self.error is not None:
            raise ValueError("a successful result must not carry an error object")
        counts = Counter(issue.id for issue in self.issues)
        duplicates = sorted(i for i, n in counts.items() if n > 1)
        if duplicates:
            raise ValueError(f"issue ids must be unique; repeated: {', '.join(duplicates)}")
        return self
