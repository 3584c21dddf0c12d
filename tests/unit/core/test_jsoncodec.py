"""fixloop.core.jsoncodec gives exactly what the json module gives, without importing it on the fast path."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from helpers_imports import modules_loaded_by
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixloop.core import jsoncodec

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)
# Text that is often almost JSON: the error paths matter as much as the happy one.
# The codec fixture patches the module once per test, for all of its examples.
SAME_CODEC_FOR_ALL_EXAMPLES = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
JSONISH = st.text(alphabet=st.sampled_from(list('{}[]",:. \t\n\r0123456789eE+-truefalsnNaIiy\\u\ufeffé')))


@pytest.fixture(params=["fast", "json"])
def codec(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test runs on the _json fast path and on an interpreter without _json (all to json)."""
    if request.param == "json":
        monkeypatch.setattr(jsoncodec, "_scan", None)
        monkeypatch.setattr(jsoncodec, "_json", None)
    else:
        assert jsoncodec._scan is not None
    yield request.param


def outcome(call: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        return "value", call(*args, **kwargs)
    except (ValueError, TypeError) as error:
        return type(error).__name__, str(error)


@SAME_CODEC_FOR_ALL_EXAMPLES
@given(value=JSON_VALUES)
def test_dumps_is_compact_json_dumps(codec: str, value: Any) -> None:
    for ensure_ascii in (False, True):
        expected = json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=False, separators=(",", ":"))
        assert jsoncodec.dumps(value, ensure_ascii=ensure_ascii) == expected


@SAME_CODEC_FOR_ALL_EXAMPLES
@given(value=JSON_VALUES)
def test_loads_reads_what_json_writes(codec: str, value: Any) -> None:
    for text in (json.dumps(value), json.dumps(value, indent=2) + "\n"):
        assert jsoncodec.loads(text) == json.loads(text)
        assert jsoncodec.loads(text.encode("utf-8")) == json.loads(text.encode("utf-8"))


@SAME_CODEC_FOR_ALL_EXAMPLES
@given(text=JSONISH)
def test_loads_of_any_text_answers_or_fails_like_json(codec: str, text: str) -> None:
    expected = outcome(json.loads, text)
    assert repr(outcome(jsoncodec.loads, text)) == repr(expected)  # repr: nan != nan


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf{}",
        b"\xff\xfe{\x00}\x00",
        b'{"a": "\xff"}',
        b"",
        b"  ",
        '"\ud800"'.encode("utf-8", "surrogatepass"),
    ],
)
def test_loads_of_unusual_bytes_answers_or_fails_like_json(codec: str, data: bytes) -> None:
    assert repr(outcome(jsoncodec.loads, data)) == repr(outcome(json.loads, data))


def test_non_finite_numbers_are_read_as_json_reads_them(codec: str) -> None:
    assert jsoncodec.loads("[NaN, Infinity, -Infinity]")[1:] == [float("inf"), float("-inf")]


def test_dumps_refuses_what_json_refuses(codec: str) -> None:
    loop: list[Any] = []
    loop.append(loop)
    for value in (float("nan"), object(), {(1, 2): 3}, loop):
        expected = outcome(json.dumps, value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        assert outcome(jsoncodec.dumps, value) == expected
        assert expected[0] in ("ValueError", "TypeError")


def test_dumps_options_match_json(codec: str) -> None:
    assert jsoncodec.dumps({"x": float("inf")}, allow_nan=True) == '{"x":Infinity}'
    assert jsoncodec.dumps({"when": object}, default=lambda value: "a class") == '{"when":"a class"}'


def test_the_fast_path_loads_neither_json_nor_re() -> None:
    code = """
from fixloop.core import jsoncodec
assert jsoncodec.loads(b' {"a": [1, 2.5, "\\u00e9"]} ') == {"a": [1, 2.5, "é"]}
assert jsoncodec.dumps({"a": "é"}) == '{"a":"é"}'
"""
    assert modules_loaded_by(code, ("json", "re", "enum")) == []
