"""What a field of a contract accepts, in words: read from its annotation and constraint metadata."""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union

import annotated_types
from pydantic import BaseModel, StringConstraints
from pydantic.fields import FieldInfo


def resolve(root: type[BaseModel], loc: tuple[Any, ...]) -> tuple[Any, list[Any]]:
    """The annotation (and constraint metadata) of the field at `loc`, or (None, []) when unknown."""
    annotation: Any = root
    constraints: list[Any] = []
    for part in loc:
        annotation, constraints = unwrap(annotation, [])
        if isinstance(part, int):
            if typing.get_origin(annotation) is list:
                (annotation,) = typing.get_args(annotation) or (Any,)
                constraints = []
                continue
            return None, []
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            info = annotation.model_fields.get(part)
            if info is None:
                return None, []
            annotation, constraints = info.annotation, list(info.metadata)
            continue
        if typing.get_origin(annotation) is dict:
            annotation, constraints = typing.get_args(annotation)[1], []
            continue
        return None, []
    return annotation, constraints


def unwrap(annotation: Any, constraints: list[Any]) -> tuple[Any, list[Any]]:
    """Strip Annotated (collecting its constraints) and Optional; return the core type."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            base, *extras = typing.get_args(annotation)
            for extra in extras:
                constraints = [*constraints, *(extra.metadata if isinstance(extra, FieldInfo) else [extra])]
            annotation = base
        elif origin in (Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation, constraints
            annotation = members[0]
        else:
            return annotation, constraints


def nullable(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (Union, types.UnionType) and type(None) in typing.get_args(
        annotation
    )


def describe(annotation: Any, constraints: list[Any]) -> str:
    """`an integer from 0 to 100`, `one of 'a', 'b'`, `a non-empty string or null`, ..."""
    core, constraints = unwrap(annotation, list(constraints))
    text = _describe_core(core, constraints)
    return f"{text} or null" if nullable(annotation) else text


def _describe_core(core: Any, constraints: list[Any]) -> str:
    origin = typing.get_origin(core)
    if core is bool:
        return "true or false"
    if core is int:
        return "an integer" + range_text(constraints)
    if core is float:
        return "a number" + range_text(constraints)
    if core is str:
        pattern = pattern_of(constraints)
        if pattern:
            return f"a string matching {pattern}"
        return "a non-empty string" if min_length(constraints) else "a string"
    if origin is Literal:
        return "one of " + ", ".join(repr(v) for v in typing.get_args(core))
    if origin is list:
        return "an array"
    if origin is dict or (isinstance(core, type) and issubclass(core, (BaseModel, Mapping))):
        return "an object"
    if core is Any:
        return "any JSON value"
    return "a valid value"


def range_text(constraints: list[Any]) -> str:
    """` from 0 to 100`, ` >= 1`, or `` when the number is unbounded."""
    low = high = None
    for c in constraints:
        if isinstance(c, annotated_types.Ge):
            low = c.ge
        elif isinstance(c, annotated_types.Gt):
            low = f"more than {c.gt}"
        elif isinstance(c, annotated_types.Le):
            high = c.le
        elif isinstance(c, annotated_types.Lt):
            high = f"less than {c.lt}"
    if low is not None and high is not None and not isinstance(low, str) and not isinstance(high, str):
        return f" from {low} to {high}"
    parts = [f">= {low}" if not isinstance(low, str) else low] if low is not None else []
    parts += [f"<= {high}" if not isinstance(high, str) else high] if high is not None else []
    return (" " + " and ".join(parts)) if parts else ""


def pattern_of(constraints: list[Any]) -> str | None:
    return next((c.pattern for c in constraints if getattr(c, "pattern", None)), None)


def min_length(constraints: list[Any]) -> int:
    for c in constraints:
        if isinstance(c, StringConstraints) and c.min_length:
            return c.min_length
        if isinstance(c, annotated_types.MinLen):
            return c.min_length
    return 0


def literal_values(annotation: Any) -> list[Any]:
    core, _ = unwrap(annotation, [])
    return list(typing.get_args(core)) if typing.get_origin(core) is Literal else []
