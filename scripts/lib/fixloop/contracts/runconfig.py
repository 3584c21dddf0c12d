"""A run's configuration as the engine reads it on every step, without loading pydantic.

The config in a run's state is LoopConfig's `model_dump(mode="json")` from when the run started, so it holds
every field with a valid value. `run_config(document)` checks that cheaply, field by field, and builds a
frozen `RunConfig`. Anything it does not accept (a field missing from a run started by an older version,
an unknown key, a value out of bounds or of another type) is given to LoopConfig, which fills defaults or
refuses exactly as before; pydantic loads only then. The checks here accept only what LoopConfig accepts,
and return what it returns: tests/unit/contracts/test_runconfig.py holds them to that.
"""

from __future__ import annotations

import math
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from fixloop.contracts.bounds import MAX_ISSUES_PER_ANSWER, MAX_ITEMS
from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.core.thresholds import MAX_QUALITY_RETRIES

# The current model of that family. The hooks pass it as the Agent tool's `model`, which takes only these
# aliases: Claude Code (2.1.328) refuses the whole call when it is given a full model id.
ModelName = Literal["haiku", "sonnet", "opus"]
VerificationChoice = Literal["rollback", "continue", "manual"]
QuestionMode = Literal["auto", "ask", "default"]
LowConfidenceChoice = Literal["continue", "stop"]
SeverityName = Literal["critical", "high", "medium", "low"]
# GitHub's CommentAuthorAssociation: how a comment's author is related to the repository.
AuthorAssociation = Literal[
    "OWNER",
    "MEMBER",
    "COLLABORATOR",
    "CONTRIBUTOR",
    "FIRST_TIME_CONTRIBUTOR",
    "FIRST_TIMER",
    "MANNEQUIN",
    "NONE",
]
# The associations of accounts with write access: whose review threads fix-pr-review acts on by default.
WRITE_ACCESS: tuple[AuthorAssociation, ...] = ("OWNER", "MEMBER", "COLLABORATOR")
# What a reply on a finding's thread says when a person dismisses the finding (review publish).
DISMISSAL_WORDS = ("won't fix", "wont fix", "false positive", "not a bug", "by design", "dismiss")

# (lowest, highest or None) of each integer field; LoopConfig's Field(ge=..., le=...) are the same.
INT_BOUNDS: dict[str, tuple[int, int | None]] = {
    "max_review_iterations": (1, 20),
    "min_required_agents": (1, len(REVIEWER_AGENTS)),
    "confidence_threshold": (0, 100),
    "verify_timeout_seconds": (1, 7200),
    "max_issues_per_answer": (1, MAX_ITEMS),
    "max_findings_per_batch": (1, MAX_ITEMS),
    "max_quality_retries": (0, MAX_QUALITY_RETRIES),
    "review_shard_files": (1, MAX_ITEMS),
    "review_shard_lines": (100, 10_000_000),
    "max_tokens": (1, None),
    "max_findings": (1, None),
}
# Verification step -> the config field holding its command.
COMMAND_FIELDS: dict[str, str] = {
    "tests": "test_command",
    "lint": "lint_command",
    "typecheck": "typecheck_command",
}
MAX_TRUSTED_ASSOCIATIONS = 8
MAX_DISMISSAL_WORDS = 50
MAX_DISMISSAL_WORD_CHARS = 100
MAX_GLOB_CHARS = 512
# An integer dollar amount converts to a float exactly up to here; a larger one is left to LoopConfig.
_LARGEST_FLOAT_INT = 2**53
_CATEGORY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_ -]{0,63}")


@dataclass(frozen=True)
class RunModels:
    """The model of each role's agents (LoopConfig.models)."""

    reviewers: ModelName = "sonnet"
    verifier: ModelName = "sonnet"
    fixer: ModelName = "sonnet"
    analysts: ModelName = "sonnet"
    implementer: ModelName = "sonnet"
    writers: ModelName = "sonnet"


@dataclass(frozen=True)
class RunPrice:
    """US dollars per million tokens (LoopConfig.prices' values)."""

    input: float
    output: float
    cache_write: float
    cache_read: float


# The list prices per model family, USD per million tokens: the default `prices` (LoopConfig's too).
LIST_PRICES: dict[str, dict[str, float]] = {
    "haiku": {"input": 1.0, "output": 5.0, "cache_write": 1.25, "cache_read": 0.1},
    "sonnet": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3},
    "opus": {"input": 5.0, "output": 25.0, "cache_write": 6.25, "cache_read": 0.5},
}


def _default_prices() -> dict[str, RunPrice]:
    return {name: RunPrice(**values) for name, values in LIST_PRICES.items()}


@dataclass(frozen=True)
class RunConfig:
    """LoopConfig's fields, same names, types and defaults (contracts.coordinator gives their meaning)."""

    test_command: str | None = None
    lint_command: str | None = None
    typecheck_command: str | None = None
    detect_commands: bool = True
    max_review_iterations: int = 3
    min_required_agents: int = 4
    confidence_threshold: int = 80
    verify_timeout_seconds: int = 900
    use_verifier: bool = True
    max_issues_per_answer: int = MAX_ISSUES_PER_ANSWER
    max_findings_per_batch: int = 25
    max_quality_retries: int = MAX_QUALITY_RETRIES
    on_verification_failure: VerificationChoice = "rollback"
    on_low_confidence: LowConfidenceChoice = "stop"
    questions: QuestionMode = "auto"
    models: RunModels = field(default_factory=RunModels)
    prices: dict[str, RunPrice] = field(default_factory=_default_prices)
    max_tokens: int | None = None
    max_cost: float | None = None
    pr_include_bots: bool = False
    pr_trusted_associations: list[AuthorAssociation] = field(default_factory=lambda: list(WRITE_ACCESS))
    pr_resolve_threads: bool = False
    pr_dismissal_words: list[str] = field(default_factory=lambda: list(DISMISSAL_WORDS))
    pr_post_summary: bool = False
    review_include: list[str] = field(default_factory=list)
    review_exclude: list[str] = field(default_factory=list)
    review_shard_files: int = 200
    review_shard_lines: int = 20_000
    min_severity: SeverityName = "low"
    max_findings: int | None = None
    categories: dict[str, bool] = field(default_factory=dict)


