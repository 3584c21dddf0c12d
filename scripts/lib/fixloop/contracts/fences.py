"""The JSON documents in the Markdown code fences of an agent's message."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from fixloop.contracts.jsontext import decode

_FENCE_LINE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n]*$", re.M)
_JSON_INFO = frozenset({"json", "jsonc", "json5"})


@dataclass(frozen=True)
class Fence:
    content_start: int
    content_end: int
    closed: bool
    info: str = ""


def fences(text: str) -> list[Fence]:
    """Every fenced block, in order; a fence left open at the end runs to the end."""
    found: list[Fence] = []
    opening: re.Match[str] | None = None
    for line in _FENCE_LINE.finditer(text):
        if opening is None:
            opening = line
            continue
        marker = line.group(1)
        if marker[0] == opening.group(1)[0] and len(marker) >= len(opening.group(1)) and not line.group(2):
            found.append(Fence(opening.end() + 1, line.start(), True, opening.group(2).lower()))
            opening = None
    if opening is not None:
        found.append(Fence(min(opening.end() + 1, len(text)), len(text), False, opening.group(2).lower()))
    return found


def fenced_documents(text: str) -> list[Any]:
    """The parsed content of every non-empty ```json fence that parses, in order."""
    values: list[Any] = []
    for fence in fences(text):
        if fence.info not in _JSON_INFO:
            continue
        content = text[fence.content_start : fence.content_end].strip()
        if not content:
            continue
        try:
            values.append(decode(content))
        except (ValueError, RecursionError):
            continue
    return values
