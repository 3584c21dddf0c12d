"""Check an agent's raw final message against the contract of its KIND, as a value: `Checked`.

`check_text(kind, raw)` never raises for a fault of the agent's content (an empty message, no JSON, a cut-off
document, contract violations): it returns `Checked(document=None, error={...})` with the error object of
`fixloop.contracts.validation` (`code`, `message`, `kind`, ... and a `hint`). An unknown KIND is the
caller's mistake and still raises FixloopError UNKNOWN_KIND.

In order: the document is found in the message (fixloop.contracts.extract), held to the size limits of
fixloop.contracts.bounds (a document over one is refused there, unvalidated), redacted (every string goes
through fixloop.core.redact, so whatever stores the document or quotes it back stores no secret), then
validated. The error object is redacted too: it quotes the message and the values it refuses.

A reviewer's, the verifier's or the fixer's answer in the contract's canonical form is validated without
the pydantic models (fixloop.contracts.canonical gives the same document the model would); anything else,
and every refusal, goes through the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fixloop.contracts.bounds import ENGINE_KINDS, MAX_ISSUES_PER_ANSWER, bound_violations
from fixloop.contracts.canonical import REQUIRED_FIELDS, canonical_answer
from fixloop.contracts.extract import find_document
from fixloop.contracts.problems import Problem
from fixloop.core.redact import redact, redact_value

if TYPE_CHECKING:
    from pydantic import BaseModel

# The review agents' kinds load their own model only; any other kind loads the registry of every kind
# (fixloop.contracts.kinds), and saying what is wrong with an answer loads fixloop.contracts.violations.
_REVIEW_KINDS = ("reviewer", "fixer", "verifier")


def _model_for(kind: str) -> type[BaseModel]:
    if kind in _REVIEW_KINDS:
        from fixloop.contracts.prompt_text import contract_model

        return contract_model(kind)
    from fixloop.contracts.kinds import model_for

    return model_for(kind)


def _required_fields(kind: str) -> list[str]:
    if kind in _REVIEW_KINDS:
        return list(REQUIRED_FIELDS[kind])
    from fixloop.contracts.kinds import required_fields

    return required_fields(kind)


@dataclass(frozen=True)
class Checked:
    """Either the normalized document (`error` is None) or the error object (`document` is None)."""

    document: dict[str, Any] | None
    error: dict[str, Any] | None

    @property
    def ok(self) -> bool:
        return self.error is None


def check_text(kind: str, raw: bytes | str, max_issues: int = MAX_ISSUES_PER_ANSWER) -> Checked:
    """The normalized document for an agent's raw message, or the error object saying what is wrong."""
    found = find_document(raw, _required_fields(kind))
    if isinstance(found, Problem):
        return _checked(kind, redacted(found.with_kind(kind)))
    if kind in _REVIEW_KINDS and not bound_violations(found.document, max_issues):
        canonical = canonical_answer(kind, redact_value(found.document))
        if canonical is not None:
            return Checked(canonical, None)
    return _checked(kind, parse_value(kind, found.document, max_issues))


def check_document(kind: str, document: Any) -> Checked:
    """Like check_text, for an already-parsed JSON value."""
    return _checked(kind, parse_value(kind, document))


def parse_raw(kind: str, raw: bytes | str, max_issues: int = MAX_ISSUES_PER_ANSWER) -> BaseModel | Problem:
    """The validated model instance for an agent's raw message (for `event`: an EventDocument)."""
    found = find_document(raw, _required_fields(kind))
    if isinstance(found, Problem):
        return redacted(found.with_kind(kind))
    return parse_value(kind, found.document, max_issues)


def parse_value(kind: str, document: Any, max_issues: int = MAX_ISSUES_PER_ANSWER) -> BaseModel | Problem:
    model = _model_for(kind)
    over = [] if kind in ENGINE_KINDS else bound_violations(document, max_issues)
    if over:
        from fixloop.contracts.violations import bound_problem

        return redacted(bound_problem(kind, document, over))
    document = redact_value(document)
    from pydantic import ValidationError

    try:
        return model.model_validate(document)
    except ValidationError as error:
        from fixloop.contracts.violations import violations_from

        violations, count = violations_from(kind, error), error.error_count()
    except RecursionError:
        violations, count = [{"path": "$", "message": "is nested too deeply", "type": "recursion"}], 1
    from fixloop.contracts.violations import violation_problem

    return redacted(violation_problem(kind, document, violations, count))


def redacted(problem: Problem) -> Problem:
    """`problem` with its message and details redacted: they quote the agent's message and values."""
    return Problem(problem.code, redact(problem.message), redact_value(problem.details))


def dump(kind: str, instance: BaseModel) -> dict[str, Any] | Problem:
    """`model_dump(mode="json")`: every field, defaults and nulls included."""
    try:
        dumped = instance.model_dump(mode="json")
    except (ValueError, RecursionError):  # pydantic refuses to serialize about 255+ levels of nesting
        from fixloop.contracts.violations import violation_problem

        violation = {"path": "$", "message": "is nested too deeply to store", "type": "too_deep"}
        return violation_problem(kind, None, [violation])
    assert isinstance(dumped, dict)
    return dumped


def _checked(kind: str, parsed: BaseModel | Problem) -> Checked:
    result = parsed if isinstance(parsed, Problem) else dump(kind, parsed)
    if isinstance(result, Problem):
        return Checked(None, result.error())
    return Checked(result, None)
