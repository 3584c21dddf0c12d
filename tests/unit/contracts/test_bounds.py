"""Hostile answers are refused early, with a short error: the size limits checked before the fields are."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixloop.contracts import bounds
from fixloop.contracts.bounds import (
    MAX_BOUND_VIOLATIONS,
    MAX_FIELDS,
    MAX_ISSUES_PER_ANSWER,
    MAX_ITEMS,
    MAX_STRING_CHARS,
    MAX_VALUES,
    bound_violations,
)
from fixloop.contracts.check import check_document, check_text
from fixloop.contracts.extract import MAX_INPUT_BYTES
from fixloop.contracts.jsontext import MAX_OBJECTS, TOO_MANY_OBJECTS
from fixloop.contracts.validation import KIND_EXAMPLES, MAX_VIOLATIONS

HEAD = {"status": "success", "agent": "code-reviewer"}


def issue(number: int) -> dict[str, Any]:
    return {
        "id": f"CR-{number}",
        "severity": "low",
        "confidence": 90,
        "file": "src/app.py",
        "line": 1,
        "category": "style",
        "description": "d",
        "suggestion": "s",
        "auto_fixable": False,
    }


def refusal(raw: bytes | str) -> tuple[str, int, int | None, list[dict[str, str]]]:
    """(code, violations listed, violation_count, the violations) of a refused reviewer answer."""
    checked = check_text("reviewer", raw)
    assert checked.error is not None
    violations = checked.error.get("violations", [])
    return checked.error["code"], len(violations), checked.error.get("violation_count"), violations


def test_three_hundred_kilobytes_of_empty_issues_is_one_violation() -> None:
    raw = json.dumps({**HEAD, "issues": [{}] * 100_000})
    assert 300_000 < len(raw) < 500_000
    code, listed, count, violations = refusal(raw)
    assert (code, listed, count) == ("SCHEMA_VIOLATION", 1, 1)
    assert violations == [
        {
            "path": "$.issues",
            "message": "has 100000 issues; an answer may report at most 500: keep the 500 that matter most",
            "type": "too_large",
        }
    ]


def test_the_issue_limit_is_exact() -> None:
    assert check_document("reviewer", {**HEAD, "issues": [issue(n) for n in range(MAX_ISSUES_PER_ANSWER)]}).ok
    checked = check_document(
        "reviewer", {**HEAD, "issues": [issue(n) for n in range(MAX_ISSUES_PER_ANSWER + 1)]}
    )
    assert checked.error is not None
    assert [v["path"] for v in checked.error["violations"]] == ["$.issues"]


def test_many_violations_are_counted_but_only_the_first_are_described() -> None:
    bad = {"id": 1, "severity": 2, "confidence": "x", "file": 3, "line": "y", "category": 4}
    bad |= {"description": 5, "suggestion": 6, "auto_fixable": "z"}
    code, listed, count, violations = refusal(json.dumps({**HEAD, "issues": [bad] * MAX_ISSUES_PER_ANSWER}))
    assert (code, listed, count) == ("SCHEMA_VIOLATION", MAX_VIOLATIONS, 9 * MAX_ISSUES_PER_ANSWER)
    assert violations[0] == {
        "path": "$.issues[0].id",
        "message": "must be a non-empty string; got 1",
        "type": "string_type",
    }
    assert violations[-1]["path"].startswith(f"$.issues[{MAX_VIOLATIONS // 9}].")


@pytest.mark.parametrize(
    ("document", "path", "message"),
    [
        (
            {**HEAD, "positive_observations": ["x" * (MAX_STRING_CHARS + 1)]},
            "$.positive_observations[0]",
            f"is {MAX_STRING_CHARS + 1} characters long; a string may have at most {MAX_STRING_CHARS}: "
            "shorten it",
        ),
        (
            {**HEAD, "positive_observations": ["x"] * (MAX_ITEMS + 1)},
            "$.positive_observations",
            f"has {MAX_ITEMS + 1} items; an array may have at most {MAX_ITEMS}",
        ),
        (
            {**HEAD, "issues": [{f"k{n}": n for n in range(MAX_FIELDS + 1)}]},
            "$.issues[0]",
            f"has {MAX_FIELDS + 1} fields; an object may have at most {MAX_FIELDS}",
        ),
        (
            {**HEAD, "issues": [{"k" * (MAX_STRING_CHARS + 1): 1}]},
            "$.issues[0]",
            f"has a field name of {MAX_STRING_CHARS + 1} characters (at most {MAX_STRING_CHARS})",
        ),
        (
            {**HEAD, "issues": [{"id": [[0] * MAX_ITEMS] * (MAX_VALUES // MAX_ITEMS)}]},
            "$",
            f"holds more than {MAX_VALUES} values: answer with less",
        ),
    ],
)
def test_each_limit(document: dict[str, Any], path: str, message: str) -> None:
    checked = check_document("reviewer", document)
    assert checked.error is not None
    assert checked.error["code"] == "SCHEMA_VIOLATION"
    assert checked.error["violations"] == [{"path": path, "message": message, "type": "too_large"}]
    assert checked.error["violation_count"] == 1


def test_the_walk_stops_after_a_few_findings() -> None:
    document = {**HEAD, "positive_observations": ["x" * (MAX_STRING_CHARS + 1)] * 50}
    found = bound_violations(document)
    assert len(found) == MAX_BOUND_VIOLATIONS
    assert [loc for loc, _ in found] == [("positive_observations", n) for n in range(MAX_BOUND_VIOLATIONS)]


def test_a_message_over_the_input_limit_is_refused_unread() -> None:
    raw = b'{"status": "success", "agent": "code-reviewer", "issues": [' + b"{}, " * (MAX_INPUT_BYTES // 4)
    code, listed, count, _ = refusal(raw + b"{}]}")
    assert (code, listed, count) == ("JSON_PARSE_ERROR", 0, None)


def test_engine_documents_are_not_held_to_answer_limits() -> None:
    document = KIND_EXAMPLES["coordinator-input"] | {
        "changed_files": [f"m{n}.py" for n in range(MAX_ITEMS + 1)]
    }
    assert check_document("coordinator-input", document).ok


@pytest.mark.parametrize("item", ["{}", "[]"])
def test_a_document_of_too_many_objects_is_not_read_to_its_end(item: str) -> None:
    raw = '{"status": "success", "agent": "code-reviewer", "issues": [' + f"{item}, " * MAX_OBJECTS + "{}]}"
    checked = check_text("reviewer", raw)
    assert checked.error is not None
    assert (checked.error["code"], checked.error["parse_error"]) == ("JSON_PARSE_ERROR", TOO_MANY_OBJECTS)
    assert checked.error["message"] == "The agent's final message holds too large a JSON document to read."
    # in prose, the same document is a fragment that does not parse
    checked = check_text("reviewer", "Here it is: " + raw)
    assert checked.error is not None
    assert checked.error["code"] == "JSON_PARSE_ERROR"
    assert checked.error["parse_error"].startswith(TOO_MANY_OBJECTS)


# ---- properties -------------------------------------------------------------------------------------------

CODES = {"NULL_RESPONSE", "JSON_PARSE_ERROR", "TRUNCATION_DATA_LOSS", "MISSING_STATUS", "SCHEMA_VIOLATION"}
SMALL = {"MAX_ISSUES_PER_ANSWER": 3, "MAX_ITEMS": 4, "MAX_FIELDS": 3, "MAX_STRING_CHARS": 6}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=40,
)
# Reviewer-shaped documents: the head, then issues of any fields (known ones too) and any values.
issue_fields = st.sampled_from([*issue(0), "end_line", "rule", "existing_code"]) | st.text(max_size=8)
hostile_issues = st.lists(st.dictionaries(issue_fields, json_values, max_size=8) | json_values, max_size=6)
hostile_documents = st.fixed_dictionaries({}, optional={"issues": hostile_issues}).map(
    lambda d: {**HEAD, **d}
)


def reference_violations(document: Any, limits: dict[str, int]) -> list[tuple[tuple[str | int, ...], str]]:
    """Where `document` is over a limit, by a plain recursive walk (no early stop but at over-limit parts):
    an object's own findings (field names too long) come before those inside it."""
    found: list[tuple[tuple[str | int, ...], str]] = []

    def walk(loc: tuple[str | int, ...], value: Any) -> None:
        if isinstance(value, str):
            if len(value) > limits["MAX_STRING_CHARS"]:
                found.append((loc, "string"))
        elif isinstance(value, list):
            limit = limits["MAX_ISSUES_PER_ANSWER"] if loc == ("issues",) else limits["MAX_ITEMS"]
            if len(value) > limit:
                found.append((loc, "array"))
                return
            for index, item in enumerate(value):
                walk((*loc, index), item)
        elif isinstance(value, dict):
            if len(value) > limits["MAX_FIELDS"]:
                found.append((loc, "object"))
                return
            long_names = [key for key in value if len(key) > limits["MAX_STRING_CHARS"]]
            found.extend((loc, "name") for _ in long_names)  # the object's own findings first
            for key, item in value.items():
                if key not in long_names:
                    walk((*loc, key), item)

    walk((), document)
    return found[:MAX_BOUND_VIOLATIONS]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=hostile_documents)
