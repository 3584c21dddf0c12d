"""Validate an agent's raw final message against the contract of its KIND.

`validate_text(kind, raw)` returns the normalized document or raises `FixloopError` (exit_code 1) whose
document is `{"status": "failed", "error": {...}}` with `error.code` one of:

- NULL_RESPONSE, JSON_PARSE_ERROR, TRUNCATION_DATA_LOSS: see `fixloop.contracts.extract`.
- MISSING_STATUS: the document is an object without `status` (or with `"status": null`) for a kind that
  has one (reviewer, fixer, verifier, coordinator-output).
- SCHEMA_VIOLATION: the document breaks the contract.

MISSING_STATUS and SCHEMA_VIOLATION carry `kind`, `violations` (every problem, at most MAX_VIOLATIONS:
`{"path": "$.issues[0].confidence", "message": "must be an integer from 0 to 100; got '85%'", "type":
"int_type"}`; `type` is pydantic's error type), `violation_count` and `hint`. Every error carries `kind` and
a `hint`: a short instruction to quote back to the agent.

The normalized document is `model_dump(mode="json")` with nothing excluded: every field of the contract is
present (defaults and nulls included) so its shape is the same whatever the agent omitted; the agent's values
are kept as validated (supervisor field names renamed, severities lowercased, agent names made canonical).
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union

import annotated_types
from pydantic import BaseModel, Field, RootModel, StringConstraints, ValidationError
from pydantic.fields import FieldInfo

from fixloop.contracts.coordinator import CoordinatorInput, CoordinatorOutput
from fixloop.contracts.events import (
    EVENT_MODELS,
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
from fixloop.contracts.extract import extract
from fixloop.contracts.fixer import FixerOutput
from fixloop.contracts.reviewer import ReviewerOutput
from fixloop.contracts.task import ReviewTask
from fixloop.contracts.verifier import VerifierOutput
from fixloop.core.errors import FixloopError

MISSING_STATUS = "MISSING_STATUS"
SCHEMA_VIOLATION = "SCHEMA_VIOLATION"
UNKNOWN_KIND = "UNKNOWN_KIND"
MAX_VIOLATIONS = 1000
HINT_VIOLATIONS = 5

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
}
KINDS_WITH_STATUS: frozenset[str] = frozenset({"reviewer", "fixer", "verifier", "coordinator-output"})
KIND_DESCRIPTIONS: dict[str, str] = {
    "reviewer": "What each of the six fixloop reviewers returns.",
    "fixer": "What the fixloop review fixer returns.",
    "verifier": "What the fixloop review verifier returns about a round of findings.",
    "coordinator-input": "The input document of the fixloop review coordinator.",
    "coordinator-output": "The result document of the fixloop review coordinator.",
    "review-task": "The review task shared by every agent call of a review round.",
    "event": "One line of a fixloop JSONL log; the fields depend on `type`.",
}

# One realistic document per kind: shown in the generated schemas ("examples") and used by the tests.
KIND_EXAMPLES: dict[str, dict[str, Any]] = {
    "reviewer": {
        "status": "success",
        "agent": "silent-failure-hunter",
        "issues": [
            {
                "id": "SFH-001",
                "severity": "high",
                "confidence": 90,
                "file": "src/api/handler.py",
                "line": 42,
                "end_line": 47,
                "category": "error-handling",
                "description": "The except block swallows the database error and returns an empty list.",
                "suggestion": "Log the error with context and re-raise it.",
                "auto_fixable": True,
                "existing_code": "except Exception:\n    return []",
                "improved_code": "except DatabaseError:\n    log.exception('query failed')\n    raise",
            }
        ],
        "positive_observations": ["Input validation is thorough."],
    },
    "fixer": {
        "status": "partial",
        "agent": "review-fixer",
        "results": [
            {"issue_id": "SFH-001", "status": "succeeded", "files": ["src/api/handler.py"]},
            {"issue_id": "CR-002", "status": "skipped", "reason": "needs a design decision"},
        ],
        "files_modified": ["src/api/handler.py"],
    },
    "verifier": {
        "status": "success",
        "agent": "review-verifier",
        "task_id": "review-a1b2c3d4-r1",
        "verification_result": {
            "accuracy_check": [
                {
                    "issue_id": "SFH-001",
                    "accuracy_status": "CORRECT",
                    "evidence": "handler.py:42 catches Exception and returns [].",
                    "deletion_required": False,
                }
            ],
            "rule_compliance_check": [
                {"issue_id": "SFH-001", "compliance_status": "COMPLIANT", "deletion_required": False}
            ],
            "quality_assessment": {
                "overall_score": 82,
                "quality_level": "GOOD",
                "strengths": ["Findings cite exact lines."],
                "weaknesses": [],
                "missing_issues": [],
            },
        },
    },
    "coordinator-input": {
        "changed_files": ["src/api/handler.py", "tests/test_handler.py"],
        "config": {"test_command": "make test", "max_review_iterations": 3, "min_required_agents": 4},
        "context": {"workflow": "bugfix", "stack": "backend"},
        "logging": {"enabled": False, "level": "info", "session_id": "a1b2c3d4"},
    },
    "coordinator-output": {
        "status": "success",
        "agent": "review-coordinator",
        "verification": {
            "tests": {"status": "passed", "duration_ms": 12000},
            "lint": {"status": "passed", "duration_ms": 3000},
            "typecheck": {"status": "skipped", "reason": "no typecheck_command configured"},
        },
        "review_iterations": [
            {
                "iteration": 1,
                "agents_results": [{"agent": "code-reviewer", "status": "success", "issues_count": 1}],
                "issues_found": 1,
                "fixable_issues": 1,
                "fix_result": {"attempted": 1, "succeeded": 1, "failed": 0},
            }
        ],
        "summary": {
            "total_iterations": 1,
            "initial_issues": 1,
            "final_issues": 0,
            "fixed_issues": 1,
            "termination_reason": "no_fixable_issues",
        },
        "fixed_issues": [
            {"id": "CR-001", "file": "src/api/handler.py", "description": "Added error handling"}
        ],
        "remaining_issues": [],
        "files_modified": ["src/api/handler.py"],
    },
    "review-task": {
        "task_id": "review-a1b2c3d4-r1",
        "review_type": "diff",
        "working_directory": "/home/dev/project",
        "priority_focus": ["Security"],
        "retry_context": {"attempt_number": 1, "previous_errors": [], "recovery_actions_taken": []},
    },
    "event": {
        "ts": "2024-12-06T14:30:52.123Z",
        "level": "I",
        "type": "PHASE_START",
        "session_id": "a1b2c3d4",
        "phase": "phase_5",
        "phase_name": "Review",
        "agents": ["review-coordinator"],
    },
}


def model_for(kind: str) -> type[BaseModel]:
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


def parse_text(kind: str, raw: bytes | str) -> BaseModel:
    """The validated model instance for an agent's raw message (for `event`: an EventDocument; see .root)."""
    try:
        document = extract(raw, required_fields(kind)).document
    except FixloopError as error:
        raise _with_kind(error, kind) from None
    return parse_document(kind, document)


