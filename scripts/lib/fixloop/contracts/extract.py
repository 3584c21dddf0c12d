"""Find the JSON document inside an agent's final message.

Agents are asked to answer with one JSON document, but their final message may wrap it in prose or in a
```json fence, may be cut off, or may not be JSON at all. `find_document` returns the document or a
`Problem` (`fixloop.contracts.problems`); `extract` returns the document or raises that problem as a
`FixloopError` (exit_code 1). A problem's details always end with a `hint` (an instruction for the agent):

- NULL_RESPONSE: the message is empty or whitespace (or the JSON literal `null`). No other details.
- TRUNCATION_DATA_LOSS: an object starts with `{` but the input ends before it closes. Details:
  `missing_fields` (the required top-level fields whose values were not recovered; a value only counts once
  a `,` or `}` follows it), `fields_present` (top-level keys with complete values, in order, at most 50),
  `truncated_field` (the key whose value was cut off, or null), `raw_output_preview`.
- JSON_PARSE_ERROR: no JSON document, broken JSON, or an input too large or too complex to search.
  Details: `parse_error` ("Expecting ',' delimiter: line 3 column 35 (char 101)", positions counted in the
  whole message), `raw_output_preview` (its first 500 characters) and, for broken JSON, `error_context`
  (40 characters either side of the error).

Which document is picked, in order:
1. the whole message when it is exactly one JSON value (a scalar is returned as it is);
2. else the last ```json fence whose content parses (a fence left open at the end runs to the end);
3. else the fragments found by scanning: every top-level `{...}` / `[...]` that starts like JSON (`{` then
   `"`, `}` or the end; `[` then a JSON value, `]` or the end). The last non-empty object wins, else the last
   `{}`, else the last array. A `{` fragment cut off by the end of the input (it parses fine up to there)
   wins over all of them: truncation. A fragment that fails to parse is never looked inside (an issue
   object of a broken document is not taken for the document); when nothing parses, the broken fragment
   with the longest valid prefix is reported. A stray `[1` that never closes swallows the rest of the message.
Input bytes are decoded as UTF-8 with replacement; lone surrogates become U+FFFD; raw control characters
inside strings are tolerated; NaN, Infinity and numbers that overflow a float are refused.
Cost is linear and bounded: inputs over MAX_INPUT_BYTES (4 MiB, several times what a model writes in one
message) are refused unread; nesting deeper than MAX_DEPTH is not searched; a message that is one JSON value
of more than MAX_OBJECTS objects is refused as soon as the reading passes that many; past MAX_CANDIDATES
fragments or MAX_SCAN_TOKENS bracket/string runs the search gives up with a JSON_PARSE_ERROR that says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from fixloop.contracts.diagnosis import (
    JSON_PARSE_ERROR,
    MAX_FIELDS_REPORTED,
    NULL_RESPONSE,
    PREVIEW_CHARS,
    TRUNCATION_DATA_LOSS,
    broken,
    null_response,
    parse_error,
    preview,
    recover_top_level_fields,
    truncation,
)
from fixloop.contracts.fences import fenced_documents
from fixloop.contracts.jsontext import (
    MAX_DEPTH,
    TOO_DEEP,
    TOO_MANY_OBJECTS,
    TooManyObjects,
    clean_surrogates,
    decode,
    decode_input,
    deeper_than,
)
from fixloop.contracts.problems import Problem
from fixloop.contracts.scan import (
    MAX_CANDIDATES,
    MAX_SCAN_TOKENS,
    TOKEN_PATTERN_PORTABLE,
    TOKEN_PATTERN_POSSESSIVE,
    scan,
)

__all__ = [
    "JSON_PARSE_ERROR",
    "MAX_CANDIDATES",
    "MAX_DEPTH",
    "MAX_FIELDS_REPORTED",
    "MAX_INPUT_BYTES",
    "MAX_SCAN_TOKENS",
    "NULL_RESPONSE",
    "PREVIEW_CHARS",
    "TOKEN_PATTERN_PORTABLE",
    "TOKEN_PATTERN_POSSESSIVE",
    "TRUNCATION_DATA_LOSS",
    "Extraction",
    "Source",
    "decode_input",
    "extract",
    "extract_json",
    "find_document",
    "preview",
    "recover_top_level_fields",
]

MAX_INPUT_BYTES = 4 * 1024 * 1024

Source = Literal["whole", "fence", "scan"]

_OPENER = re.compile(r"[\[{]")


@dataclass
class Extraction:
    """The document found, where it came from, and the decoded text it came from."""

    document: Any
    source: Source
    text: str


def extract(raw: bytes | str, required_fields: Sequence[str] = ()) -> Extraction:
    """Find the JSON document in an agent's message; see the module docstring for the rules and errors."""
    found = find_document(raw, required_fields)
    if isinstance(found, Problem):
        raise found.exception()
    return found


