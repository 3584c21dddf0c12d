"""What the review verifier returns: accuracy and rule checks per finding, and the review's quality."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from fixloop.contracts.common import AgentError, AgentStatus, Contract, NonEmptyStr, Score, Severity
from fixloop.core.agent_names import VERIFIER_AGENT, agent_name
from fixloop.core.thresholds import QUALITY_PASS_SCORE


class AccuracyCheck(Contract):
    issue_id: NonEmptyStr = Field(description="The issue's id.")
    accuracy_status: Literal["CORRECT", "INCORRECT", "PARTIALLY_CORRECT"] = Field(
        description="Whether the code shows the finding is true."
    )
    evidence: NonEmptyStr = Field(description="What you saw in the code, with file and line.")
    deletion_required: bool = Field(
        description="true to drop a finding that is false, handled elsewhere, or outside the change."
    )
    deletion_reason: str | None = Field(default=None, description="Why; required when deletion_required.")

    @model_validator(mode="after")
    def _reason_for_deletion(self) -> AccuracyCheck:
        if self.deletion_required and not (self.deletion_reason or "").strip():
            raise ValueError("deletion_required needs a deletion_reason")
        return self


class RuleComplianceCheck(Contract):
    issue_id: NonEmptyStr = Field(description="The issue's id.")
    compliance_status: Literal["COMPLIANT", "VIOLATED"] = Field(
        description="VIOLATED when following the suggestion would break a rule or constraint."
    )
    violated_rules: list[str] = Field(default_factory=list, description="The rules it would break.")
    deletion_required: bool = Field(description="true when the violation makes the suggestion harmful.")
    violation_reason: str | None = Field(default=None, description="How the suggestion breaks them.")


class MissingIssue(Contract):
    description: NonEmptyStr = Field(description="The issue the reviewers missed.")
    evidence: str = Field(description="Where the code shows it.")
    suggested_severity: Severity = Field(description="The severity it deserves.")

    @field_validator("suggested_severity", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


class QualityAssessment(Contract):
    overall_score: Score = Field(
        description=f"The review's quality; below {QUALITY_PASS_SCORE} sends it back to be done again."
    )
    quality_level: Literal["EXCELLENT", "GOOD", "ACCEPTABLE", "POOR"] = Field(
        description=f"EXCELLENT 85-100, GOOD 70-84, ACCEPTABLE {QUALITY_PASS_SCORE}-69, "
        f"POOR below {QUALITY_PASS_SCORE}."
    )
    strengths: list[str] = Field(default_factory=list, description="What the review did well.")
    weaknesses: list[str] = Field(default_factory=list, description="What the review did badly.")
    missing_issues: list[MissingIssue] = Field(
        default_factory=list, description="Important issues the reviewers missed."
    )


class VerificationResult(Contract):
    accuracy_check: list[AccuracyCheck] = Field(
        default_factory=list, description="One object per issue: is the finding true?"
    )
    rule_compliance_check: list[RuleComplianceCheck] = Field(
        default_factory=list, description="One object per issue: may its suggestion be followed?"
    )
    quality_assessment: QualityAssessment = Field(description="The review as a whole.")


class VerifierOutput(Contract):
    status: AgentStatus = Field(description="success, or failed when you could not verify (then give error).")
    agent: NonEmptyStr = Field(description="Your agent name.", json_schema_extra={"enum": [VERIFIER_AGENT]})
    task_id: str | None = Field(default=None, description="The review task's task_id.")
    verification_result: VerificationResult | None = Field(
        default=None, description="Required with status success."
    )
    error: AgentError | None = Field(default=None, description="Only with status failed: why.")

    @field_validator("agent")
    @classmethod
    def _is_verifier(cls, value: str) -> str:
        if agent_name(value) != VERIFIER_AGENT:
            raise ValueError(f"must be {VERIFIER_AGENT}")
        return VERIFIER_AGENT

    @model_validator(mode="after")
    def _result_matches_status(self) -> VerifierOutput:
        if self.status == "success" and self.verification_result is None:
            raise ValueError("a successful verification needs verification_result")
        if self.status == "failed" and self.error is None:
            raise ValueError("a failed verification needs an error object")
        return self

    def issues_to_delete(self) -> dict[str, str]:
        """Issue id -> why the verifier wants the finding removed."""
        if self.verification_result is None:
            return {}
        doomed: dict[str, str] = {}
        for check in self.verification_result.accuracy_check:
            if check.deletion_required or check.accuracy_status == "INCORRECT":
                doomed[check.issue_id] = check.deletion_reason or check.evidence
        for rule in self.verification_result.rule_compliance_check:
            if rule.deletion_required:
                doomed.setdefault(rule.issue_id, rule.violation_reason or "; ".join(rule.violated_rules))
        return doomed
