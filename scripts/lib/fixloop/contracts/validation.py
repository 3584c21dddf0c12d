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
a `hint`: a short instruction to quote back to the agent. A document over a size limit of
`fixloop.contracts.bounds` is refused before its fields are checked: its violations (type `too_large`) say
where it is too large. Documents and errors are redacted (`fixloop.contracts.check`).

The normalized document is `model_dump(mode="json")` with nothing excluded: every field of the contract is
present (defaults and nulls included) so its shape is the same whatever the agent omitted; the agent's values
are kept as validated (supervisor field names renamed, severities lowercased, agent names made canonical).

`check_text` / `check_document` (`fixloop.contracts.check`) return the same outcome as a `Checked` value
instead of raising; the functions here are thin raising wrappers around them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from fixloop.contracts.bounds import MAX_ISSUES_PER_ANSWER
from fixloop.contracts.check import Checked, check_document, check_text, dump, parse_raw, parse_value
from fixloop.contracts.examples import KIND_EXAMPLES
from fixloop.contracts.kinds import (
    KIND_DESCRIPTIONS,
    KINDS,
    KINDS_WITH_STATUS,
    UNKNOWN_KIND,
    AnyEvent,
    EventDocument,
    model_for,
    required_fields,
)
from fixloop.contracts.problems import Problem
from fixloop.contracts.violations import (
    HINT_VIOLATIONS,
    MAX_VIOLATIONS,
    MISSING_STATUS,
    SCHEMA_VIOLATION,
    violation_problem,
    violations_from,
)
from fixloop.core.errors import FixloopError

__all__ = [
    "HINT_VIOLATIONS",
    "KINDS",
    "KINDS_WITH_STATUS",
    "KIND_DESCRIPTIONS",
    "KIND_EXAMPLES",
    "MAX_VIOLATIONS",
    "MISSING_STATUS",
    "SCHEMA_VIOLATION",
    "UNKNOWN_KIND",
    "AnyEvent",
    "Checked",
    "EventDocument",
    "check_document",
    "check_text",
    "model_for",
    "normalize",
    "parse_document",
    "parse_text",
    "required_fields",
    "validate_document",
    "validate_text",
    "violation_error",
    "violations_from",
]


def validate_text(kind: str, raw: bytes | str, max_issues: int = MAX_ISSUES_PER_ANSWER) -> dict[str, Any]:
    """The normalized document (a JSON-ready dict) for an agent's raw message, or a FixloopError."""
    return _document_or_raise(check_text(kind, raw, max_issues))


def validate_document(kind: str, document: Any) -> dict[str, Any]:
    return _document_or_raise(check_document(kind, document))


def parse_text(kind: str, raw: bytes | str) -> BaseModel:
    """The validated model instance for an agent's raw message (for `event`: an EventDocument; see .root)."""
    return _instance_or_raise(parse_raw(kind, raw))


def parse_document(kind: str, document: Any) -> BaseModel:
    """The validated model instance for an already-parsed JSON value."""
    return _instance_or_raise(parse_value(kind, document))


def normalize(kind: str, instance: BaseModel) -> dict[str, Any]:
    """`model_dump(mode="json")`: every field, defaults and nulls included."""
    dumped = dump(kind, instance)
    if isinstance(dumped, Problem):
        raise dumped.exception()
    return dumped


def violation_error(kind: str, document: Any, violations: list[dict[str, str]]) -> FixloopError:
    """The MISSING_STATUS / SCHEMA_VIOLATION error listing `violations`."""
    return violation_problem(kind, document, violations).exception()


def _instance_or_raise(parsed: BaseModel | Problem) -> BaseModel:
    if isinstance(parsed, Problem):
        raise parsed.exception()
    return parsed


def _document_or_raise(checked: Checked) -> dict[str, Any]:
    if checked.error is not None:
        details = dict(checked.error)
        code, message = details.pop("code"), details.pop("message")
        raise FixloopError(code, message, exit_code=1, **details)
    assert checked.document is not None
    return checked.document
