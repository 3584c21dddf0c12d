"""JSON for the hooks' hot path: the json module's own C scanner and encoder, without importing json.

Importing `json` imports `re`, and with it `enum`, `functools` and `collections`: about 7 ms on every
subagent call, as much as the interpreter's own start. `_json` is the C accelerator that `json` itself
uses, so a value this module decodes or encodes is the value `json` would give. Anything the fast path
cannot take (an error, a byte-order mark, an interpreter without `_json`) is handed to `json`, which
gives the result or raises its usual error (json.JSONDecodeError, TypeError, ValueError).
"""

from __future__ import annotations

TYPE_CHECKING = False  # hooks import this module: typing is not loaded at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_JSON_WHITESPACE = " \t\n\r"
# How deep a document a person or a repository writes may nest: fixloop's own files need fewer than ten.
MAX_DOCUMENT_DEPTH = 64
_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}

try:
    import _json
except ImportError:  # an interpreter without the accelerator: every call goes to json
    _json = None  # type: ignore[assignment]


class _ScannerContext:
    """The attributes _json.make_scanner reads: json.JSONDecoder's defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


def _make_scanner() -> Callable[[str, int], tuple[Any, int]] | None:
    try:
        return _json.make_scanner(_ScannerContext())  # type: ignore[arg-type]
    except Exception:
        return None


_scan = _make_scanner()


def loads(data: str | bytes) -> Any:
    """json.loads(data)."""
    if _scan is not None:
        try:
            text = data.decode("utf-8") if isinstance(data, bytes) else data
            start = len(text) - len(text.lstrip(_JSON_WHITESPACE))
            if not text.startswith("\ufeff"):
                value, end = _scan(text, start)
                if not text[end:].strip(_JSON_WHITESPACE):
                    return value
        except Exception:  # json says what is wrong, in its own words
            pass
    import json

    try:
        return json.loads(data)
    except RecursionError:  # a document nested past the interpreter's limit is bad input, not a fault
        raise json.JSONDecodeError(
            "nested too deeply to read", data if isinstance(data, str) else "", 0
        ) from None


def loads_document(data: str | bytes, max_depth: int = MAX_DOCUMENT_DEPTH) -> Any:
    """loads(data) for a file a person or a repository wrote (a config, a baseline, approvals,
    package.json): a document nested deeper than `max_depth` arrays and objects raises
    json.JSONDecodeError too, so no code that walks the value can recurse too deep."""
    value = loads(data)
    if nesting_depth(value) > max_depth:
        import json

        raise json.JSONDecodeError(
            f"nested deeper than {max_depth} levels", data if isinstance(data, str) else "", 0
        )
    return value


def nesting_depth(value: Any) -> int:
    """How many arrays and objects deep `value` goes (0 for a scalar), without recursion."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def _not_serializable(value: object) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(
    value: Any,
    *,
    ensure_ascii: bool = False,
    allow_nan: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """json.dumps(value, ensure_ascii=..., allow_nan=..., default=..., separators=(",", ":")): one line."""
    if _json is not None:
        try:
            encode_string = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
            encoder = _json.make_encoder(
                {}, default or _not_serializable, encode_string, None, ":", ",", False, False, allow_nan
            )
            return "".join(encoder(value, 0))
        except Exception:  # the same error from json, or its answer where this path differs
            pass
    import json

    return json.dumps(
        value, ensure_ascii=ensure_ascii, allow_nan=allow_nan, default=default, separators=(",", ":")
    )
