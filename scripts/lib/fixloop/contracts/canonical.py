"""The review agents' well-formed answers, checked without the models: standard library only.

Every reviewer, verifier and fixer answer is checked by `fixloop record`, and loading the pydantic models
costs several times a bare interpreter start. `canonical_answer(kind, document)` returns, for a document of
kind `reviewer`, `verifier` or `fixer` written exactly in the contract's canonical form, the same dict the
model gives (`model_dump(mode="json")`: every field, in the model's order, defaults filled in), and None for
anything else: another kind, an alias spelling (the supervisor fields, `review-code-reviewer` is fine but
` Code-Reviewer ` is not), a severity or line that the model would first normalise, a string the model would
strip, an unknown field, a wrong type, any violation. The caller then validates with the model, so what is
refused and every message saying why stay the model's.

`document` is a parsed JSON value with no lone surrogates (what fixloop.contracts.extract finds), already
within the size limits of fixloop.contracts.bounds and redacted: the same value the model would be given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fixloop.contracts.repo_paths import repo_relative_path
from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT, agent_name

MAX_LINE = 10_000_000
SEVERITIES = frozenset({"critical", "high", "medium", "low"})
# Each review kind's required top-level fields (tests hold them equal to the models').
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "reviewer": ("status", "agent"),
    "verifier": ("status", "agent"),
    "fixer": ("status", "agent"),
}


class Decline(Exception):
    """The document is not in canonical form: the model decides."""


def canonical_answer(kind: str, document: Any) -> dict[str, Any] | None:
    """The model's dump of `document` when it is a canonical, valid answer of `kind`; else None."""
    build = _BUILDERS.get(kind)
    if build is None:
        return None
    try:
        return build(document)
    except Decline:
        return None


def _object(value: Any, required: frozenset[str], optional: frozenset[str]) -> dict[str, Any]:
    if type(value) is not dict:
        raise Decline
    keys = value.keys()
    if not required <= keys or not keys <= required | optional:
        raise Decline
    return value


def _text(value: Any) -> str:
    """A plain str."""
    if type(value) is not str:
        raise Decline
    return value


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _word(value: Any) -> str:
    """A non-empty str the model would not strip (a stripped-and-non-empty str)."""
    if type(value) is not str or not value or value[0].isspace() or value[-1].isspace():
        raise Decline
    return value


def _path(value: Any) -> str:
    try:
        return repo_relative_path(_word(value))
    except ValueError:
        raise Decline from None


def _flag(value: Any) -> bool:
    if type(value) is not bool:
        raise Decline
    return value


