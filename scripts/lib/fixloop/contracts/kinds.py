"""The document kinds `fixloop validate` and `fixloop schema` know, and the model of each."""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import BaseModel, Field, RootModel

from fixloop.contracts.bugfix import BUGFIX_MODELS
from fixloop.contracts.ci import CI_MODELS
from fixloop.contracts.coordinator import CoordinatorInput, CoordinatorOutput
from fixloop.contracts.events import (
    AgentCall,
    AgentFailure,
    AgentIO,
    AgentResult,
    AnalysisResult,
    ConfidenceDecision,
    ContractViolation,
    DataCollected,
    ErrorEvent,
    Event,
    PhaseEnd,
    PhaseStart,
    ReviewComplete,
    ReviewConvergence,
    ReviewFixIteration,
    ReviewParallelEnd,
    ReviewParallelStart,
    ReviewVerificationEnd,
    ReviewVerificationStart,
    SessionEnd,
    SessionStart,
    StepEnd,
    StepStart,
    ToolUse,
    UserInteraction,
    WarningEvent,
)
from fixloop.contracts.fixer import FixerOutput
from fixloop.contracts.plan import PLAN_MODELS
from fixloop.contracts.pr import PR_MODELS
from fixloop.contracts.reviewer import ReviewerOutput
from fixloop.contracts.task import ReviewTask
from fixloop.contracts.verifier import VerifierOutput
from fixloop.core.errors import FixloopError

UNKNOWN_KIND = "UNKNOWN_KIND"

AnyEvent = Annotated[
    Union[  # noqa: UP007 -- a discriminated union needs the Union form under python 3.10
        SessionStart,
        SessionEnd,
        PhaseStart,
        PhaseEnd,
        AgentCall,
        AgentResult,
        StepStart,
        StepEnd,
        ToolUse,
        DataCollected,
        AnalysisResult,
        ConfidenceDecision,
        UserInteraction,
        ReviewVerificationStart,
        ReviewVerificationEnd,
        ReviewParallelStart,
        ReviewParallelEnd,
        AgentFailure,
        ReviewFixIteration,
        ReviewConvergence,
        ReviewComplete,
        AgentIO,
        WarningEvent,
        ErrorEvent,
        ContractViolation,
    ],
    Field(discriminator="type"),
]


class EventDocument(RootModel[AnyEvent]):
    """One log line: the event model is chosen from EVENT_MODELS by the line's `type`."""


KINDS: dict[str, type[BaseModel]] = {
    "reviewer": ReviewerOutput,
    "fixer": FixerOutput,
    "verifier": VerifierOutput,
    "coordinator-input": CoordinatorInput,
    "coordinator-output": CoordinatorOutput,
    "review-task": ReviewTask,
    "event": EventDocument,
    **BUGFIX_MODELS,
    **PR_MODELS,
    **PLAN_MODELS,
    **CI_MODELS,
}
KINDS_WITH_STATUS: frozenset[str] = frozenset(
    {
        "reviewer",
        "fixer",
        "verifier",
        "coordinator-output",
        *BUGFIX_MODELS,
        *PR_MODELS,
        *PLAN_MODELS,
        *CI_MODELS,
    }
)
KIND_DESCRIPTIONS: dict[str, str] = {
    "reviewer": "What each of the six fixloop reviewers returns.",
    "fixer": "What the fixloop review fixer returns.",
    "verifier": "What the fixloop review verifier returns about a round of findings.",
    "coordinator-input": "The input document of the fixloop review coordinator.",
    "coordinator-output": "The result document of the fixloop review coordinator.",
    "review-task": "The review task shared by every agent call of a review round.",
    "event": "One line of a fixloop JSONL log; the fields depend on `type`.",
    "failure-analyst": "What the bugfix failure analyst returns: each failure classified.",
    "root-cause-analyst": "What the bugfix root-cause analyst returns: the cause, its evidence and scores.",
    "fix-designer": "What the bugfix fix designer returns: the plan, the proving test, risks.",
    "implementer": "What the bugfix implementer returns at each stage: the red test, then the fix.",
    "comment-classifier": "What the fix-pr-review comment classifier returns: a label per review thread.",
    "reply-writer": "What the fix-pr-review reply writer returns: one reply per review thread.",
    "task-implementer": "What the execute-plan task implementer returns: each task of a batch done or not.",
    "ci-analyst": "What the fix-ci CI analyst returns: each failure of a CI job classified, with confidence.",
}


def model_for(kind: str) -> type[BaseModel]:
    """The model of `kind`; an unknown kind is the caller's mistake: FixloopError UNKNOWN_KIND (exit 2)."""
    try:
        return KINDS[kind]
    except KeyError:
        raise FixloopError(
            UNKNOWN_KIND,
            f"Unknown document kind '{kind}'; use one of: {', '.join(KINDS)}.",
            kind=kind,
            allowed=list(KINDS),
        ) from None


def required_fields(kind: str) -> list[str]:
    """Top-level fields a document of this kind must have (for events: the fields every event has)."""
    model = Event if kind == "event" else model_for(kind)
    return [name for name, info in model.model_fields.items() if info.is_required()]
