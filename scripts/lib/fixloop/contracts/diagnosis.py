"""The problems extraction reports: an empty message, no parsable JSON, a document cut off before it closed.

Every problem's details end with a `hint`, an instruction to quote back to the agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from fixloop.contracts.jsontext import WHITESPACE, raw_decode
from fixloop.contracts.problems import Problem
from fixloop.contracts.scan import Candidate

NULL_RESPONSE = "NULL_RESPONSE"
JSON_PARSE_ERROR = "JSON_PARSE_ERROR"
TRUNCATION_DATA_LOSS = "TRUNCATION_DATA_LOSS"
PREVIEW_CHARS = 500
MAX_FIELDS_REPORTED = 50


def preview(text: str) -> str:
    return text[:PREVIEW_CHARS]


def null_response(stripped: str) -> Problem:
    return Problem(
        NULL_RESPONSE,
        "The agent's final message is empty: it must end with the JSON result document."
        if stripped != "null"
        else "The agent's final message is the JSON literal null, not a result document.",
        {"hint": "Answer with the JSON result document as your final message."},
    )


def parse_error(detail: str, text: str, message: str | None = None, **context: Any) -> Problem:
    return Problem(
        JSON_PARSE_ERROR,
        message or f"The agent's final message holds no parsable JSON document: {detail}",
        {
            "parse_error": detail,
            "raw_output_preview": preview(text),
            **context,
            "hint": (
                "Answer with exactly one JSON document (a ```json block is fine); quote and escape every "
                f'string (write \\" for a quote inside a string). Parser said: {detail}'
            ),
        },
    )


def broken(text: str, candidate: Candidate) -> Problem:
    """The parse error of the fragment that failed, located in the whole message."""
    line, column = _line_column(text, candidate.error_pos)
    if candidate.error_located:
        detail = f"{candidate.error_msg}: line {line} column {column} (char {candidate.error_pos})"
    else:
        detail = f"{candidate.error_msg} (in the JSON starting at line {line} column {column})"
    context = text[max(candidate.error_pos - 40, 0) : candidate.error_pos + 40]
    return parse_error(detail, text, error_context=context)


def truncation(text: str, candidate: Candidate, required_fields: Sequence[str]) -> Problem:
    """An object cut off by the end of the message: which fields it kept, lost, and was writing."""
    present, cut = recover_top_level_fields(text, candidate.start)
    missing = [name for name in required_fields if name not in present]
    where = f"while writing field '{cut}'" if cut else "before the document closed"
    return Problem(
        TRUNCATION_DATA_LOSS,
        f"The agent's JSON output was cut off {where}"
        + (f"; missing required fields: {', '.join(missing)}" if missing else "")
        + ".",
        {
            "missing_fields": missing,
            "fields_present": present[:MAX_FIELDS_REPORTED],
            "truncated_field": cut,
            "raw_output_preview": preview(text),
            "hint": (
                "Your JSON was cut off before it closed. Return a shorter but complete document "
                "(fewer or shorter entries, no code excerpts longer than needed)."
            ),
        },
    )


def recover_top_level_fields(text: str, start: int) -> tuple[list[str], str | None]:
    """Top-level keys of the (partial) object at `start` whose values are complete, and the key whose
    value was cut off (None when the text ended between fields)."""
    keys: list[str] = []
    index = _skip_space(text, start + 1)
    while index < len(text) and text[index] == '"':
        try:
            key, index = scanstring(text, index + 1, False)
        except ValueError:
            return keys, None
        index = _skip_space(text, index)
        if text[index : index + 1] != ":":
            return keys, key if index >= len(text) else None
        index = _skip_space(text, index + 1)
        try:
            _value, index = raw_decode(text, index)
        except (ValueError, RecursionError):
            return keys, key
        index = _skip_space(text, index)
        follower = text[index : index + 1]
        if follower not in (",", "}"):  # a value is only complete once what follows it says so
            return keys, key
        if key not in keys:
            keys.append(key)
        if follower == "}":
            break
        index = _skip_space(text, index + 1)
    return keys, None


def _skip_space(text: str, index: int) -> int:
    match = WHITESPACE.match(text, index)
    return match.end() if match else index


def _line_column(text: str, position: int) -> tuple[int, int]:
    line = text.count("\n", 0, position) + 1
    column = position - text.rfind("\n", 0, position)
    return line, column
