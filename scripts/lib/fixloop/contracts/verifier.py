"""What the review verifier (the supervisor design's Verify agent) returns."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from fixloop.contracts.common import AgentError, AgentStatus, Contract, NonEmptyStr, Score, Severity
from fixloop.core.agent_names import VERIFIER_AGENT, agent_name


class AccuracyCheck(Contract):
    issue_id: NonEmptyStr
    accuracy_status: Literal["CORRECT", "INCORRECT", "PARTIALLY_CORRECT"]
    evidence: NonEmptyStr
    deletion_required: bool
    deletion_reason: str | None = None

    @model_validator(mode="after")
    def _reason_for_deletion(self) -> AccuracyCheck:
        if self.deletion_required and not (self.deletion_reason or "").strip():
            raise ValueError("deletion_required needs a deletion_reason")
        return self


class RuleComplianceCheck(Contract):
    issue_id: NonEmptyStr
    compliance_status: Literal["COMPLIANT", "VIOLATED"]
    violated_rules: list[str] = Field(default_factory=list)
    deletion_required: bool
    violation_reason: str | None = None


class MissingIssue(Contract):
    description: NonEmptyStr
    evidence: str
    suggested_severity: Severity

    @field_validator("suggested_severity", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


class QualityAssessment(Contract):
    overall_score: Score
    quality_level: Literal["EXCELLENT", "GOOD", "ACCEPTABLE", "POOR"]
    strengths: list[str] = Field(default_factory=list)
    weaknesses: list[str] = Field(default_factory=list)
    missing_issues: list[MissingIssue] = Field(default_factory=list)


class VerificationResult(Contract):
    accuracy_check: list[AccuracyCheck] = Field(default_factory=list)
    rule_compliance_check: list[RuleComplianceCheck] = Field(default_factory=list)
    quality_assessment: QualityAssessment


class VerifierOutput(Contract):
    status: AgentStatus
    agent: NonEmptyStr
    task_id: str | None = None
    verification_result: VerificationResult | None = None
    error: AgentError | None = None

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