def test_the_walk_finds_every_part_over_a_limit_in_document_order(document: dict[str, Any]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in SMALL.items():
            patch.setattr(bounds, name, value)
        found = bound_violations(document, max_issues=SMALL["MAX_ISSUES_PER_ANSWER"])
    assert [loc for loc, _ in found] == [loc for loc, _ in reference_violations(document, SMALL)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=hostile_documents | json_values)
def test_any_document_is_decided_with_a_short_error(document: Any) -> None:
    checked = check_document("reviewer", document)
    if checked.ok:
        return
    error = checked.error
    assert error is not None
    assert error["code"] in CODES
    violations = error.get("violations", [])
    assert len(violations) <= MAX_VIOLATIONS
    assert len(violations) <= (error.get("violation_count") or 0) or error["code"] == "MISSING_STATUS"
    assert len(json.dumps(error)) < 64_000 + 2 * len(json.dumps(document))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    raw=st.lists(
        st.sampled_from(['{"status": "success", ', '"agent": "code-reviewer", ', '"issues": [', "{}", "[]"])
        | st.sampled_from([",", "]", "}", "```json\n", "\n```", '"', "\\", "\x00", "\ud800", "Here: "])
        | st.text(max_size=5),
        max_size=30,
    ).map("".join)
)
def test_any_message_is_decided_without_an_exception(raw: str) -> None:
    checked = check_text("reviewer", raw)
    assert checked.ok or (checked.error is not None and checked.error["code"] in CODES)
    assert checked.ok == (checked.document is not None)


