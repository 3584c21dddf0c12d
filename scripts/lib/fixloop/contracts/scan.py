"""Scanning a message for the top-level `{...}` / `[...]` fragments that may be its JSON document.

Cost is linear: the scan stops (`Scan.gave_up`) past MAX_CANDIDATES fragments or MAX_SCAN_TOKENS
bracket/string runs, and a fragment nested deeper than MAX_DEPTH is not parsed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from fixloop.contracts.jsontext import MAX_DEPTH, TOO_DEEP, decode

MAX_CANDIDATES = 100_000
MAX_SCAN_TOKENS = 1_000_000  # about half a second of scanning

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
_TRUNCATED_TAIL = re.compile(r"(?:-|\.|[eE][+-]?|t(?:r(?:u)?)?|f(?:a(?:l(?:s)?)?)?|n(?:u(?:l)?)?)\Z")
_TOO_MANY_CANDIDATES = f"more than {MAX_CANDIDATES} JSON-like fragments"
_TOO_MANY_TOKENS = f"more than {MAX_SCAN_TOKENS} bracket and string runs"


@dataclass
class Candidate:
    """One fragment: its span, and either its parsed value or where and why it failed to parse."""

    start: int
    end: int
    ok: bool = False
    value: Any = None
    truncated: bool = False
    error_msg: str = ""
    error_pos: int = -1
    error_located: bool = True  # False: error_pos is where the failing document starts


@dataclass
class Scan:
    candidates: list[Candidate] = field(default_factory=list)
    gave_up: str | None = None  # why the search stopped early (the input is too complex)


def scan(text: str) -> Scan:
    result = Scan()
    position = 0
    budget = [MAX_SCAN_TOKENS]
    while True:
        opener = _CANDIDATE_START.search(text, position)
        if opener is None:
            break
        if len(result.candidates) >= MAX_CANDIDATES:
            result.gave_up = _TOO_MANY_CANDIDATES
            break
        start = opener.start()
        end, closed, problem = _span_end(text, start, budget)
        if problem == _TOO_MANY_TOKENS:
            result.gave_up = problem
            break
        candidate = Candidate(start, end)
        result.candidates.append(candidate)
        if problem == TOO_DEEP:
            candidate.error_msg, candidate.error_pos, candidate.error_located = problem, start, False
        else:
            _parse_into(candidate, text[start:end], text)
            if problem is not None and candidate.ok:  # cannot happen: a mismatched bracket is not JSON
                candidate.ok, candidate.value = False, None
                candidate.error_msg, candidate.error_pos = problem, end - 1
        if not closed and problem is None:
            break  # the span runs to the end of the input: nothing after it is top-level
        position = end
    return result


def _span_end(text: str, start: int, budget: list[int]) -> tuple[int, bool, str | None]:
    """Where the bracketed span opening at `start` ends: (end, closed, problem).

    closed: the brackets balance at `end`. Not closed and no problem: the span runs to the end of the input.
    A problem (mismatched bracket, nesting too deep, the token budget spent) ends the span early.
    """
    stack = ""
    index = start
    while True:
        token = _TOKEN.match(text, index)
        if token is None:
            return len(text), False, None
        budget[0] -= 1
        if budget[0] < 0:
            return token.start(), False, _TOO_MANY_TOKENS
        opens, closes, filler = token.group(1, 2, 3)
        if opens:
            if len(stack) + len(opens) > MAX_DEPTH:
                return token.end(), False, TOO_DEEP
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


def _parse_into(candidate: Candidate, chunk: str, text: str) -> None:
    try:
        candidate.value = decode(chunk)
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
