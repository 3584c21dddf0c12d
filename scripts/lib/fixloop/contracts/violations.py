"""Contract violations in words: one `{"path", "message", "type"}` per problem pydantic found, and the
MISSING_STATUS / SCHEMA_VIOLATION problem that lists them with a hint for the agent."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from fixloop.contracts.bounds import TOO_LARGE
from fixloop.contracts.describe import describe, literal_values, min_length, resolve
from fixloop.contracts.events import EVENT_MODELS
from fixloop.contracts.kinds import KINDS_WITH_STATUS, model_for
from fixloop.contracts.problems import Problem

MISSING_STATUS = "MISSING_STATUS"
SCHEMA_VIOLATION = "SCHEMA_VIOLATION"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # shown escaped, as \x00 or \u2028
MAX_VIOLATIONS = 100
HINT_VIOLATIONS = 5


def violation_problem(
    kind: str, document: Any, violations: list[dict[str, str]], count: int | None = None
) -> Problem:
    """The problem listing `violations` (at most MAX_VIOLATIONS of them); `count` is how many there are in
    all when only some were described."""
    count = len(violations) if count is None else count
    shown = violations[:MAX_VIOLATIONS]
    status_missing = (
        kind in KINDS_WITH_STATUS and isinstance(document, dict) and document.get("status") is None
    )
    listing = "; ".join(f"{v['path']} {v['message']}" for v in shown[:HINT_VIOLATIONS])
    if count > HINT_VIOLATIONS:
        listing += f"; and {count - HINT_VIOLATIONS} more"
    plural = "problem" if count == 1 else "problems"
    if status_missing:
        allowed = literal_values(model_for(kind).model_fields["status"].annotation)
        return Problem(
            MISSING_STATUS,
            f'The {kind} document has no "status" field.',
            {
                "kind": kind,
                "violations": shown,
                "violation_count": count,
                "hint": (
                    f'Add a top-level "status" field ({" or ".join(repr(v) for v in allowed)}) and return '
                    f"the whole JSON document again. {count} {plural}: {listing}"
                ),
            },
        )
    return Problem(
        SCHEMA_VIOLATION,
        f"The {kind} document breaks its contract in {count} {'place' if count == 1 else 'places'}.",
        {
            "kind": kind,
            "violations": shown,
            "violation_count": count,
            "hint": f"Fix {count} {plural} and return the whole corrected JSON document: {listing}",
        },
    )


def violations_from(kind: str, error: ValidationError) -> list[dict[str, str]]:
    """The first MAX_VIOLATIONS problems of `error` in words (error.error_count() tells how many in all)."""
    root = model_for(kind)
    violations = []
    for item in error.errors(include_url=False)[:MAX_VIOLATIONS]:
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
    annotation, constraints = resolve(root, loc)
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
            message += f" ({describe(annotation, constraints)})"
    elif kind_of_error == "extra_forbidden":
        parent, _ = resolve(root, loc[:-1])
        message = f"unknown field '{loc[-1]}' — remove it"
        if isinstance(parent, type) and issubclass(parent, BaseModel):
            message += f" (allowed: {', '.join(parent.model_fields)})"
    elif kind_of_error in {"value_error", "assertion_error"}:
        text = str(item.get("msg", ""))
        message = re.sub(r"^(Value error|Assertion failed), ", "", text)
        if not isinstance(value, (dict, list)):
            message += got
    elif annotation is not None and kind_of_error not in {"recursion"}:
        message = f"must be {describe(annotation, constraints)}{got}"
        if kind_of_error == "string_too_short" and min_length(constraints) == 1:
            message = "must not be empty" + got
    else:
        message = f"{item.get('msg', 'is invalid')}{got}"
    return {"path": json_path(loc), "message": message, "type": kind_of_error}


def bound_problem(kind: str, document: Any, found: list[tuple[tuple[str | int, ...], str]]) -> Problem:
    """The problem of a document over the size limits of fixloop.contracts.bounds."""
    violations = [{"path": json_path(loc), "message": message, "type": TOO_LARGE} for loc, message in found]
    return violation_problem(kind, document, violations)


def json_path(loc: tuple[Any, ...]) -> str:
    """`$.issues[0].file` for ("issues", 0, "file")."""
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
        shown = shown.replace("\\", "\\\\").replace("'", "\\'")
        return "'" + _CONTROL.sub(lambda found: ascii(found.group())[1:-1], shown) + "'"
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
