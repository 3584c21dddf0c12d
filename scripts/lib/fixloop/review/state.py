"""The review loop's state: the run state's `review` object, as typed dictionaries, and their constructors.

The JSON on disk is exactly these dictionaries, with their keys in the order the constructors create them.
Keys that only appear once a step sets them are declared in `total=False` subclasses.
"""

from __future__ import annotations

from typing import Any, TypedDict

from fixloop.store.edits import RollbackReport

STATE_VERSION = 1

RunState = dict[str, Any]  # the run's state.json (see runs.lifecycle); the loop lives in its "review" key
AgentDocument = dict[str, Any]  # a validated reviewer, fixer or verifier answer
Problem = dict[str, Any]  # why an answer was refused: code, message, violations, hint and details
VerificationResult = dict[str, Any]  # a `fixloop verify` result (runs.verification.verify)
Snapshot = dict[str, Any]  # what store.snapshot.take returns


class Record(TypedDict):
    """One agent's answers in one step of a round: the kept answer and the attempts."""

    agent: str
    attempts: int
    invalid_attempts: int
    valid: bool
    exhausted: bool
    document: AgentDocument | None
    error: Problem | None
    last_error: Problem | None
    provenance: str | None
    agent_id: str | None
    recorded_at_ms: int | None


class Gate(TypedDict):
    """The verification before the first round."""

    requested_at_ms: int | None
    verification: VerificationResult | None
    passed: bool | None
    choice: str | None


class IssueSource(TypedDict):
    """One reviewer's report of a merged issue."""

    agent: str
    id: str
    line: int
    end_line: int | None
    confidence: int


class Issue(TypedDict):
    """A finding of a round, merged over the reviewers that reported it, with its stable id."""

    id: str
    fingerprint: str
    file: str
    line: int
    end_line: int | None
    severity: str
    confidence: int
    category: str
    rule: str | None
    description: str
    suggestion: str
    auto_fixable: bool
    existing_code: str | None
    improved_code: str | None
    agents: list[str]
    sources: list[IssueSource]


class ErrorDocument(TypedDict):
    """The coordinator contract's error object."""

    code: str
    message: str
    phase: str
    recoverable: bool
    stack_trace: str | None


class _AgentResult(TypedDict):
    agent: str
    status: str


class AgentResult(_AgentResult, total=False):
    """A reviewer's entry of the round's agents_results: issues_count on success, error on failure."""

    issues_count: int
    error: ErrorDocument


class RetryContext(TypedDict):
    attempt_number: int
    previous_errors: list[str]
    recovery_actions_taken: list[str]


# A review pass of a round that the verifier sent back ("pass" is a keyword, hence the functional form).
ReviewPass = TypedDict(
    "ReviewPass",
    {
        "pass": int,
        "agents_results": list[AgentResult],
        "issues_found": int,
        "fixable_issues": int,
        "quality_score": int,
        "quality_level": str,
        "removed_by_verifier": list[str],
    },
)


class _Verifier(TypedDict):
    requested_at_ms: int
    dispatches: int
    errors: list[str]
    record: Record | None
    done: bool
    unavailable: bool
    score: int | None
    quality_level: str | None


class BatchScore(TypedDict):
    batch: int
    issues: int
    score: int
    quality_level: str


class Verifier(_Verifier, total=False):
    """The review-verifier's step of a round; the quality details once it answered.

    A round of more fixable findings than max_findings_per_batch is verified in batches (review.batches):
    `record`, `dispatches` and `errors` are the current batch's; `deletions`, `batch_scores`,
    `unverified_batches`, `missing_issues` and `weaknesses` gather the batches answered so far.
    """

    batch: int
    batches: int
    batch_size: int
    deletions: dict[str, str]
    batch_scores: list[BatchScore]
    unverified_batches: list[int]
    missing_issues: list[dict[str, Any]]
    weaknesses: list[str]


class FixCounts(TypedDict):
    attempted: int
    succeeded: int
    failed: int


class FixError(TypedDict):
    code: str
    message: str


class _Fix(TypedDict):
    requested_at_ms: int
    issue_ids: list[str]
    snapshot: Snapshot | None
    record: Record | None
    done: bool
    result: FixCounts | None
    results: list[dict[str, Any]]
    files_claimed: list[str]
    files_changed: list[str] | None
    files_modified: list[str]
    duration_ms: int | None
    error: FixError | None


class Fix(_Fix, total=False):
    """The review-fixer's step of a round. Fixed in batches (review.batches), `record` is the current
    batch's; `results` and `files_claimed` gather the batches closed so far."""

    batch: int
    batches: int
    batch_size: int