def parse_document(kind: str, document: Any) -> BaseModel:
    """The validated model instance for an already-parsed JSON value."""
    model = model_for(kind)
    try:
        return model.model_validate(document)
    except ValidationError as error:
        violations = violations_from(kind, error)
    except RecursionError:
        violations = [{"path": "$", "message": "is nested too deeply", "type": "recursion"}]
    raise violation_error(kind, document, violations) from None


def validate_text(kind: str, raw: bytes | str) -> dict[str, Any]:
    """The normalized document (a JSON-ready dict) for an agent's raw message, or a FixloopError."""
    return normalize(kind, parse_text(kind, raw))


def validate_document(kind: str, document: Any) -> dict[str, Any]:
    return normalize(kind, parse_document(kind, document))


def normalize(kind: str, instance: BaseModel) -> dict[str, Any]:
    """`model_dump(mode="json")`: every field, defaults and nulls included."""
    try:
        dumped = instance.model_dump(mode="json")
    except (ValueError, RecursionError):  # pydantic refuses to serialize about 255+ levels of nesting
        violation = {"path": "$", "message": "is nested too deeply to store", "type": "too_deep"}
        raise violation_error(kind, None, [violation]) from None
    assert isinstance(dumped, dict)
    return dumped


# --- errors --------------------------------------------------------------------------------------------


