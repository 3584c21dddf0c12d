"""Checking the shape of what GitHub answers, at the boundary: a field of the wrong type is one error.

A proxy, a GitHub Enterprise version or a broken server may answer a GraphQL request with something other
than what was asked (a connection as a list, a node without its id, a number as a string). Each reader
takes a value with its path in the answer (`$.data.repository.pullRequest.reviewThreads.nodes[3].id`) and
returns it typed, or raises GITHUB_BAD_RESPONSE naming the path, what was expected and what came back.
"""

from __future__ import annotations

import json
from typing import Any

from fixloop.core.errors import FixloopError

BAD_RESPONSE = "GITHUB_BAD_RESPONSE"
MAX_SHOWN_CHARS = 80


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def bad(path: str, expected: str, value: Any) -> FixloopError:
    """GITHUB_BAD_RESPONSE: `path` held `value` where `expected` was asked for."""
    shown = json.dumps(value, ensure_ascii=True, default=str)
    if len(shown) > MAX_SHOWN_CHARS:
        shown = shown[:MAX_SHOWN_CHARS] + "..."
    return FixloopError(
        BAD_RESPONSE,
        f"GitHub answered something fixloop did not ask for: {path} is {_kind(value)} ({shown}), "
        f"expected {expected}. A proxy or an unsupported GitHub version may have changed the answer.",
        path=path,
        expected=expected,
        received=_kind(value),
    )


def obj(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad(path, "an object", value)
    return value


def items(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise bad(path, "a list", value)
    return value


def field(parent: dict[str, Any], name: str, path: str) -> Any:
    """`parent[name]`, which the query asked for: a missing field is a bad answer (null is not)."""
    if name not in parent:
        raise bad(f"{path}.{name}", f"the field {name}", None)
    return parent[name]


def text(value: Any, path: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or (not optional and not value):
        raise bad(path, "a string" if optional else "a non-empty string", value)
    return value


def required_text(value: Any, path: str) -> str:
    found = text(value, path)
    assert found is not None
    return found


def number(value: Any, path: str, *, optional: bool = True) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad(path, "an integer" if not optional else "an integer or null", value)
    return value


def flag(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise bad(path, "a boolean", value)
    return value


def connection(value: Any, path: str, *, paged: bool = True) -> tuple[list[dict[str, Any]], str | None]:
    """(the nodes of a connection, the cursor of its next page or None); each node an object. `paged`: the
    query asked for its pageInfo."""
    page = obj(value, path)
    nodes = items(field(page, "nodes", path), f"{path}.nodes")
    checked = [obj(node, f"{path}.nodes[{index}]") for index, node in enumerate(nodes)]
    if not paged:
        return checked, None
    info = obj(field(page, "pageInfo", path), f"{path}.pageInfo")
    more = flag(field(info, "hasNextPage", f"{path}.pageInfo"), f"{path}.pageInfo.hasNextPage")
    cursor = text(info.get("endCursor"), f"{path}.pageInfo.endCursor", optional=True)
    return checked, (cursor if more and cursor else None)
