"""`gh api graphql`: one request, the document sent on standard input so variables keep their JSON types."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.github.gh import Gh
from fixloop.github.shapes import BAD_RESPONSE, bad

MAX_ERRORS_KEPT = 5
# What gh (Go's encoding/json) says when the answer it got is not a JSON object: no GraphQL response.
GH_UNREADABLE_ANSWER = ("json: cannot unmarshal", "invalid character", "unexpected end of JSON input")


def graphql(gh: Gh, host: str | None, query: str, variables: Mapping[str, Any]) -> dict[str, Any]:
    """The `data` of a GraphQL request to `host` (gh's default host when None).

    GitHub's errors are GITHUB_NOT_FOUND (a node or repository that does not resolve) or GITHUB_API_ERROR,
    with GitHub's messages; a gh failure without a GraphQL answer is GH_COMMAND_FAILED; an answer gh took
    that is no GraphQL response (no `data` object) is GITHUB_BAD_RESPONSE. What `data` holds is checked by
    the caller, which knows what it asked for (fixloop.github.shapes)."""
    args = ["api", "graphql", "--input", "-"]
    if host:
        args += ["--hostname", host]
    result = gh.run(*args, input_text=json.dumps({"query": query, "variables": dict(variables)}))
    try:
        document = json.loads(result.stdout) if result.stdout.strip() else None
    except ValueError:
        document = None
    if "HTTP 401" in result.stderr:
        raise FixloopError(
            "GH_AUTH_REQUIRED",
            "GitHub refused gh's credentials: run `gh auth login` (scope: repo). "
            f"gh says: {result.error_text()}",
            suggestion="gh auth login",
        )
    if not result.ok and not result.stdout.strip() and any(s in result.stderr for s in GH_UNREADABLE_ANSWER):
        raise FixloopError(
            BAD_RESPONSE,
            f"GitHub answered something that is no GraphQL response (gh says: {result.error_text()}). "
            "A proxy or an unsupported GitHub version may have changed the answer.",
            path="$",
            expected="a JSON object",
        )
    if result.ok and result.stdout.strip() and not isinstance(document, dict):
        raise bad("$", "a JSON object", document if document is not None else result.stdout.strip())
    if not isinstance(document, dict):
        raise FixloopError(
            "GH_COMMAND_FAILED",
            f"`gh api graphql` failed: {result.error_text() or 'no answer'}",
            exit_status=result.returncode,
        )
    errors = document.get("errors")
    if isinstance(errors, list) and errors:
        messages = [str(item.get("message")) for item in errors if isinstance(item, dict)]
        kinds = {item.get("type") for item in errors if isinstance(item, dict)}
        raise FixloopError(
            "GITHUB_NOT_FOUND" if "NOT_FOUND" in kinds else "GITHUB_API_ERROR",
            "GitHub: " + "; ".join(messages[:MAX_ERRORS_KEPT]),
            errors=messages[:MAX_ERRORS_KEPT],
        )
    data = document.get("data")
    if not result.ok:
        raise FixloopError(
            "GH_COMMAND_FAILED",
            f"`gh api graphql` failed: {result.error_text() or 'no data in the answer'}",
            exit_status=result.returncode,
        )
    if not isinstance(data, dict):
        raise bad("$.data", "an object", data)
    return data