def _with_kind(error: FixloopError, kind: str) -> FixloopError:
    details = {"kind": kind, **error.details}
    return FixloopError(error.code, error.message, error.exit_code, **details)


def violation_error(kind: str, document: Any, violations: list[dict[str, str]]) -> FixloopError:
    count = len(violations)
    shown = violations[:MAX_VIOLATIONS]
    status_missing = (
        kind in KINDS_WITH_STATUS and isinstance(document, dict) and document.get("status") is None
    )
    listing = "; ".join(f"{v['path']} {v['message']}" for v in shown[:HINT_VIOLATIONS])
    if count > HINT_VIOLATIONS:
        listing += f"; and {count - HINT_VIOLATIONS} more"
    plural = "problem" if count == 1 else "problems"
    if status_missing:
        allowed = _literal_values(model_for(kind).model_fields["status"].annotation)
        return FixloopError(
            MISSING_STATUS,
            f'The {kind} document has no "status" field.',
            exit_code=1,
            kind=kind,
            violations=shown,
            violation_count=count,
            hint=(
                f'Add a top-level "status" field ({" or ".join(repr(v) for v in allowed)}) and return the '
                f"whole JSON document again. {count} {plural}: {listing}"
            ),
        )
    return FixloopError(
        SCHEMA_VIOLATION,
        f"The {kind} document breaks its contract in {count} {'place' if count == 1 else 'places'}.",
        exit_code=1,
        kind=kind,
        violations=shown,
        violation_count=count,
        hint=f"Fix {count} {plural} and return the whole corrected JSON document: {listing}",
    )


def violations_from(kind: str, error: ValidationError) -> list[dict[str, str]]:
    root = model_for(kind)
    violations = []
    for item in error.errors(include_url=False):
        loc = tuple(item["loc"])
        if kind == "event" and loc and loc[0] in EVENT_MODELS:
            # a discriminated union names the chosen member first; the document has no such level
            root, loc = EVENT_MODELS[str(loc[0])], loc[1:]
        violations.append(_violation(root, loc, dict(item)))
        root = model_for(kind)
    return violations


def _violation(root: type[BaseModel], loc: tuple[Any, ...], item: dict[str, Any]) -> dict[str, str]:
    kind_of_error: str = item["type"]
    value = item.get("input")
    ctx = item.get("ctx") or {}
    annotation, constraints = _resolve(root, loc)
    got = f"; got {_show(value)}"
    if kind_of_error in {"union_tag_invalid", "union_tag_not_found"}:
        loc = (*loc, "type")
        tags = ", ".join(repr(t) for t in EVENT_MODELS)
        if kind_of_error == "union_tag_not_found":
            message = f"missing required field 'type' (one of {tags})"
            kind_of_error = "missing"
        else:
            message = f"must be one of {tags}; got {_show(ctx.get('tag'))}"
    elif kind_of_error == "missing":
        message = f"missing required field '{loc[-1]}'"
        if annotation is not None:
            message += f" ({_describe(annotation, constraints)})"
    elif kind_of_error == "extra_forbidden":
        parent, _ = _resolve(root, loc[:-1])
        message = f"unknown field '{loc[-1]}' — remove it"
        if isinstance(parent, type) and issubclass(parent, BaseModel):
            message += f" (allowed: {', '.join(parent.model_fields)})"
    elif kind_of_error in {"value_error", "assertion_error"}:
        text = str(item.get("msg", ""))
        message = re.sub(r"^(Value error|Assertion failed), ", "", text)
        if not isinstance(value, (dict, list)):
            message += got
    elif annotation is not None and kind_of_error not in {"recursion"}:
        message = f"must be {_describe(annotation, constraints)}{got}"
        if kind_of_error == "string_too_short" and _min_length(constraints) == 1:
            message = "must not be empty" + got
    else:
        message = f"{item.get('msg', 'is invalid')}{got}"
    return {"path": _path(loc), "message": message, "type": kind_of_error}


