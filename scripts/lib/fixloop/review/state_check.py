"""Whether a run's `review` object has the shape review.state declares, read from its type hints.

The state file is data on disk: a hand edit or a bug elsewhere could leave `rounds` a string, and every
later step would then fail in its own way. Checked where the review is read, it fails once, by name.

The review of a large run holds hundreds of thousands of values, and it is read at every step: a predicate
built once per type hint says whether a value has its shape, and only a value that has not is walked again
by `_check` to say where and how.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

MAX_PROBLEMS = 10


@cache
def _hints(typed_dict: type) -> dict[str, Any]:
    return get_type_hints(typed_dict)


def _check(value: Any, hint: Any, path: str, problems: list[str]) -> None:
    if len(problems) >= MAX_PROBLEMS or hint is Any:
        return
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = get_args(hint)
        for option in options:
            trial: list[str] = []
            _check(value, option, path, trial)
            if not trial:
                return
        problems.append(f"{path}: unexpected {type(value).__name__}")
        return
    if origin is Literal:
        if value not in get_args(hint):
            problems.append(f"{path}: unexpected value {value!r}")
        return
    if hint is type(None):
        if value is not None:
            problems.append(f"{path}: expected null")
        return
    if is_typeddict(hint):
        if not isinstance(value, dict):
            problems.append(f"{path}: expected an object, got {type(value).__name__}")
            return
        for key, field_hint in _hints(hint).items():
            if key in value:
                _check(value[key], field_hint, f"{path}.{key}", problems)
        return
    if origin is list:
        if not isinstance(value, list):
            problems.append(f"{path}: expected an array, got {type(value).__name__}")
            return
        (item_hint,) = get_args(hint) or (Any,)
        for index, item in enumerate(value):
            _check(item, item_hint, f"{path}[{index}]", problems)
        return
    if origin is dict:
        if not isinstance(value, dict):
            problems.append(f"{path}: expected an object, got {type(value).__name__}")
            return
        _key_hint, item_hint = get_args(hint) or (str, Any)
        for key, item in value.items():
            _check(item, item_hint, f"{path}.{key}", problems)
        return
    expected = typing.cast(type, origin or hint)
    if expected is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif expected is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, expected)
    if not ok:
        problems.append(
            f"{path}: expected {getattr(expected, '__name__', expected)}, got {type(value).__name__}"
        )


Predicate = Callable[[Any], bool]


def _any(_value: Any) -> bool:
    return True


@cache
def _predicate(hint: Any) -> Predicate:
    """True exactly when `_check(value, hint, ...)` finds no problem."""
    if hint is Any:
        return _any
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = tuple(_predicate(option) for option in get_args(hint))
        return lambda value: any(option(value) for option in options)
    if origin is Literal:
        allowed = get_args(hint)
        return lambda value: value in allowed
    if hint is type(None):
        return lambda value: value is None
    if is_typeddict(hint):
        return _typed_dict_predicate(hint)
    if origin is list:
        (item_hint,) = get_args(hint) or (Any,)
        return _container_predicate(list, item_hint, lambda value: value)
    if origin is dict:
        _key_hint, item_hint = get_args(hint) or (str, Any)
        return _container_predicate(dict, item_hint, lambda value: value.values())
    expected = typing.cast(type, origin or hint)
    if expected is float:
        return lambda value: isinstance(value, int | float) and not isinstance(value, bool)
    if expected is int:
        return lambda value: isinstance(value, int) and not isinstance(value, bool)
    return lambda value: isinstance(value, expected)


def _container_predicate(kind: type, item_hint: Any, items: Callable[[Any], Any]) -> Predicate:
    resolved: list[Predicate] = []  # on first use: a hint may name a type that holds this one

    def ok(value: Any) -> bool:
        if not isinstance(value, kind):
            return False
        if not resolved:
            resolved.append(_predicate(item_hint))
        item_ok = resolved[0]
        return item_ok is _any or all(map(item_ok, items(value)))

    return ok


def _typed_dict_predicate(typed_dict: type) -> Predicate:
    fields: list[tuple[str, Predicate]] = []
    resolved = False

    def ok(value: Any) -> bool:
        nonlocal resolved
        if not isinstance(value, dict):
            return False
        if not resolved:
            fields.extend((key, _predicate(hint)) for key, hint in _hints(typed_dict).items())
            resolved = True
        return all(field_ok(value[key]) for key, field_ok in fields if key in value)

    return ok


def shape_problems(value: Any, typed_dict: type, path: str = "review") -> list[str]:
    """What in `value` does not have the shape of `typed_dict` (keys it lacks are not counted)."""
    problems: list[str] = []
    if _predicate(typed_dict)(value):
        return problems
    _check(value, typed_dict, path, problems)
    return problems
