"""The size limits of an agent's document, checked before its fields are: a cheap walk that stops early.

Validating a document field by field costs time and memory for every error it finds, and a hostile answer
can hold millions (a 300 KB list of empty issues is 900,000 missing fields). `bound_violations` walks the
parsed document once, does not descend into a part over a limit, and stops at MAX_BOUND_VIOLATIONS
findings or past MAX_VALUES values; a document over any limit is refused without further validation.

The limits: `max_issues` issues in a reviewer's `issues` (MAX_ISSUES_PER_ANSWER unless the project's
`max_issues_per_answer` says otherwise), and the module constants MAX_ITEMS items in
any other array, MAX_FIELDS fields in an object, MAX_STRING_CHARS characters in a string or a field name,
MAX_VALUES values in the whole document. Each is far above what an agent's answer needs.
"""

from __future__ import annotations

from typing import Any

MAX_ISSUES_PER_ANSWER = 500
MAX_ITEMS = 2_000
MAX_FIELDS = 200
MAX_STRING_CHARS = 100_000
MAX_VALUES = 50_000
MAX_BOUND_VIOLATIONS = 20
TOO_LARGE = "too_large"

# Documents the engine writes itself: checked for their shape only (a change may touch more files than an
# agent's answer may list).
ENGINE_KINDS = frozenset({"coordinator-input", "review-task", "event"})

Location = tuple[str | int, ...]


def bound_violations(document: Any, max_issues: int = MAX_ISSUES_PER_ANSWER) -> list[tuple[Location, str]]:
    """(where, what is wrong) for each limit `document` is over, in document order; [] when within all."""
    found: list[tuple[Location, str]] = []
    values = 0
    stack: list[tuple[Location, Any]] = [((), document)]
    while stack and len(found) < MAX_BOUND_VIOLATIONS:
        loc, value = stack.pop()
        values += 1
        if values > MAX_VALUES:
            found.append(((), f"holds more than {MAX_VALUES} values: answer with less"))
            break
        if isinstance(value, str):
            if len(value) > MAX_STRING_CHARS:
                found.append((loc, _too_long(len(value))))
        elif isinstance(value, list):
            limit = max_issues if loc == ("issues",) else MAX_ITEMS
            if len(value) > limit:
                found.append((loc, _too_many(len(value), limit, "issues" if loc == ("issues",) else "items")))
                continue
            stack.extend(((*loc, index), value[index]) for index in range(len(value) - 1, -1, -1))
        elif isinstance(value, dict):
            if len(value) > MAX_FIELDS:
                found.append((loc, f"has {len(value)} fields; an object may have at most {MAX_FIELDS}"))
                continue
            children: list[tuple[Location, Any]] = []
            for key, item in value.items():
                if len(key) > MAX_STRING_CHARS:
                    found.append(
                        (loc, f"has a field name of {len(key)} characters (at most {MAX_STRING_CHARS})")
                    )
                    continue
                children.append(((*loc, key), item))
            stack.extend(reversed(children))
    return found[:MAX_BOUND_VIOLATIONS]


def _too_long(length: int) -> str:
    return f"is {length} characters long; a string may have at most {MAX_STRING_CHARS}: shorten it"


def _too_many(count: int, limit: int, what: str) -> str:
    if what == "issues":
        return f"has {count} issues; an answer may report at most {limit}: keep the {limit} that matter most"
    return f"has {count} items; an array may have at most {limit}"
