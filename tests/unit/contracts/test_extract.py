"""Finding the JSON document in an agent's raw final message, and the errors when there is none."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixloop.contracts.bounds import MAX_ISSUES_PER_ANSWER
from fixloop.contracts.extract import (
    MAX_CANDIDATES,
    MAX_DEPTH,
    MAX_INPUT_BYTES,
    TOKEN_PATTERN_PORTABLE,
    TOKEN_PATTERN_POSSESSIVE,
    extract,
    extract_json,
)
from fixloop.contracts.validation import KINDS, validate_document, validate_text
from fixloop.core.errors import FixloopError

EXTRACT_CODES = {"NULL_RESPONSE", "JSON_PARSE_ERROR", "TRUNCATION_DATA_LOSS"}
VALIDATE_CODES = EXTRACT_CODES | {"MISSING_STATUS", "SCHEMA_VIOLATION"}
REQUIRED = ("status", "agent")


def error_of(raw: bytes | str, required: tuple[str, ...] = REQUIRED) -> dict[str, Any]:
    with pytest.raises(FixloopError) as caught:
        extract(raw, required)
    assert caught.value.exit_code == 1
    document = caught.value.to_document()
    assert document["status"] == "failed"
    error: dict[str, Any] = document["error"]
    return error


# --- the three error codes, exactly --------------------------------------------------------------------


@pytest.mark.parametrize("raw", [b"", b"   \n\t  ", "", "\ufeff  ", b"\xef\xbb\xbf\n"])
def test_empty_message_is_null_response(raw: bytes | str) -> None:
    assert error_of(raw) == {
        "code": "NULL_RESPONSE",
        "message": "The agent's final message is empty: it must end with the JSON result document.",
        "hint": "Answer with the JSON result document as your final message.",
    }


def test_json_null_is_null_response() -> None:
    assert error_of(" null\n") == {
        "code": "NULL_RESPONSE",
        "message": "The agent's final message is the JSON literal null, not a result document.",
        "hint": "Answer with the JSON result document as your final message.",
    }


def test_prose_without_json_is_a_parse_error() -> None:
    assert error_of("I reviewed the files and found nothing.") == {
        "code": "JSON_PARSE_ERROR",
        "message": "The agent's final message holds no parsable JSON document: "
        "no JSON object found (Expecting value: line 1 column 1)",
        "parse_error": "no JSON object found (Expecting value: line 1 column 1)",
        "raw_output_preview": "I reviewed the files and found nothing.",
        "hint": "Answer with exactly one JSON document (a ```json block is fine); quote and escape every "
        'string (write \\" for a quote inside a string). Parser said: '
        "no JSON object found (Expecting value: line 1 column 1)",
    }


def test_unescaped_quotes_are_a_parse_error_with_line_and_column() -> None:
    raw = (
        "Here is my review:\n"
        '{"status": "success", "agent": "code-reviewer",\n'
        ' "positive_observations": ["uses "safe" defaults"]}\n'
    )
    error = error_of(raw)
    assert error == {
        "code": "JSON_PARSE_ERROR",
        "message": "The agent's final message holds no parsable JSON document: "
        "Expecting ',' delimiter: line 3 column 35 (char 101)",
        "parse_error": "Expecting ',' delimiter: line 3 column 35 (char 101)",
        "raw_output_preview": raw,
        "error_context": 'wer",\n "positive_observations": ["uses "safe" defaults"]}\n',
        "hint": "Answer with exactly one JSON document (a ```json block is fine); quote and escape every "
        'string (write \\" for a quote inside a string). Parser said: '
        "Expecting ',' delimiter: line 3 column 35 (char 101)",
    }
    assert raw[101:105] == "safe"


def test_preview_is_at_most_500_characters() -> None:
    raw = "x" * 2000 + ' {"status": "success", "agent": 1,, }'
    error = error_of(raw)
    assert error["code"] == "JSON_PARSE_ERROR"
    assert error["raw_output_preview"] == "x" * 500


def test_truncated_document() -> None:
    raw = 'Result:\n```json\n{"status": "success", "agent": "code-reviewer", "issues": [{"id": "CR-1", "desc'
    assert error_of(raw) == {
        "code": "TRUNCATION_DATA_LOSS",
        "message": "The agent's JSON output was cut off while writing field 'issues'.",
        "missing_fields": [],
        "fields_present": ["status", "agent"],
        "truncated_field": "issues",
        "raw_output_preview": raw,
        "hint": "Your JSON was cut off before it closed. Return a shorter but complete document "
        "(fewer or shorter entries, no code excerpts longer than needed).",
    }


@pytest.mark.parametrize(
    ("raw", "missing", "present", "cut"),
    [
        ("{", ["status", "agent"], [], None),
        ('{"status"', ["status", "agent"], [], "status"),
        ('{"status": "succ', ["status", "agent"], [], "status"),
        ('{"status": "success", ', ["agent"], ["status"], None),
        ('{"status": "success", "agent": tr', ["agent"], ["status"], "agent"),
        ('{"status": "success", "agent": "x", "n": -', [], ["status", "agent"], "n"),
        ('{"status": "success", "agent": "x", "n": 1.', [], ["status", "agent"], "n"),
        ('{"status": "success", "agent": "x", "n": 12', [], ["status", "agent"], "n"),
        ('{"status": "success", "agent": "x"', ["agent"], ["status"], "agent"),
        ('{"status": "success", "agent": "x", "s": "\\u12', [], ["status", "agent"], "s"),
        ('{"agent": "x", "deep": {"status": "success", "a": [1, {"b": ', ["status"], ["agent"], "deep"),
    ],
)
def test_truncation_reports_the_missing_required_fields(
    raw: str, missing: list[str], present: list[str], cut: str | None
) -> None:
    error = error_of(raw)
    assert error["code"] == "TRUNCATION_DATA_LOSS"
    assert (error["missing_fields"], error["fields_present"], error["truncated_field"]) == (
        missing,
        present,
        cut,
    )


def test_an_unclosed_array_is_a_parse_error_not_a_truncation() -> None:
    error = error_of('[{"status": "success"}, ')
    assert error["code"] == "JSON_PARSE_ERROR"
    assert error["parse_error"] == "Expecting value: line 1 column 25 (char 24)"


def test_a_broken_object_closed_by_a_wrong_bracket_is_a_parse_error() -> None:
    error = error_of('{"status": "success", "issues": [1, 2}')
    assert error["code"] == "JSON_PARSE_ERROR"
    assert error["parse_error"] == "Expecting ',' delimiter: line 1 column 38 (char 37)"


def test_oversized_input_is_refused_unread() -> None:
    raw = b"{" + b" " * MAX_INPUT_BYTES
    error = error_of(raw)
    assert error["code"] == "JSON_PARSE_ERROR"
    assert error["message"] == "The agent's final message is too large to search for a JSON document."
    assert error["parse_error"] == (
        f"input is {MAX_INPUT_BYTES + 1} bytes, over the {MAX_INPUT_BYTES}-byte limit: not searched for JSON"
    )
    assert error["raw_output_preview"] == "{" + " " * 499


@pytest.mark.parametrize(
    ("raw", "parse_error"),
    [
        ('{"a": NaN}', "NaN is not valid JSON (in the JSON starting at line 1 column 1)"),
        ('x\n{"a": [-Infinity]}', "-Infinity is not valid JSON (in the JSON starting at line 2 column 1)"),
        ('{"a": 1e999}', "the number 1e999 is too large (in the JSON starting at line 1 column 1)"),
        (
            "[" * (MAX_DEPTH + 1),
            f"nested deeper than {MAX_DEPTH} levels (in the JSON starting at line 1 column 1)",
        ),
        (
            "[" * 2000 + "]" * 2000,
            f"nested deeper than {MAX_DEPTH} levels (in the JSON starting at line 1 column 1)",
        ),
        ('{"n": ' + "1" * 5000 + "}", "(in the JSON starting at line 1 column 1)"),
    ],
)
def test_values_python_would_accept_but_json_does_not(raw: str, parse_error: str) -> None:
    error = error_of(raw)
    assert error["code"] == "JSON_PARSE_ERROR"
    assert error["parse_error"].endswith(parse_error)


def _nested(depth: int) -> str:
    return "[" * (depth - 1) + '{"a": 1}' + "]" * (depth - 1)


@pytest.mark.parametrize("wrap", ["{}", "```json\n{}\n```", "text {} text"])
def test_nesting_limit_is_the_same_for_every_way_of_finding_a_document(wrap: str) -> None:
    found = extract_json(wrap.replace("{}", _nested(MAX_DEPTH)))
    assert isinstance(found, list)
    error = error_of(wrap.replace("{}", _nested(MAX_DEPTH + 1)))
    assert error["code"] == "JSON_PARSE_ERROR"
    assert error["parse_error"].startswith(f"nested deeper than {MAX_DEPTH} levels")


def test_deep_documents_validate_up_to_the_limit() -> None:
    event = {"ts": "2024-12-06T14:30:52.123Z", "level": "D", "type": "AGENT_IO", "session_id": "a1b2c3d4"}
    event |= {"agent": "code-reviewer", "direction": "output"}
    deep = json.dumps(event)[:-1] + ', "content": ' + _nested(MAX_DEPTH - 1) + "}"
    assert validate_text("event", deep)["content"] == json.loads(_nested(MAX_DEPTH - 1))
    content: Any = []
    for _ in range(300):
        content = [content]
    with pytest.raises(FixloopError) as caught:
        validate_document("event", event | {"content": content})
    assert caught.value.details["violations"] == [
        {"path": "$", "message": "is nested too deeply to store", "type": "too_deep"}
    ]


def test_too_many_fragments_is_a_parse_error_that_says_so() -> None:
    error = error_of("[] " * (MAX_CANDIDATES + 1))
    assert error["code"] == "JSON_PARSE_ERROR"
    assert error["parse_error"] == f"gave up searching: more than {MAX_CANDIDATES} JSON-like fragments"
    assert error["message"] == "The agent's final message is too complex to search for a JSON document."


# --- which document is picked --------------------------------------------------------------------------


def test_a_message_that_is_only_json() -> None:
    found = extract(b' \n{"status": "success"}\n')
    assert (found.document, found.source) == ({"status": "success"}, "whole")


def test_fenced_json_in_prose() -> None:
    raw = 'I checked it.\n\n```json\n{"status": "success", "note": "a } and a ```"}\n```\n\nBye {"x": 1}'
    found = extract(raw)
    assert (found.document, found.source) == ({"status": "success", "note": "a } and a ```"}, "fence")


def test_the_last_fenced_json_block_wins() -> None:
    raw = 'Example:\n```json\n{"status": "example"}\n```\nActual:\n```JSON\n{"status": "success"}\n```\n'
    assert extract_json(raw) == {"status": "success"}


def test_a_fenced_json_block_wins_over_bare_json_after_it() -> None:
    raw = '```json\n{"status": "success"}\n```\nFor reference the old one was {"status": "failed"}.'
    assert extract_json(raw) == {"status": "success"}


def test_a_fence_that_does_not_parse_falls_back_to_scanning() -> None:
    raw = '```json\n{"status": "success"} trailing words\n```\n'
    found = extract(raw)
    assert (found.document, found.source) == ({"status": "success"}, "scan")


def test_an_unlabeled_fence_is_found_by_scanning() -> None:
    raw = 'Result:\n```\n{"status": "success"}\n```'
    assert extract(raw).source == "scan"
    assert extract_json(raw) == {"status": "success"}


def test_a_closing_fence_on_the_last_json_line_still_works() -> None:
    assert extract_json('```json\n{"status": "success"}```') == {"status": "success"}


def test_the_last_bare_document_wins() -> None:
    assert extract_json('Draft: {"status": "failed"}\nFinal: {"status": "success"}\nDone.') == {
        "status": "success"
    }


def test_a_non_empty_object_wins_over_a_later_empty_one_and_over_arrays() -> None:
    assert extract_json('{"status": "success"} Note: use {} for no options, [1] and [ ].') == {
        "status": "success"
    }
    assert extract_json("the {} here, then [1, 2]") == {}
    assert extract_json("see [1, 2] and [3]") == [3]


def test_a_later_broken_fragment_does_not_hide_a_document() -> None:
    assert extract_json('{"status": "success"}\nP.S. {"status": oops}') == {"status": "success"}


def test_a_truncated_document_after_a_complete_one_is_a_truncation() -> None:
    error = error_of('Example: {"status": "success"}\nMine: {"status": "success", "agent": "code-')
    assert error["code"] == "TRUNCATION_DATA_LOSS"
    assert error["truncated_field"] == "agent"


def test_prose_braces_are_not_documents() -> None:
    assert extract_json('Use {name} or {{x}} in [brackets]; result {"status": "success"} (see [1]).') == {
        "status": "success"
    }
    assert extract_json('{ here it is: {"status": "success"} }') == {"status": "success"}


def test_an_object_inside_a_broken_document_is_never_taken_for_it() -> None:
    raw = '{"status": "success", "issues": [{"id": "A", "description": "he said "hi""}, {"id": "B"}]}'
    error = error_of(raw)
    assert error["code"] == "JSON_PARSE_ERROR"
    assert error["parse_error"] == "Expecting ',' delimiter: line 1 column 71 (char 70)"


def test_a_stray_unclosed_bracket_hides_what_follows() -> None:
    # documented limit: `[1` starts like JSON, never closes, so the rest of the message is inside it
    error = error_of('see [1 and then {"status": "success"}')
    assert error["parse_error"] == "Expecting ',' delimiter: line 1 column 8 (char 7)"


def test_a_mismatched_bracket_ends_a_fragment_and_scanning_goes_on() -> None:
    assert extract_json('{"a": [1, 2}, then {"status": "success"}') == {"status": "success"}


def test_scalars_are_returned_as_they_are() -> None:
    assert extract_json("42") == 42
    assert extract_json('"just a string"') == "just a string"


# --- decoding ------------------------------------------------------------------------------------------


def test_invalid_utf8_nul_and_bom() -> None:
    raw = b'\xef\xbb\xbf\xff\xfe garbage {"status": "s\xc3\xa9", "nul": "a\x00b", "bad": "\xff"} \x00'
    assert extract_json(raw) == {"status": "sé", "nul": "a\x00b", "bad": "\ufffd"}


def test_raw_newlines_in_strings_are_tolerated() -> None:
    assert extract_json('{"code": "line 1\nline 2\tend"}') == {"code": "line 1\nline 2\tend"}


def test_lone_surrogates_are_replaced() -> None:
    assert extract_json('{"a": "\\ud800x", "\\udfff": ["\\ud83d\\ude00"]}') == {
        "a": "\ufffdx",
        "\ufffd": ["😀"],
    }
    assert extract_json('{"a": "\ud800"}') == {"a": "\ufffd"}


# --- big inputs ----------------------------------------------------------------------------------------

BIG = MAX_INPUT_BYTES - 64  # about the largest message that is searched


def _big_reviewer_output() -> bytes:
    """A reviewer's document of as many issues as an answer may report, with descriptions long enough to
    make it nearly BIG bytes."""
    description = "d" * (BIG // MAX_ISSUES_PER_ANSWER - 200)
    issue = {
        "id": "CR-0",
        "severity": "low",
        "confidence": 90,
        "file": "src/a.py",
        "line": 1,
        "category": "quality",
        "description": description,
        "suggestion": "s",
        "auto_fixable": False,
    }
    issues = [dict(issue, id=f"CR-{n}") for n in range(MAX_ISSUES_PER_ANSWER)]
    return json.dumps({"status": "success", "agent": "code-reviewer", "issues": issues}).encode()


def test_megabytes_of_prose() -> None:
    error = error_of(b"All good. " * (BIG // 10))
    assert error["code"] == "JSON_PARSE_ERROR"
    assert error["parse_error"] == "no JSON object found (Expecting value: line 1 column 1)"


def test_megabytes_of_braces() -> None:
    error = error_of(b"{x" * (BIG // 2))
    assert error["code"] == "JSON_PARSE_ERROR"
    assert error["parse_error"] == "no JSON object or array found in the message"
    # only the last brace could start a document, and it never closes
    error = error_of(b"{" * BIG)
    assert (error["code"], error["missing_fields"]) == ("TRUNCATION_DATA_LOSS", ["status", "agent"])


def test_megabytes_of_json_in_prose_then_truncated() -> None:
    document = _big_reviewer_output()
    assert BIG * 0.95 < len(document) + len("Here:\n\nThat is all.") <= BIG
    found = validate_text("reviewer", b"Here:\n" + document + b"\nThat is all.")
    assert len(found["issues"]) == MAX_ISSUES_PER_ANSWER
    error = error_of(b"Here:\n" + document[: len(document) // 2])
    assert error["code"] == "TRUNCATION_DATA_LOSS"
    assert (error["missing_fields"], error["fields_present"], error["truncated_field"]) == (
        [],
        ["status", "agent"],
        "issues",
    )


# --- properties ----------------------------------------------------------------------------------------

texts = st.text(st.characters(codec="utf-8"), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=20,
)
prose = st.text(st.characters(codec="utf-8", exclude_characters="{}[]`"), max_size=80)
fragments = st.sampled_from(
    ['{"', "{", "}", "[", "]", '"', "\\", "```json\n", "```\n", "null", ":", ",", "\n"]
)
messy_text = st.lists(st.one_of(texts, fragments), max_size=30).map("".join)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(max_size=400), messy_text.map(str.encode)))
def test_arbitrary_input_never_raises_anything_else(raw: bytes) -> None:
    try:
        found = extract(raw, REQUIRED)
    except FixloopError as error:
        assert error.code in EXTRACT_CODES
        assert error.exit_code == 1
        json.dumps(error.to_document(), allow_nan=False).encode("utf-8")
        preview = error.details.get("raw_output_preview")
        assert preview is None or len(preview) <= 500
    else:
        json.dumps(found.document, allow_nan=False).encode("utf-8")


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(list(KINDS)), st.one_of(st.binary(max_size=300), messy_text, json_values.map(json.dumps))
)
def test_validation_only_fails_with_known_codes(kind: str, raw: bytes | str) -> None:
    try:
        normalized = validate_text(kind, raw)
    except FixloopError as error:
        assert error.code in VALIDATE_CODES
        assert isinstance(error.details["hint"], str) and error.details["hint"]
        assert error.details["kind"] == kind
    else:
        assert validate_document(kind, normalized) == normalized


@settings(max_examples=200)
@given(prose, st.dictionaries(texts, json_values, min_size=1, max_size=5), prose, st.booleans())
def test_a_document_in_prose_is_found(
    before: str, document: dict[str, Any], after: str, fenced: bool
) -> None:
    body = json.dumps(document, ensure_ascii=False)
    raw = f"{before}\n```json\n{body}\n```\n{after}" if fenced else f"{before} {body} {after}"
    assert extract_json(raw.encode("utf-8")) == document


def _tokens(pattern: re.Pattern[str], text: str) -> list[tuple[int, int, int | None]]:
    found: list[tuple[int, int, int | None]] = []
    index = 0
    while (token := pattern.match(text, index)) is not None:
        found.append((token.start(), token.end(), token.lastindex))
        index = token.end()
    return found


@pytest.mark.skipif(sys.version_info < (3, 11), reason="possessive quantifiers need python 3.11")
@settings(max_examples=300)
@given(messy_text)
def test_both_token_patterns_split_text_the_same_way(text: str) -> None:
    possessive = re.compile(TOKEN_PATTERN_POSSESSIVE, re.S)
    portable = re.compile(TOKEN_PATTERN_PORTABLE, re.S)
    assert _tokens(possessive, text) == _tokens(portable, text)