def _path(loc: tuple[Any, ...]) -> str:
    parts = ["$"]
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        elif isinstance(part, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            parts.append(f".{part}")
        else:
            parts.append(f"[{json.dumps(str(part), ensure_ascii=False)}]")
    return "".join(parts)


def _show(value: Any) -> str:
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return "'" + shown.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


# --- describing what a field accepts -------------------------------------------------------------------


def _resolve(root: type[BaseModel], loc: tuple[Any, ...]) -> tuple[Any, list[Any]]:
    """The annotation (and constraint metadata) of the field at `loc`, or (None, []) when unknown."""
    annotation: Any = root
    constraints: list[Any] = []
    for part in loc:
        annotation, constraints = _unwrap(annotation, [])
        if isinstance(part, int):
            if typing.get_origin(annotation) is list:
                (annotation,) = typing.get_args(annotation) or (Any,)
                constraints = []
                continue
            return None, []
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            info = annotation.model_fields.get(part)
            if info is None:
                return None, []
            annotation, constraints = info.annotation, list(info.metadata)
            continue
        if typing.get_origin(annotation) is dict:
            annotation, constraints = typing.get_args(annotation)[1], []
            continue
        return None, []
    return annotation, constraints


def _unwrap(annotation: Any, constraints: list[Any]) -> tuple[Any, list[Any]]:
    """Strip Annotated (collecting its constraints) and Optional; return the core type."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            base, *extras = typing.get_args(annotation)
            for extra in extras:
                constraints = [*constraints, *(extra.metadata if isinstance(extra, FieldInfo) else [extra])]
            annotation = base
        elif origin in (Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation, constraints
            annotation = members[0]
        else:
            return annotation, constraints


def _nullable(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (Union, types.UnionType) and type(None) in typing.get_args(
        annotation
    )


def _describe(annotation: Any, constraints: list[Any]) -> str:
    nullable = _nullable(annotation)
    core, constraints = _unwrap(annotation, list(constraints))
    text = _describe_core(core, constraints)
    return f"{text} or null" if nullable else text


def _describe_core(core: Any, constraints: list[Any]) -> str:
    origin = typing.get_origin(core)
    if core is bool:
        return "true or false"
    if core is int:
        return "an integer" + _range(constraints)
    if core is float:
        return "a number" + _range(constraints)
    if core is str:
        pattern = next((c.pattern for c in constraints if getattr(c, "pattern", None)), None)
        if pattern:
            return f"a string matching {pattern}"
        return "a non-empty string" if _min_length(constraints) else "a string"
    if origin is Literal:
        return "one of " + ", ".join(repr(v) for v in typing.get_args(core))
    if origin is list:
        return "an array"
    if origin is dict or (isinstance(core, type) and issubclass(core, (BaseModel, Mapping))):
        return "an object"
    if core is Any:
        return "any JSON value"
    return "a valid value"


def _range(constraints: list[Any]) -> str:
    low = high = None
    for c in constraints:
        if isinstance(c, annotated_types.Ge):
            low = c.ge
        elif isinstance(c, annotated_types.Gt):
            low = f"more than {c.gt}"
        elif isinstance(c, annotated_types.Le):
            high = c.le
        elif isinstance(c, annotated_types.Lt):
            high = f"less than {c.lt}"
    if low is not None and high is not None and not isinstance(low, str) and not isinstance(high, str):
        return f" from {low} to {high}"
    parts = [f">= {low}" if not isinstance(low, str) else low] if low is not None else []
    parts += [f"<= {high}" if not isinstance(high, str) else high] if high is not None else []
    return (" " + " and ".join(parts)) if parts else ""


def _min_length(constraints: list[Any]) -> int:
    for c in constraints:
        if isinstance(c, StringConstraints) and c.min_length:
            return c.min_length
        if isinstance(c, annotated_types.MinLen):
            return c.min_length
    return 0


def _literal_values(annotation: Any) -> list[Any]:
    core, _ = _unwrap(annotation, [])
    return list(typing.get_args(core)) if typing.get_origin(core) is Literal else []