def _number(value: Any, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise Decline
    return value


def _one_of(value: Any, allowed: frozenset[str]) -> str:
    if type(value) is not str or value not in allowed:
        raise Decline
    return value


def _items(value: Any, item: Callable[[Any], Any]) -> list[Any]:
    if type(value) is not list:
        raise Decline
    return [item(element) for element in value]


def _texts(value: Any) -> list[str]:
    return _items(value, _text)


def _paths(value: Any) -> list[str]:
    return _items(value, _path)


def _agent(value: Any, allowed: tuple[str, ...]) -> str:
    name = agent_name(_word(value))
    if name not in allowed:
        raise Decline
    return name


_AGENT_ERROR = (frozenset({"code", "message"}), frozenset({"phase", "recoverable", "stack_trace"}))


def _agent_error(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    error = _object(value, *_AGENT_ERROR)
    return {
        "code": _word(error["code"]),
        "message": _word(error["message"]),
        "phase": _text(error.get("phase", "unknown")),
        "recoverable": _flag(error.get("recoverable", False)),
        "stack_trace": _optional_text(error.get("stack_trace")),
    }


def _is_blank(value: str | None) -> bool:
    return not (value or "").strip()


# The reviewer contract (fixloop.contracts.reviewer).

_ISSUE_FIELDS = ("id", "severity", "confidence", "file", "line", "category", "description", "suggestion")
_ISSUE = (
    frozenset({*_ISSUE_FIELDS, "auto_fixable"}),
    frozenset({"end_line", "rule", "existing_code", "improved_code"}),
)


def _reviewer_issue(value: Any) -> dict[str, Any]:
    issue = _object(value, *_ISSUE)
    line = _number(issue["line"], 1, MAX_LINE)
    end_line = issue.get("end_line")
    if end_line is not None and _number(end_line, 1, MAX_LINE) < line:
        raise Decline
    return {
        "id": _word(issue["id"]),
        "severity": _one_of(issue["severity"], SEVERITIES),
        "confidence": _number(issue["confidence"], 0, 100),
        "file": _path(issue["file"]),
        "line": line,
        "end_line": end_line,
        "category": _word(issue["category"]),
        "rule": _optional_text(issue.get("rule")),
        "description": _word(issue["description"]),
        "suggestion": _text(issue["suggestion"]),
        "auto_fixable": _flag(issue["auto_fixable"]),
        "existing_code": _optional_text(issue.get("existing_code")),
        "improved_code": _optional_text(issue.get("improved_code")),
    }


_REVIEWER = (frozenset({"status", "agent"}), frozenset({"issues", "positive_observations", "error"}))
_STATUS = frozenset({"success", "failed"})


def _reviewer(value: Any) -> dict[str, Any]:
    answer = _object(value, *_REVIEWER)
    status = _one_of(answer["status"], _STATUS)
    issues = _items(answer.get("issues", []), _reviewer_issue)
    error = _agent_error(answer.get("error"))
    if (status == "failed") != (error is not None):
        raise Decline
    if len({issue["id"] for issue in issues}) != len(issues):
        raise Decline
    return {
        "status": status,
        "agent": _agent(answer["agent"], REVIEWER_AGENTS),
        "issues": issues,
        "positive_observations": _texts(answer.get("positive_observations", [])),
        "error": error,
    }


# The verifier contract (fixloop.contracts.verifier).

_ACCURACY = (
    frozenset({"issue_id", "accuracy_status", "evidence", "deletion_required"}),
    frozenset({"deletion_reason"}),
)
_ACCURACY_STATUSES = frozenset({"CORRECT", "INCORRECT", "PARTIALLY_CORRECT"})


def _accuracy_check(value: Any) -> dict[str, Any]:
    check = _object(value, *_ACCURACY)
    deletion_required = _flag(check["deletion_required"])
    reason = _optional_text(check.get("deletion_reason"))
    if deletion_required and _is_blank(reason):
        raise Decline
    return {
        "issue_id": _word(check["issue_id"]),
        "accuracy_status": _one_of(check["accuracy_status"], _ACCURACY_STATUSES),
        "evidence": _word(check["evidence"]),
        "deletion_required": deletion_required,
        "deletion_reason": reason,
    }


_COMPLIANCE = (
    frozenset({"issue_id", "compliance_status", "deletion_required"}),
    frozenset({"violated_rules", "violation_reason"}),
)
_COMPLIANCE_STATUSES = frozenset({"COMPLIANT", "VIOLATED"})


def _rule_compliance_check(value: Any) -> dict[str, Any]:
    check = _object(value, *_COMPLIANCE)
    return {
        "issue_id": _word(check["issue_id"]),
        "compliance_status": _one_of(check["compliance_status"], _COMPLIANCE_STATUSES),
        "violated_rules": _texts(check.get("violated_rules", [])),
        "deletion_required": _flag(check["deletion_required"]),
        "violation_reason": _optional_text(check.get("violation_reason")),
    }


_MISSING = (frozenset({"description", "evidence", "suggested_severity"}), frozenset[str]())


def _missing_issue(value: Any) -> dict[str, Any]:
    missing = _object(value, *_MISSING)
    return {
        "description": _word(missing["description"]),
        "evidence": _text(missing["evidence"]),
        "suggested_severity": _one_of(missing["suggested_severity"], SEVERITIES),
    }


_QUALITY = (
    frozenset({"overall_score", "quality_level"}),
    frozenset({"strengths", "weaknesses", "missing_issues"}),
)
_QUALITY_LEVELS = frozenset({"EXCELLENT", "GOOD", "ACCEPTABLE", "POOR"})


def _quality_assessment(value: Any) -> dict[str, Any]:
    quality = _object(value, *_QUALITY)
    return {
        "overall_score": _number(quality["overall_score"], 0, 100),
        "quality_level": _one_of(quality["quality_level"], _QUALITY_LEVELS),
        "strengths": _texts(quality.get("strengths", [])),
        "weaknesses": _texts(quality.get("weaknesses", [])),
        "missing_issues": _items(quality.get("missing_issues", []), _missing_issue),
    }


_RESULT = (frozenset({"quality_assessment"}), frozenset({"accuracy_check", "rule_compliance_check"}))


def _verification_result(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    result = _object(value, *_RESULT)
    return {
        "accuracy_check": _items(result.get("accuracy_check", []), _accuracy_check),
        "rule_compliance_check": _items(result.get("rule_compliance_check", []), _rule_compliance_check),
        "quality_assessment": _quality_assessment(result["quality_assessment"]),
    }


_VERIFIER = (frozenset({"status", "agent"}), frozenset({"task_id", "verification_result", "error"}))


def _verifier(value: Any) -> dict[str, Any]:
    answer = _object(value, *_VERIFIER)
    status = _one_of(answer["status"], _STATUS)
    result = _verification_result(answer.get("verification_result"))
    error = _agent_error(answer.get("error"))
    if (status == "success" and result is None) or (status == "failed" and error is None):
        raise Decline
    return {
        "status": status,
        "agent": _agent(answer["agent"], (VERIFIER_AGENT,)),
        "task_id": _optional_text(answer.get("task_id")),
        "verification_result": result,
        "error": error,
    }


# The fixer contract (fixloop.contracts.fixer).

_ATTEMPT = (frozenset({"issue_id", "status"}), frozenset({"reason", "files"}))
_ATTEMPT_STATUSES = frozenset({"succeeded", "failed", "skipped"})


def _fix_attempt(value: Any) -> dict[str, Any]:
    attempt = _object(value, *_ATTEMPT)
    status = _one_of(attempt["status"], _ATTEMPT_STATUSES)
    reason = _optional_text(attempt.get("reason"))
    if status != "succeeded" and _is_blank(reason):
        raise Decline
    return {
        "issue_id": _word(attempt["issue_id"]),
        "status": status,
        "reason": reason,
        "files": _paths(attempt.get("files", [])),
    }


_FIXER = (frozenset({"status", "agent"}), frozenset({"results", "files_modified", "error"}))
_FIXER_STATUSES = frozenset({"success", "partial", "failed"})


def _fixer(value: Any) -> dict[str, Any]:
    answer = _object(value, *_FIXER)
    status = _one_of(answer["status"], _FIXER_STATUSES)
    results = _items(answer.get("results", []), _fix_attempt)
    error = _agent_error(answer.get("error"))
    if status == "failed" and error is None and not results:
        raise Decline
    return {
        "status": status,
        "agent": _agent(answer["agent"], (FIXER_AGENT,)),
        "results": results,
        "files_modified": _paths(answer.get("files_modified", [])),
        "error": error,
    }


_BUILDERS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "reviewer": _reviewer,
    "verifier": _verifier,
    "fixer": _fixer,
}
