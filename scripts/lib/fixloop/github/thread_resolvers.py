"""Who resolved some review threads (`resolvedBy`), for a dismissal's author: one GraphQL request per
PAGE_SIZE threads."""

from __future__ import annotations

from collections.abc import Sequence

from fixloop.github import shapes
from fixloop.github.gh import Gh
from fixloop.github.graphql import graphql
from fixloop.github.queries import PAGE_SIZE

RESOLVED_BY_QUERY = """\
query ReviewThreadsResolvedBy($ids: [ID!]!) {
  nodes(ids: $ids) {
    ... on PullRequestReviewThread { id isResolved resolvedBy { login } }
  }
}
"""


def resolvers(gh: Gh, host: str | None, thread_ids: Sequence[str]) -> dict[str, str]:
    """Thread id -> the login of who resolved it, for the resolved threads among `thread_ids`."""
    found: dict[str, str] = {}
    ids = list(dict.fromkeys(thread_ids))
    for start in range(0, len(ids), PAGE_SIZE):
        data = graphql(gh, host, RESOLVED_BY_QUERY, {"ids": ids[start : start + PAGE_SIZE]})
        for index, node in enumerate(shapes.items(shapes.field(data, "nodes", "$.data"), "$.data.nodes")):
            if node is None:
                continue
            path = f"$.data.nodes[{index}]"
            thread = shapes.obj(node, path)
            who = thread.get("resolvedBy")
            if isinstance(who, dict) and isinstance(who.get("login"), str):
                found[shapes.required_text(shapes.field(thread, "id", path), f"{path}.id")] = who["login"]
    return found
