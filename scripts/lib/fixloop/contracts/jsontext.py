"""The lenient JSON reading shared by the extraction steps: decoding, depth limit, surrogate cleaning.

`decode` and `raw_decode` stop past MAX_OBJECTS objects, and do not start on a text of more than MAX_OBJECTS
`[` (TooManyObjects, a ValueError): a few megabytes of `{},{},...` or `[],[],...` would otherwise become
millions of dicts or lists before any limit of the contract could refuse them.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 200  # pydantic cannot serialize much deeper (about 255 levels)
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"
# Five times the values a document may hold (fixloop.contracts.bounds.MAX_VALUES): a document somewhat over
# that limit is still read, so its refusal can say where it is too large.
MAX_OBJECTS = 250_000
TOO_MANY_OBJECTS = f"more than {MAX_OBJECTS} JSON objects or arrays"


class TooManyObjects(ValueError):
    """The text holds more JSON objects than a document may: decoding stopped."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_float(literal: str) -> float:
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {literal[:40]} is too large")
    return value


_objects_left = [MAX_OBJECTS]


def _count_object(value: dict[str, Any]) -> dict[str, Any]:
    _objects_left[0] -= 1
    if _objects_left[0] < 0:
        raise TooManyObjects(TOO_MANY_OBJECTS)
    return value


# strict=False: raw control characters (a literal newline or tab) inside strings are tolerated.
DECODER = json.JSONDecoder(
    strict=False, parse_constant=_reject_constant, parse_float=_parse_float, object_hook=_count_object
)


def decode(text: str) -> Any:
    """The JSON value that is the whole of `text` (ValueError, JSONDecodeError or RecursionError if not)."""
    _objects_left[0] = MAX_OBJECTS
    if text.count("[") > MAX_OBJECTS:  # arrays have no hook to count them as they are read
        raise TooManyObjects(TOO_MANY_OBJECTS)
    return DECODER.decode(text)


def raw_decode(text: str, index: int) -> tuple[Any, int]:
    """The JSON value starting at `index` of `text`, and where it ends."""
    _objects_left[0] = MAX_OBJECTS
    if text.count("[", index) > MAX_OBJECTS:
        raise TooManyObjects(TOO_MANY_OBJECTS)
    return DECODER.raw_decode(text, index)


WHITESPACE = re.compile(r"[ \t\r\n]*")
SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def decode_input(raw: bytes | str) -> str:
    """Bytes -> text (invalid UTF-8 replaced); lone surrogates replaced; a leading BOM dropped."""
    if isinstance(raw, bytes):
        text = raw.decode("utf-8", errors="replace")
    else:
        text = SURROGATE.sub("\ufffd", raw) if SURROGATE.search(raw) else raw
    return text[1:] if text.startswith("\ufeff") else text


def deeper_than(document: Any, limit: int) -> bool:
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


def clean_surrogates(document: Any, text: str) -> Any:
    """Replace lone surrogates (from \\ud800-style escapes in `text`) so the document can be printed."""
    if not _SURROGATE_ESCAPE.search(text):
        return document
    root = [document]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        value = container[key]
        if isinstance(value, str):
            if SURROGATE.search(value):
                container[key] = SURROGATE.sub("\ufffd", value)
        elif isinstance(value, list):
            stack.extend((value, i) for i in range(len(value)))
        elif isinstance(value, dict):
            if any(SURROGATE.search(k) for k in value):
                fixed = {SURROGATE.sub("\ufffd", k): v for k, v in value.items()}
                value.clear()
                value.update(fixed)
            stack.extend((value, k) for k in value)
    return root[0]
