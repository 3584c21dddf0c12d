"""The review coordinator's input and output documents."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator

from fixloop.contracts.bounds import MAX_ISSUES_PER_ANSWER, MAX_ITEMS
from fixloop.contracts.common import AgentError, Contract, NonEmptyStr, SessionId, Severity
from fixloop.contracts.runconfig import (
    DISMISSAL_WORDS,
    LIST_PRICES,
    WRITE_ACCESS,
    AuthorAssociation,
    LowConfidenceChoice,
    ModelName,
    QuestionMode,
    VerificationChoice,
)
from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.core.thresholds import MAX_QUALITY_RETRIES

Workflow = Literal["bugfix", "pr-review", "ci-job", "execute-plan", "review"]
Stack = Literal["frontend", "backend", "e2e", "mixed"]
TerminationReason = Literal[
    "no_changes",
    "no_fixable_issues",
    "converged",
    "max_iterations",
    "issues_increased",
    "user_cancelled",
    "verification_failed",
    "budget_exhausted",
]
Dollars = Annotated[float, Field(ge=0, allow_inf_nan=False)]
# A path glob of review_include / review_exclude (runs.path_filters gives the syntax).
GlobPattern = Annotated[str, StringConstraints(min_length=1, max_length=512, pattern=r"^\S(.*\S)?$")]
# A reviewer finding category (contracts.reviewer: a short kebab-case label).
CategoryName = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_ -]*$")
]


class RoleModels(Contract):
    """The model of each role's agents (the coordinator's is set in agents/coordinator.md)."""

    reviewers: ModelName = Field(default="sonnet", description="The six reviewers.")
    verifier: ModelName = Field(default="sonnet", description="The review verifier.")
    fixer: ModelName = Field(default="sonnet", description="The review fixer.")
    analysts: ModelName = Field(default="sonnet", description="Agents that diagnose, classify or design.")
    implementer: ModelName = Field(default="sonnet", description="Agents that change code to a plan.")
    writers: ModelName = Field(default="sonnet", description="Agents that write replies.")


class Price(Contract):
    """US dollars per million tokens."""

    input: Dollars
    output: Dollars
    cache_write: Dollars
    cache_read: Dollars


DEFAULT_PRICES: dict[str, Price] = {name: Price(**values) for name, values in LIST_PRICES.items()}


class LoopConfig(Contract):
    test_command: str | None = None
    lint_command: str | None = None
    typecheck_command: str | None = None
    detect_commands: bool = Field(
        default=True,
        description="Find the usual test, lint and typecheck commands for steps left unset (null).",
    )
    max_review_iterations: Annotated[int, Field(ge=1, le=20, strict=True)] = 3
    min_required_agents: Annotated[int, Field(ge=1, le=len(REVIEWER_AGENTS), strict=True)] = 4
    confidence_threshold: Annotated[int, Field(ge=0, le=100, strict=True)] = 80
    verify_timeout_seconds: Annotated[int, Field(ge=1, le=7200, strict=True)] = 900
    use_verifier: bool = Field(
        default=True, description="Ask the review verifier to challenge fixable findings before fixing."
    )
    max_issues_per_answer: Annotated[int, Field(ge=1, le=MAX_ITEMS, strict=True)] = Field(
        default=MAX_ISSUES_PER_ANSWER,
        description="The most issues one reviewer answer may report; a longer answer is sent back.",
    )
    max_findings_per_batch: Annotated[int, Field(ge=1, le=MAX_ITEMS, strict=True)] = Field(
        default=25,
        description="The most findings one verifier or fixer call gets; a round with more is verified and "
        "fixed in consecutive batches of this size.",
    )
    max_quality_retries: Annotated[int, Field(ge=0, le=MAX_QUALITY_RETRIES, strict=True)] = (
        MAX_QUALITY_RETRIES
    )
    on_verification_failure: VerificationChoice = Field(
        default="rollback",
        description="What a run that cannot ask the user does when verification fails after a fix.",
    )
    on_low_confidence: LowConfidenceChoice = Field(
        default="stop",
        description=(
            "What a bugfix run does when its diagnosis confidence calls for the user (40-59) and no one "
            "answers: the default of that question."
        ),
    )
    questions: QuestionMode = Field(
        default="auto",
        description="auto: ask when a person is at the session, else take defaults; ask: always pause; "
        "default: never pause.",
    )
    models: RoleModels = Field(default_factory=RoleModels, description="The model of each role's agents.")
    prices: dict[str, Price] = Field(
        default_factory=lambda: dict(DEFAULT_PRICES),
        description="Prices per model family (haiku, sonnet, opus) for the cost estimate, in USD per million "
        "tokens.",
    )
    max_tokens: Annotated[int, Field(ge=1, strict=True)] | None = Field(
        default=None, description="Stop the loop before a round would pass this many tokens in all."
    )
    max_cost: Dollars | None = Field(
        default=None, description="Stop the loop before a round would pass this estimated cost in USD."
    )
    pr_include_bots: bool = Field(
        default=False, description="fix-pr-review also answers review threads opened by bots."
    )
    pr_trusted_associations: list[AuthorAssociation] = Field(
        default_factory=lambda: list(WRITE_ACCESS),
        max_length=8,
        description="fix-pr-review acts only on review threads opened by accounts whose GitHub "
        "authorAssociation is one of these (default: write access); the others are left alone and listed.",
    )
    pr_resolve_threads: bool = Field(
        default=False, description="fix-pr-review resolves a review thread once its fix is committed."
    )
    pr_dismissal_words: list[Annotated[str, Field(min_length=1, max_length=100)]] = Field(
        default_factory=lambda: list(DISMISSAL_WORDS),
        max_length=50,
        description="review publish: a reply holding one of these (any case) on a finding's thread dismisses "
        "the finding into the baseline.",
    )
    pr_post_summary: bool = Field(
        default=False, description="fix-pr-review posts a summary comment on the pull request at the end."
    )
    review_include: list[GlobPattern] = Field(
        default_factory=list,
        description="Review only files matching one of these globs (empty: every changed file).",
    )
    review_exclude: list[GlobPattern] = Field(
        default_factory=list, description="Never review files matching one of these globs."
    )
    review_shard_files: Annotated[int, Field(ge=1, le=MAX_ITEMS, strict=True)] = Field(
        default=200,
        description="A change with more files is reviewed in shards of at most this many files, one "
        "reviewer call per role and shard.",
    )
    review_shard_lines: Annotated[int, Field(ge=100, le=10_000_000, strict=True)] = Field(
        default=20_000,
        description="A shard holds files of at most this many lines in all (a larger file is a shard alone).",
    )
    min_severity: Severity = Field(
        default="low", description="Drop findings less severe than this (critical, high, medium, low)."
    )
    max_findings: Annotated[int, Field(ge=1, strict=True)] | None = Field(
        default=None,
        description="Keep at most this many findings per round: the most severe, then the most confident.",
    )
    categories: dict[CategoryName, bool] = Field(
        default_factory=dict, description='Finding categories turned on or off, e.g. {"style": false}.'
    )


class RunContext(Contract):
    workflow: Workflow
    stack: Stack = "mixed"


class LogFiles(Contract):
    jsonl: NonEmptyStr
    text: NonEmptyStr


class LoggingContext(Contract):
    enabled: bool = False
    level: Literal["info", "debug"] = "info"
    session_id: SessionId
    log_files: LogFiles | None = None


class CoordinatorInput(Contract):
    changed_files: list[str]
    config: LoopConfig = Field(default_factory=LoopConfig)
    context: RunContext
    logging: LoggingContext | None = None


StepStatus = Literal["passed", "failed", "skipped", "timeout"]


class VerificationStep(Contract):
    status: StepStatus
    duration_ms: Annotated[int, Field(ge=0)] | None = None
    reason: str | None = None
    exit_code: int | None = None
    command: str | None = None
    output_tail: str | None = None


class Verification(Contract):
    tests: VerificationStep
    lint: VerificationStep
    typecheck: VerificationStep


class AgentRunResult(Contract):
    agent: NonEmptyStr
    status: Literal["success", "failed"]
    issues_count: int | None = None
    error: AgentError | None = None


class FixCounts(Contract):
    attempted: int
    succeeded: int
    failed: int


class IssueRef(Contract):
    id: NonEmptyStr
    file: str
    description: str
    line: int | None = None
    severity: str | None = None
    category: str | None = None
    confidence: int | None = None
    agents: list[str] = Field(default_factory=list)
    auto_fixable: bool | None = None


class ReviewIteration(Contract):
    iteration: Annotated[int, Field(ge=1)]
    agents_results: list[AgentRunResult]
    issues_found: int
    fixable_issues: int
    fix_result: FixCounts | None = None
    resolved_issues: list[str] = Field(default_factory=list)
    introduced_issues: list[str] = Field(default_factory=list)
    persisting_issues: list[str] = Field(default_factory=list)
    removed_by_verifier: list[str] = Field(default_factory=list)
    suppressed: dict[str, Annotated[int, Field(ge=1)]] | None = Field(
        default=None,
        description="Findings the engine dropped in this round, per reason (baseline, inline_ignore, "
        "path_filter, category_off, below_min_severity, over_max_findings); absent when none.",
    )


class ReviewSummary(Contract):
    total_iterations: int
    initial_issues: int
    final_issues: int
    fixed_issues: int
    termination_reason: TerminationReason | None


class CoordinatorOutput(Contract):
    run_id: str | None = Field(
        default=None, description="The run this report is of (`fixloop review report --format json`)."
    )
    status: Literal["success", "partial", "failed", "user_cancelled", "dry_run_complete"]
    agent: Literal["review-coordinator"] = "review-coordinator"
    verification: Verification | None = None
    review_iterations: list[ReviewIteration] = Field(default_factory=list)
    summary: ReviewSummary | None = None
    fixed_issues: list[IssueRef] | None = None
    remaining_issues: list[IssueRef] | None = None
    introduced_issues: list[IssueRef] | None = None
    positive_observations: list[str] | None = None
    files_modified: list[str] | None = None
    message: str | None = None
    error: dict[str, Any] | None = None
    usage: dict[str, Any] | None = Field(
        default=None,
        description="Tokens of the run's agent calls as Claude Code reported them, in all, per agent and per "
        "round, with an estimated cost.",
    )

    @model_validator(mode="after")
    def _shape_matches_status(self) -> CoordinatorOutput:
        if self.status == "failed" and self.error is None:
            raise ValueError("a failed coordinator result needs an error object")
        if self.status != "failed" and self.summary is None:
            raise ValueError("a finished review needs a summary")
        return self