_Round = TypedDict(
    "_Round",
    {
        "iteration": int,
        "scope": list[str],
        "pass": int,
        "retry_context": RetryContext | None,
        "quality_retries": int,
        "review_requested_at_ms": int | None,
        "records": dict[str, Record],
        "closed": bool,
        "closed_at_ms": int | None,
        "agents_results": list[AgentResult],
        "issues": list[Issue],
        "issues_found": int,
        "fixable": list[str],
        "positive_observations": list[str],
        "verifier": Verifier | None,
        "passes": list[ReviewPass],
        "removed_by_verifier": list[str],
        "removed_details": dict[str, str],
        "tracked": bool,
        "resolved_issues": list[str],
        "introduced_issues": list[str],
        "persisting_issues": list[str],
        "convergence": str | None,
        "divergence_choice": str | None,
        "fix": Fix | None,
        "verification": VerificationResult | None,
        "verification_passed": bool | None,
        "choice": str | None,
        "rolled_back": bool,
        "rollback_files": list[str],
    },
)


class Round(_Round, total=False):
    """One review round: its passes, the verifier, tracking against the previous round, fix, verification.

    missing_issues is set by a quality retry, removed_issues once the verifier's deletions are applied,
    rollback when the round's fix is rolled back (what was restored, kept, refused or left as is). A pass
    reviewed in shards (review.shards) holds them, the current one, each reviewer's folded results and, once
    closed, the files each reviewer left unreviewed.
    """

    missing_issues: list[str]
    removed_issues: list[Issue]
    rollback: RollbackReport
    shards: list[list[str]]
    shard: int
    shard_results: dict[str, dict[str, Any]]
    unreviewed: dict[str, list[str]]


class Question(TypedDict):
    context: str
    round: int
    question: str
    options: list[str]
    default: str
    asked_at_ms: int


class Interaction(TypedDict):
    context: str
    round: int
    question: str
    choice: str
    default: bool
    asked_at_ms: int | None
    answered_at_ms: int


class Outcome(TypedDict):
    status: str
    termination_reason: str | None
    error: dict[str, Any] | None
    round: int
    at_ms: int


class LastAction(TypedDict):
    action: str
    round: int | None
    at_ms: int


class Review(TypedDict):
    """The run state's `review` object."""

    version: int
    started_at_ms: int
    ended_at_ms: int | None
    gate: Gate
    rounds: list[Round]
    registry: dict[str, Any]  # issue_registry.IssueRegistry.to_json
    trend: list[int]
    consecutive_no_improvement: int
    question: Question | None
    interactions: list[Interaction]
    outcome: Outcome | None
    last_action: LastAction | None
    unverified_fixes: list[str]  # issue ids a fixer claimed without a recorded edit (absent in old states)


# ---- constructors --------------------------------------------------------------------------------


def new_review(now_ms: int) -> Review:
    return {
        "version": STATE_VERSION,
        "started_at_ms": now_ms,
        "ended_at_ms": None,
        "gate": {"requested_at_ms": None, "verification": None, "passed": None, "choice": None},
        "rounds": [],
        "registry": {"next": 1, "issues": []},
        "trend": [],
        "consecutive_no_improvement": 0,
        "question": None,
        "interactions": [],
        "outcome": None,
        "last_action": None,
        "unverified_fixes": [],
    }


def new_round(number: int, scope: list[str]) -> Round:
    return {
        "iteration": number,
        "scope": scope,
        "pass": 1,
        "retry_context": None,
        "quality_retries": 0,
        "review_requested_at_ms": None,
        "records": {},
        "closed": False,
        "closed_at_ms": None,
        "agents_results": [],
        "issues": [],
        "issues_found": 0,
        "fixable": [],
        "positive_observations": [],
        "verifier": None,
        "passes": [],
        "removed_by_verifier": [],
        "removed_details": {},
        "tracked": False,
        "resolved_issues": [],
        "introduced_issues": [],
        "persisting_issues": [],
        "convergence": None,
        "divergence_choice": None,
        "fix": None,
        "verification": None,
        "verification_passed": None,
        "choice": None,
        "rolled_back": False,
        "rollback_files": [],
    }


def new_record(agent: str) -> Record:
    return {
        "agent": agent,
        "attempts": 0,
        "invalid_attempts": 0,
        "valid": False,
        "exhausted": False,
        "document": None,
        "error": None,
        "last_error": None,
        "provenance": None,
        "agent_id": None,
        "recorded_at_ms": None,
    }


def first_retry_context() -> RetryContext:
    return {"attempt_number": 1, "previous_errors": [], "recovery_actions_taken": []}