# A bounded stress test: every hostile shape near the largest message searched, in this process; each is
# decided with a parse error or a violation or two (the fenced `{}` lacks status and agent), never with a
# listing of what it repeats.
STRESS_SHAPES: dict[str, str] = {
    "empty issues": '{"status": "success", "agent": "code-reviewer", "issues": [' + "{}, " * 200_000 + "{}]}",
    "empty arrays": '{"status": "success", "agent": "code-reviewer", "issues": [' + "[], " * 200_000 + "[]]}",
    "cut off": 'Here: {"status": "success", "agent": "code-reviewer", "issues": [' + "{}, " * 200_000,
    "deep": '{"status": "success", "agent": "code-reviewer", "issues": '
    + "[" * 100_000
    + "]" * 100_000
    + "}",
    "fences": "```json\n{}\n```\n" * 60_000,
    "brackets": "[{" * 400_000,
}


@pytest.mark.parametrize("shape", list(STRESS_SHAPES))
def test_hostile_shapes_near_the_input_limit_are_refused_with_a_short_error(shape: str) -> None:
    raw = STRESS_SHAPES[shape]
    assert len(raw) <= MAX_INPUT_BYTES
    checked = check_text("reviewer", raw)
    assert checked.error is not None and checked.error["code"] in CODES
    assert len(checked.error.get("violations", [])) <= 2
    assert len(json.dumps(checked.error)) < 64_000