def extract_json(raw: bytes | str, required_fields: Sequence[str] = ()) -> Any:
    return extract(raw, required_fields).document


def find_document(raw: bytes | str, required_fields: Sequence[str] = ()) -> Extraction | Problem:
    """The JSON document in an agent's message, or the problem that keeps it from being found."""
    size = len(raw)
    if size > MAX_INPUT_BYTES:
        text = decode_input(raw[: PREVIEW_CHARS * 4])
        unit = "bytes" if isinstance(raw, bytes) else "characters"
        return parse_error(
            f"input is {size} {unit}, over the {MAX_INPUT_BYTES}-{unit[:-1]} limit: not searched for JSON",
            text,
            message="The agent's final message is too large to search for a JSON document.",
        )
    text = decode_input(raw)
    stripped = text.strip()
    if not stripped or stripped == "null":
        return null_response(stripped)
    whole_error: json.JSONDecodeError | None = None
    try:
        return _found(decode(stripped), "whole", text)
    except json.JSONDecodeError as error:
        whole_error = error
    except TooManyObjects:
        return parse_error(
            TOO_MANY_OBJECTS,
            text,
            message="The agent's final message holds too large a JSON document to read.",
        )
    except (ValueError, RecursionError):
        pass

    fenced = [value for value in fenced_documents(text) if isinstance(value, (dict, list))]
    picked = _pick(fenced)
    if picked is not None:
        return _found(fenced[picked], "fence", text)

    scanned = scan(text)
    if scanned.gave_up is not None:
        return parse_error(
            f"gave up searching: {scanned.gave_up}",
            text,
            message="The agent's final message is too complex to search for a JSON document.",
        )
    candidates = scanned.candidates
    oks = [c for c in candidates if c.ok and isinstance(c.value, (dict, list))]
    picked = _pick([c.value for c in oks])
    if candidates and candidates[-1].truncated:  # always the last candidate: it runs to the end
        return truncation(text, candidates[-1], required_fields)
    if picked is not None:
        return Extraction(clean_surrogates(oks[picked].value, text), "scan", text)

    failed = [c for c in candidates if not c.ok]
    if failed:
        # The broken span with the longest valid prefix is most likely the intended document.
        return broken(text, max(reversed(failed), key=lambda c: c.error_pos - c.start))
    if whole_error is not None and not _OPENER.search(text):
        detail = (
            f"no JSON object found ({whole_error.msg}: line {whole_error.lineno} column {whole_error.colno})"
        )
    else:
        detail = "no JSON object or array found in the message"
    return parse_error(detail, text)


def _found(document: Any, source: Source, text: str) -> Extraction | Problem:
    """A document found without scanning still has to respect MAX_DEPTH (the scan enforces it itself)."""
    if deeper_than(document, MAX_DEPTH):
        return parse_error(TOO_DEEP, text)
    return Extraction(clean_surrogates(document, text), source, text)


def _pick(values: Sequence[Any]) -> int | None:
    """Index of the last non-empty object, else the last object, else the last array."""
    tests: tuple[Callable[[Any], bool], ...] = (
        lambda value: isinstance(value, dict) and bool(value),
        lambda value: isinstance(value, dict),
        lambda value: isinstance(value, list),
    )
    for test in tests:
        for index in range(len(values) - 1, -1, -1):
            if test(values[index]):
                return index
    return None
