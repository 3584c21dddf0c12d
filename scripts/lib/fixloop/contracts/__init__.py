"""Pydantic models for every JSON document that crosses an agent boundary."""

from fixloop.contracts.coordinator import CoordinatorInput, CoordinatorOutput
from fixloop.contracts.fixer import FixerOutput
from fixloop.contracts.reviewer import ReviewerIssue, ReviewerOutput
from fixloop.contracts.task import ReviewTask
from fixloop.contracts.verifier import VerifierOutput

__all__ = [
    "CoordinatorInput",
    "CoordinatorOutput",
    "FixerOutput",
    "ReviewTask",
    "ReviewerIssue",
    "ReviewerOutput",
    "VerifierOutput",
]
