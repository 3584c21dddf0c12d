"""check_text / check_document: the validation outcome as a value, with the error objects of validate_text."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixloop.contracts.check import Checked, check_document, check_text
from fixloop.contracts.extract import MAX_CANDIDATES, MAX_DEPTH
from fixloop.contracts.validation import KIND_EXAMPLES, KINDS, validate_document, validate_text
from fixloop.core.errors import FixloopError

PARSE_HINT = (
    "Answer with exactly one JSON document (a ```json block is fine); quote and escape every "
    'string (write \\" for a quote inside a string). Parser said: '
)


def example(kind: str) -> dict[str, Any]:
    return copy.deepcopy(KIND_EXAMPLES[kind])


def bad_confidence() -> str:
    document = example("reviewer")
    document["issues"][0]["confidence"] = "85%"
    return json.dumps(document)


# (kind, raw message): one of every fault of an agent's content, and a few good answers.
MESSAGES: list[tuple[str, bytes | str]] = [
    ("reviewer", ""),
    ("reviewer", b"  \n"),
    ("fixer", " null\n"),
    ("reviewer", "I reviewed the files and found nothing."),
    ("reviewer", '{"status": "success", "issues": [1, 2}'),
    ("reviewer", '{"a": NaN}'),
    ("verifier", '{"status": "success", "task_id": "t", "agent": "review-ver'),
    ("reviewer", "[" * (MAX_DEPTH + 1)),
    ("reviewer", '{"agent": "code-reviewer", "issues": []}'),
    ("reviewer", '{"status": null, "agent": "code-reviewer"}'),
    ("reviewer", bad_confidence()),
    ("reviewer", '{"status": "success", "agent": "code-reviewer", "issues": [{}, {}]}'),
    ("review-task", '{"task_id": "t"}'),
    ("event", '{"ts": "2024-12-06T14:30:52.123Z", "level": "I", "type": "NOPE", "session_id": "a1b2c3d4"}'),
    ("reviewer", "Done.\n```json\n" + json.dumps(example("reviewer")) + "\n```"),
    *[(kind, json.dumps(example(kind))) for kind in KINDS],
]


def raised_error(kind: str, raw: bytes | str) -> dict[str, Any] | None:
    """The error object validate_text raises (exit_code 1), or None when it returns a document."""
    try:
        validate_text(kind, raw)
    except FixloopError as error:
        assert error.exit_code == 1
        found: dict[str, Any] = error.to_document()["error"]
        return found
    return None


@pytest.mark.parametrize(("kind", "raw"), MESSAGES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(MESSAGES)])
def test_check_text_gives_what_validate_text_returns_or_raises(kind: str, raw: bytes | str) -> None:
    checked = check_text(kind, raw)
    error = raised_error(kind, raw)
    assert checked.error == error
    assert checked.ok is (error is None)
    if error is None:
        assert checked.document == validate_text(kind, raw)
    else:
        assert checked.document is None
        assert checked.error is not None and checked.error["kind"] == kind


def test_an_empty_message() -> None:
    assert check_text("reviewer", " \n") == Checked(
        document=None,
        error={
            "code": "NULL_RESPONSE",
            "message": "The agent's final message is empty: it must end with the JSON result document.",
            "kind": "reviewer",
            "hint": "Answer with the JSON result document as your final message.",
        },
    )


def test_prose_without_json() -> None:
    detail = "no JSON object found (Expecting value: line 1 column 1)"
    assert check_text("fixer", "Nothing to fix.").error == {
        "code": "JSON_PARSE_ERROR",
        "message": f"The agent's final message holds no parsable JSON document: {detail}",
        "kind": "fixer",
        "parse_error": detail,
        "raw_output_preview": "Nothing to fix.",
        "hint": PARSE_HINT + detail,
    }


def test_a_cut_off_document() -> None:
    raw = '{"status": "success", "task_id": "t", "agent": "review-ver'
    assert check_text("verifier", raw).error == {
        "code": "TRUNCATION_DATA_LOSS",
        "message": "The agent's JSON output was cut off while writing field 'agent'; missing required "
        "fields: agent.",
        "kind": "verifier",
        "missing_fields": ["agent"],
        "fields_present": ["status", "task_id"],
        "truncated_field": "agent",
        "raw_output_preview": raw,
        "hint": "Your JSON was cut off before it closed. Return a shorter but complete document "
        "(fewer or shorter entries, no code excerpts longer than needed).",
    }


def test_a_missing_status() -> None:
    violation = {
        "path": "$.status",
        "message": "missing required field 'status' (one of 'success', 'failed')",
        "type": "missing",
    }
    assert check_document("reviewer", {"agent": "code-reviewer"}).error == {
        "code": "MISSING_STATUS",
        "message": 'The reviewer document has no "status" field.',
        "kind": "reviewer",
        "violations": [violation],
        "violation_count": 1,
        "hint": "Add a top-level \"status\" field ('success' or 'failed') and return the whole JSON "
        f"document again. 1 problem: {violation['path']} {violation['message']}",
    }


def test_a_schema_violation() -> None:
    checked = check_text("reviewer", bad_confidence())
    assert checked.document is None
    assert checked.error == {
        "code": "SCHEMA_VIOLATION",
        "message": "The reviewer document breaks its contract in 1 place.",
        "kind": "reviewer",
        "violations": [
            {
                "path": "$.issues[0].confidence",
                "message": "must be an integer from 0 to 100; got '85%'",
                "type": "int_type",
            }
        ],
        "violation_count": 1,
        "hint": "Fix 1 problem and return the whole corrected JSON document: "
        "$.issues[0].confidence must be an integer from 0 to 100; got '85%'",
    }


def test_a_document_too_deep_to_store() -> None:
    event = {"ts": "2024-12-06T14:30:52.123Z", "level": "D", "type": "AGENT_IO", "session_id": "a1b2c3d4"}
    content: Any = []
    for _ in range(300):
        content = [content]
    checked = check_document("event", event | {"agent": "x", "direction": "output", "content": content})
    assert checked.error is not None
    assert checked.error["violations"] == [
        {"path": "$", "message": "is nested too deeply to store", "type": "too_deep"}
    ]


def test_a_good_answer_is_the_normalized_document() -> None:
    checked = check_text("reviewer", '{"status": "success", "agent": "fixloop:Code-Reviewer"}')
    assert checked == Checked(
        document={
            "status": "success",
            "agent": "code-reviewer",
            "issues": [],
            "positive_observations": [],
            "error": None,
        },
        error=None,
    )
    assert checked.ok
    assert check_document("fixer", example("fixer")).document == validate_document("fixer", example("fixer"))


def test_checked_is_a_frozen_value() -> None:
    checked = check_text("reviewer", "")
    with pytest.raises(dataclasses.FrozenInstanceError):
        checked.error = None  # type: ignore[misc]


def test_an_unknown_kind_is_still_raised() -> None:
    with pytest.raises(FixloopError) as from_text:
        check_text("nope", "{}")
    with pytest.raises(FixloopError) as from_document:
        check_document("nope", {})
    for caught in (from_text, from_document):
        assert caught.value.code == "UNKNOWN_KIND"
        assert caught.value.exit_code == 2


def test_no_error_is_raised_inside_for_the_agents_content(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every problem of the content is built as a value: no FixloopError is even constructed."""
    made: list[str] = []
    original = FixloopError.__init__

    def spy(self: FixloopError, code: str, message: str, exit_code: int = 2, **details: Any) -> None:
        made.append(code)
        original(self, code, message, exit_code, **details)

    monkeypatch.setattr(FixloopError, "__init__", spy)
    outcomes = [check_text(kind, raw) for kind, raw in MESSAGES]
    outcomes.append(check_text("reviewer", "[] " * (MAX_CANDIDATES + 1)))
    assert made == []
    assert {o.error["code"] for o in outcomes if o.error is not None} == {
        "NULL_RESPONSE",
        "JSON_PARSE_ERROR",
        "TRUNCATION_DATA_LOSS",
        "MISSING_STATUS",
        "SCHEMA_VIOLATION",
    }


def test_too_complex_to_search() -> None:
    error = check_text("reviewer", "[] " * (MAX_CANDIDATES + 1)).error
    assert error is not None
    assert error["parse_error"] == f"gave up searching: more than {MAX_CANDIDATES} JSON-like fragments"


messy = st.lists(
    st.one_of(
        st.text(max_size=20),
        st.sampled_from(['{"', "{", "}", "[", "]", '"', "```json\n", "```\n", '"status": ', '"agent": ']),
    ),
    max_size=30,
).map("".join)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(list(KINDS)), st.one_of(st.binary(max_size=300), messy))
def test_check_text_always_agrees_with_validate_text(kind: str, raw: bytes | str) -> None:
    checked = check_text(kind, raw)
    assert checked.error == raised_error(kind, raw)
    assert (checked.document is None) is (checked.error is not None)
