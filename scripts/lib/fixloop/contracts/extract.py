"""Find the JSON document inside an agent's final message.

Agents are asked to answer with one JSON document, but their final message may wrap it in prose or in a
```json fence, may be cut off, or may not be JSON at all. `extract` returns the document or raises a
`FixloopError` (exit_code 1) whose details always end with a `hint` (an instruction for the agent):

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
Cost is linear: inputs over MAX_INPUT_BYTES are refused unread; nesting deeper than MAX_DEPTH is not
searched; past MAX_CANDIDATES fragments or MAX_SCAN_TOKENS bracket/string runs the search gives up with a
JSON_PARSE_ERROR that says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, Literal

from fixloop.core.errors import FixloopError

MAX_INPUT_BYTES = 64 * 1024 * 1024
PREVIEW_CHARS = 500
MAX_DEPTH = 200  # pydantic cannot serialize much deeper (about 255 levels)
MAX_FIELDS_REPORTED = 50
MAX_CANDIDATES = 100_000
MAX_SCAN_TOKENS = 4_000_000

NULL_RESPONSE = "NULL_RESPONSE"
JSON_PARSE_ERROR = "JSON_PARSE_ERROR"
TRUNCATION_DATA_LOSS = "TRUNCATION_DATA_LOSS"

Source = Literal["whole", "fence", "scan"]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_float(literal: str) -> float:
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {literal[:40]} is too large")
    return value


# strict=False: raw control characters (a literal newline or tab) inside strings are tolerated.
_DECODER = json.JSONDecoder(strict=False, parse_constant=_reject_constant, parse_float=_parse_float)
_WS = re.compile(r"[ \t\r\n]*")
_OPENER = re.compile(r"[\[{]")
# An opener counts as the start of a JSON document only when what follows could continue one.
_CANDIDATE_START = re.compile(
    r"""\{(?=[ \t\r\n]*(?:["}]|\Z))|\[(?=[ \t\r\n]*(?:[\]\[{"\-0-9]|true|false|null|\Z))"""
)
# Tokens inside a fragment: (1) a run of openers, (2) a run of closers, (3) everything else, strings included
# (a bracket inside a string is text), or a lone quote: a string that never closes. Possessive quantifiers
# (python >= 3.11) make (3) several times faster; the unrolled form matches the same tokens on 3.10.
TOKEN_PATTERN_POSSESSIVE = r'([\[{]+)|([\]}]+)|((?:[^"\[\]{}]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")++)|"'
TOKEN_PATTERN_PORTABLE = (
    r'([\[{]+)|([\]}]+)|([^"\[\]{}]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"\[\]{}]*)+|[^"\[\]{}]+)|"'
)
try:
    _TOKEN = re.compile(TOKEN_PATTERN_POSSESSIVE, re.S)
except re.error:  # pragma: no cover - python 3.10
    _TOKEN = re.compile(TOKEN_PATTERN_PORTABLE, re.S)
_CLOSERS = str.maketrans("[{", "]}")
_FENCE_LINE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n]*$", re.M)
_JSON_INFO = frozenset({"json", "jsonc", "json5"})
_TRUNCATED_TAIL = re.compile(r"(?:-|\.|[eE][+-]?|t(?:r(?:u)?)?|f(?:a(?:l(?:s)?)?)?|n(?:u(?:l)?)?)\Z")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"


@dataclass
class Extraction:
    """The document found, where it came from, and the decoded text it came from."""

    document: Any
    source: Source
    text: str


@dataclass
class _Candidate:
    start: int
    end: int
    ok: bool = False
    value: Any = None
    truncated: bool = False
    error_msg: str = ""
    error_pos: int = -1
    error_located: bool = True  # False: error_pos is where the failing document starts


@dataclass
class _Fence:
    content_start: int
    content_end: int
    closed: bool
    info: str = field(default="")


def decode_input(raw: bytes | str) -> str:
    """Bytes -> text (invalid UTF-8 replaced); lone surrogates replaced; a leading BOM dropped."""
    if isinstance(raw, bytes):
        text = raw.decode("utf-8", errors="replace")
    else:
        text = _SURROGATE.sub("\ufffd", raw) if _SURROGATE.search(raw) else raw
    return text[1:] if text.startswith("\ufeff") else text


def preview(text: str) -> str:
    return text[:PREVIEW_CHARS]


def extract(raw: bytes | str, required_fields: Sequence[str] = ()) -> Extraction:
    """Find the JSON document in an agent's message; see the module docstring for the rules and errors."""
    size = len(raw)
    if size > MAX_INPUT_BYTES:
        text = decode_input(raw[: PREVIEW_CHARS * 4])
        unit = "bytes" if isinstance(raw, bytes) else "characters"
        raise _parse_error(
            f"input is {size} {unit}, over the {MAX_INPUT_BYTES}-{unit[:-1]} limit: not searched for JSON",
            text,
            message="The agent's final message is too large to search for a JSON document.",
        )
    text = decode_input(raw)
    stripped = text.strip()
    if not stripped or stripped == "null":
        raise FixloopError(
            NULL_RESPONSE,
            "The agent's final message is empty: it must end with the JSON result document."
            if stripped != "null"
            else "The agent's final message is the JSON literal null, not a result document.",
            exit_code=1,
            hint="Answer with the JSON result document as your final message.",
        )
    whole_error: json.JSONDecodeError | None = None
    try:
        return Extraction(_checked(_DECODER.decode(stripped), text), "whole", text)
    except json.JSONDecodeError as error:
        whole_error = error
    except (ValueError, RecursionError):
        pass

    fenced = [value for value in _fenced_documents(text) if isinstance(value, (dict, list))]
    picked = _pick(fenced)
    if picked is not None:
        return Extraction(_checked(fenced[picked], text), "fence", text)

    try:
        candidates = _scan(text)
    except _TooComplex as error:
        raise _parse_error(
            f"gave up searching: {error}",
            text,
            message="The agent's final message is too complex to search for a JSON document.",
        ) from None
    oks = [c for c in candidates if c.ok and isinstance(c.value, (dict, list))]
    picked = _pick([c.value for c in oks])
    if candidates and candidates[-1].truncated:  # always the last candidate: it runs to the end
        raise _truncation(text, candidates[-1], required_fields)
    if picked is not None:
        return Extraction(_clean(oks[picked].value, text), "scan", text)

    broken = [c for c in candidates if not c.ok]
    if broken:
        # The broken span with the longest valid prefix is most likely the intended document.
        raise _broken(text, max(reversed(broken), key=lambda c: c.error_pos - c.start))
    if whole_error is not None and not _OPENER.search(text):
        detail = (
            f"no JSON object found ({whole_error.msg}: line {whole_error.lineno} column {whole_error.colno})"
        )
    else:
        detail = "no JSON object or array found in the message"
    raise _parse_error(detail, text)


def extract_json(raw: bytes | str, required_fields: Sequence[str] = ()) -> Any:
    return extract(raw, required_fields).document


# --- picking -------------------------------------------------------------------------------------------


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


# --- fences --------------------------------------------------------------------------------------------


def _fences(text: str) -> list[_Fence]:
    fences: list[_Fence] = []
    opening: re.Match[str] | None = None
    for line in _FENCE_LINE.finditer(text):
        if opening is None:
            opening = line
            continue
        marker = line.group(1)
        if marker[0] == opening.group(1)[0] and len(marker) >= len(opening.group(1)) and not line.group(2):
            fences.append(_Fence(opening.end() + 1, line.start(), True, opening.group(2).lower()))
            opening = None
    if opening is not None:
        fences.append(_Fence(min(opening.end() + 1, len(text)), len(text), False, opening.group(2).lower()))
    return fences


def _fenced_documents(text: str) -> list[Any]:
    values: list[Any] = []
    for fence in _fences(text):
        if fence.info not in _JSON_INFO:
            continue
        content = text[fence.content_start : fence.content_end].strip()
        if not content:
            continue
        try:
            values.append(_DECODER.decode(content))
        except (ValueError, RecursionError):
            continue
    return values


# --- scanning ------------------------------------------------------------------------------------------


class _TooComplex(Exception):
    pass


def _scan(text: str) -> list[_Candidate]:
    candidates: list[_Candidate] = []
    position = 0
    budget = [MAX_SCAN_TOKENS]
    while True:
        opener = _CANDIDATE_START.search(text, position)
        if opener is None:
            break
        if len(candidates) >= MAX_CANDIDATES:
            raise _TooComplex(f"more than {MAX_CANDIDATES} JSON-like fragments")
        start = opener.start()
        end, closed, problem = _span_end(text, start, budget)
        candidate = _Candidate(start, end)
        candidates.append(candidate)
        if problem == _TOO_DEEP:
            candidate.error_msg, candidate.error_pos, candidate.error_located = problem, start, False
        else:
            _parse_into(candidate, text[start:end], text)
            if problem is not None and candidate.ok:  # cannot happen: a mismatched bracket is not JSON
                candidate.ok, candidate.value = False, None
                candidate.error_msg, candidate.error_pos = problem, end - 1
        if not closed and problem is None:
            break  # the span runs to the end of the input: nothing after it is top-level
        position = end
    return candidates


def _span_end(text: str, start: int, budget: list[int]) -> tuple[int, bool, str | None]:
    """Where the bracketed span opening at `start` ends: (end, closed, problem).

    closed: the brackets balance at `end`. Not closed and no problem: the span runs to the end of the input.
    A problem (mismatched bracket, nesting too deep) ends the span early.
    """
    stack = ""
    index = start
    while True:
        token = _TOKEN.match(text, index)
        if token is None:
            return len(text), False, None
        budget[0] -= 1
        if budget[0] < 0:
            raise _TooComplex(f"more than {MAX_SCAN_TOKENS} bracket and string runs")
        opens, closes, filler = token.group(1, 2, 3)
        if opens:
            if len(stack) + len(opens) > MAX_DEPTH:
                return token.end(), False, _TOO_DEEP
            stack += opens
        elif closes:
            count = min(len(closes), len(stack))
            expected = stack[len(stack) - count :][::-1].translate(_CLOSERS)
            if closes[:count] != expected:
                bad = next(i for i in range(count) if closes[i] != expected[i])
                return token.start() + bad + 1, False, "mismatched bracket"
            stack = stack[: len(stack) - count]
            if not stack:
                return token.start() + count, True, None
        elif not filler:  # a lone quote: a string that never closes runs to the end of the input
            return len(text), False, None
        index = token.end()


def _parse_into(candidate: _Candidate, chunk: str, text: str) -> None:
    try:
        candidate.value = _DECODER.decode(chunk)
        candidate.ok = True
    except json.JSONDecodeError as error:
        candidate.error_msg = error.msg
        candidate.error_pos = candidate.start + error.pos
        if chunk.startswith("{") and candidate.start + len(chunk) == len(text):
            tail = chunk[error.pos :].strip()
            candidate.truncated = (
                not tail
                or error.msg.startswith("Unterminated string")
                or (error.msg.startswith("Invalid \\uXXXX") and len(tail) < 6)
                or bool(_TRUNCATED_TAIL.match(tail))
            )
    except RecursionError:
        candidate.error_msg, candidate.error_pos = "nested too deeply", candidate.start
        candidate.error_located = False
    except ValueError as error:  # NaN / Infinity / a number out of range / too many digits
        candidate.error_msg, candidate.error_pos = str(error), candidate.start
        candidate.error_located = False


# --- errors --------------------------------------------------------------------------------------------


def _line_column(text: str, position: int) -> tuple[int, int]:
    line = text.count("\n", 0, position) + 1
    column = position - text.rfind("\n", 0, position)
    return line, column


def _parse_error(detail: str, text: str, message: str | None = None, **context: Any) -> FixloopError:
    return FixloopError(
        JSON_PARSE_ERROR,
        message or f"The agent's final message holds no parsable JSON document: {detail}",
        exit_code=1,
        parse_error=detail,
        raw_output_preview=preview(text),
        **context,
        hint=(
            "Answer with exactly one JSON document (a ```json block is fine); quote and escape every string "
            f'(write \\" for a quote inside a string). Parser said: {detail}'
        ),
    )


def _broken(text: str, candidate: _Candidate) -> FixloopError:
    line, column = _line_column(text, candidate.error_pos)
    if candidate.error_located:
        detail = f"{candidate.error_msg}: line {line} column {column} (char {candidate.error_pos})"
    else:
        detail = f"{candidate.error_msg} (in the JSON starting at line {line} column {column})"
    context = text[max(candidate.error_pos - 40, 0) : candidate.error_pos + 40]
    return _parse_error(detail, text, error_context=context)


def _truncation(text: str, candidate: _Candidate, required_fields: Sequence[str]) -> FixloopError:
    present, cut = recover_top_level_fields(text, candidate.start)
    missing = [name for name in required_fields if name not in present]
    where = f"while writing field '{cut}'" if cut else "before the document closed"
    return FixloopError(
        TRUNCATION_DATA_LOSS,
        f"The agent's JSON output was cut off {where}"
        + (f"; missing required fields: {', '.join(missing)}" if missing else "")
        + ".",
        exit_code=1,
        missing_fields=missing,
        fields_present=present[:MAX_FIELDS_REPORTED],
        truncated_field=cut,
        raw_output_preview=preview(text),
        hint=(
            "Your JSON was cut off before it closed. Return a shorter but complete document "
            "(fewer or shorter entries, no code excerpts longer than needed)."
        ),
    )


def recover_top_level_fields(text: str, start: int) -> tuple[list[str], str | None]:
    """Top-level keys of the (partial) object at `start` whose values are complete, and the key whose
    value was cut off (None when the text ended between fields)."""
    keys: list[str] = []
    index = _WS.match(text, start + 1).end()  # type: ignore[union-attr]
    while index < len(text) and text[index] == '"':
        try:
            key, index = scanstring(text, index + 1, False)
        except ValueError:
            return keys, None
        index = _WS.match(text, index).end()  # type: ignore[union-attr]
        if text[index : index + 1] != ":":
            return keys, key if index >= len(text) else None
        index = _WS.match(text, index + 1).end()  # type: ignore[union-attr]
        try:
            _value, index = _DECODER.raw_decode(text, index)
        except (ValueError, RecursionError):
            return keys, key
        index = _WS.match(text, index).end()  # type: ignore[union-attr]
        follower = text[index : index + 1]
        if follower not in (",", "}"):  # a value is only complete once what follows it says so
            return keys, key
        if key not in keys:
            keys.append(key)
        if follower == "}":
            break
        index = _WS.match(text, index + 1).end()  # type: ignore[union-attr]
    return keys, None


# --- cleaning ------------------------------------------------------------------------------------------


def _checked(document: Any, text: str) -> Any:
    """A document found without scanning still has to respect MAX_DEPTH (the scan enforces it itself)."""
    if _deeper_than(document, MAX_DEPTH):
        raise _parse_error(_TOO_DEEP, text)
    return _clean(document, text)


def _deeper_than(document: Any, limit: int) -> bool:
    """Whether objects/arrays nest more than `limit` levels (the outermost is level 1)."""
    stack: list[tuple[dict[str, Any] | list[Any], int]] = (
        [(document, 1)] if isinstance(document, (dict, list)) else []
    )
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _clean(document: Any, text: str) -> Any:
    """Replace lone surrogates (from \\ud800-style escapes) so the document can always be printed."""
    if not _SURROGATE_ESCAPE.search(text):
        return document
    root = [document]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        value = container[key]
        if isinstance(value, str):
            if _SURROGATE.search(value):
                container[key] = _SURROGATE.sub("\ufffd", value)
        elif isinstance(value, list):
            stack.extend((value, i) for i in range(len(value)))
        elif isinstance(value, dict):
            if any(_SURROGATE.search(k) for k in value):
                fixed = {_SURROGATE.sub("\ufffd", k): v for k, v in value.items()}
                value.clear()
                value.update(fixed)
            stack.extend((value, k) for k in value)
    return root[0]