FIELD_NAMES: tuple[str, ...] = tuple(item.name for item in fields(RunConfig))
_MODEL_ROLES: tuple[str, ...] = tuple(item.name for item in fields(RunModels))
_PRICE_PARTS: tuple[str, ...] = tuple(item.name for item in fields(RunPrice))


def run_config(document: object) -> RunConfig:
    """The run's config from its stored dict; LoopConfig validates what the fast checks do not accept (a
    ValidationError when it is invalid, as before). A document that is not a dict reads as {} (defaults)."""
    raw: Mapping[str, Any] = document if isinstance(document, dict) else {}
    if _acceptable(raw):
        return _built(raw)
    from fixloop.contracts.coordinator import LoopConfig

    return _built(LoopConfig.model_validate(raw).model_dump(mode="json"))


def _built(document: Mapping[str, Any]) -> RunConfig:
    values = dict(document)
    values["models"] = RunModels(**document["models"])
    values["prices"] = {
        name: RunPrice(**{part: float(price[part]) for part in _PRICE_PARTS})
        for name, price in document["prices"].items()
    }
    values["max_cost"] = None if document["max_cost"] is None else float(document["max_cost"])
    for name in ("pr_trusted_associations", "pr_dismissal_words", "review_include", "review_exclude"):
        values[name] = list(document[name])
    values["categories"] = dict(document["categories"])
    return RunConfig(**values)


def _acceptable(document: Mapping[str, Any]) -> bool:
    return set(document) == set(FIELD_NAMES) and all(_CHECKS[name](document[name]) for name in FIELD_NAMES)


def _optional_str(value: object) -> bool:
    return value is None or isinstance(value, str)


def _bool(value: object) -> bool:
    return value is True or value is False


def _int_in(name: str) -> Callable[[object], bool]:
    lowest, highest = INT_BOUNDS[name]
    optional = name in ("max_tokens", "max_findings")

    def check(value: object) -> bool:
        if value is None:
            return optional
        return type(value) is int and value >= lowest and (highest is None or value <= highest)

    return check


def _one_of(choices: Any) -> Callable[[object], bool]:
    allowed = frozenset(typing.get_args(choices))
    return lambda value: isinstance(value, str) and value in allowed


def _dollars(value: object) -> bool:
    if type(value) is int:
        return 0 <= value <= _LARGEST_FLOAT_INT
    return type(value) is float and math.isfinite(value) and value >= 0


def _optional_dollars(value: object) -> bool:
    return value is None or _dollars(value)


def _models(value: object) -> bool:
    model_name = _one_of(ModelName)
    return (
        isinstance(value, dict)
        and set(value) == set(_MODEL_ROLES)
        and all(model_name(value[role]) for role in _MODEL_ROLES)
    )


def _prices(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(name, str)
        and isinstance(price, dict)
        and set(price) == set(_PRICE_PARTS)
        and all(_dollars(price[part]) for part in _PRICE_PARTS)
        for name, price in value.items()
    )


def _str_list(item: Callable[[object], bool], longest: int | None) -> Callable[[object], bool]:
    def check(value: object) -> bool:
        return (
            isinstance(value, list)
            and (longest is None or len(value) <= longest)
            and all(item(entry) for entry in value)
        )

    return check


def _dismissal_word(value: object) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= MAX_DISMISSAL_WORD_CHARS


def _glob(value: object) -> bool:
    # LoopConfig's pattern is ^\S(.*\S)?$: no surrounding whitespace, no line feed. str.strip removes every
    # character the pattern counts as whitespace (and a few more), so this never accepts what it refuses.
    return (
        isinstance(value, str)
        and 1 <= len(value) <= MAX_GLOB_CHARS
        and "\n" not in value
        and value == value.strip()
    )


def _categories(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(name, str) and _CATEGORY_NAME.fullmatch(name) is not None and _bool(on)
        for name, on in value.items()
    )


_CHECKS: dict[str, Callable[[object], bool]] = {
    "test_command": _optional_str,
    "lint_command": _optional_str,
    "typecheck_command": _optional_str,
    "detect_commands": _bool,
    **{name: _int_in(name) for name in INT_BOUNDS},
    "use_verifier": _bool,
    "on_verification_failure": _one_of(VerificationChoice),
    "on_low_confidence": _one_of(LowConfidenceChoice),
    "questions": _one_of(QuestionMode),
    "models": _models,
    "prices": _prices,
    "max_cost": _optional_dollars,
    "pr_include_bots": _bool,
    "pr_trusted_associations": _str_list(_one_of(AuthorAssociation), MAX_TRUSTED_ASSOCIATIONS),
    "pr_resolve_threads": _bool,
    "pr_dismissal_words": _str_list(_dismissal_word, MAX_DISMISSAL_WORDS),
    "pr_post_summary": _bool,
    "review_include": _str_list(_glob, None),
    "review_exclude": _str_list(_glob, None),
    "min_severity": _one_of(SeverityName),
    "categories": _categories,
}
