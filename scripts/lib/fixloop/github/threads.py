"""A pull request's review threads, reviews and conversation through `gh api graphql`, and replies to them.

Everything read is checked against what the query asked for (fixloop.github.shapes: a field of another
shape is GITHUB_BAD_RESPONSE with its path) and normalised to plain dicts, the comments by
fixloop.github.comments (secrets masked, bodies bounded).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.github import shapes
from fixloop.github.comments import MAX_BODY_CHARS, comment, is_bot
from fixloop.github.gh import Gh
from fixloop.github.graphql import graphql
from fixloop.github.queries import (
    CONVERSATION_QUERY,
    LATEST_COMMENTS_QUERY,
    PAGE_SIZE,
    REPLY_TO_THREAD_MUTATION,
    RESOLVE_THREAD_MUTATION,
    REVIEW_THREADS_QUERY,
    REVIEWS_QUERY,
    THREAD_COMMENTS_QUERY,
)

__all__ = ["MAX_BODY_CHARS", "comment", "is_bot"]

MAX_PAGES = 200  # 20,000 nodes: a guard against a cursor that never ends

Json = dict[str, Any]
# One page of a connection: its nodes with their paths in the answer, and the cursor of the next page.
Page = tuple[list[tuple[Json, str]], str | None]


def _page(value: Any, path: str) -> Page:
    nodes, cursor = shapes.connection(value, path)
    return [(node, f"{path}.nodes[{index}]") for index, node in enumerate(nodes)], cursor


def _pages(
    gh: Gh,
    host: str | None,
    query: str,
    variables: Mapping[str, Any],
    connection: Callable[[Json], Page],
) -> Iterator[Page]:
    """Every page of one connection, following `endCursor` from the first page on."""
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        data = graphql(gh, host, query, {**variables, **({"cursor": cursor} if cursor else {})})
        page = connection(data)
        yield page
        cursor = page[1]
        if cursor is None:
            return
    raise FixloopError(
        "GITHUB_TOO_MANY_PAGES", f"More than {MAX_PAGES} pages of {PAGE_SIZE}: stopped reading."
    )


PULL_PATH = "$.data.repository.pullRequest"


def _pull_request(data: Json, pr: Mapping[str, Any]) -> Json:
    repository = shapes.field(data, "repository", "$.data")
    if repository is None:
        raise FixloopError("GITHUB_NOT_FOUND", f"Repository {pr['owner']}/{pr['name']} not found on GitHub.")
    pull = shapes.field(shapes.obj(repository, "$.data.repository"), "pullRequest", "$.data.repository")
    if pull is None:
        raise FixloopError("PR_NOT_FOUND", f"Pull request #{pr['number']} not found on GitHub.")
    return shapes.obj(pull, PULL_PATH)


def _connection_of(pr: Mapping[str, Any], name: str) -> Callable[[Json], Page]:
    def read(data: Json) -> Page:
        pull = _pull_request(data, pr)
        return _page(shapes.field(pull, name, PULL_PATH), f"{PULL_PATH}.{name}")

    return read


def _variables(pr: Mapping[str, Any]) -> Json:
    return {"owner": pr["owner"], "name": pr["name"], "number": int(pr["number"])}


def _thread(gh: Gh, host: str | None, node: Json, path: str) -> tuple[Json, int]:
    """One review thread with every comment (later pages read here), and the requests that took."""
    thread_id = shapes.required_text(shapes.field(node, "id", path), f"{path}.id")
    comments, cursor = _page(shapes.field(node, "comments", path), f"{path}.comments")
    made = 0
    if cursor is not None:
        more, made = _more_comments(gh, host, thread_id, cursor)
        comments += more
    thread = {
        "id": thread_id,
        "path": shapes.text(shapes.field(node, "path", path), f"{path}.path", optional=True),
        "line": shapes.number(node.get("line"), f"{path}.line"),
        "original_line": shapes.number(node.get("originalLine"), f"{path}.originalLine"),
        "is_resolved": shapes.flag(shapes.field(node, "isResolved", path), f"{path}.isResolved"),
        "is_outdated": shapes.flag(shapes.field(node, "isOutdated", path), f"{path}.isOutdated"),
        "comments": [comment(item, where, association=True) for item, where in comments],
    }
    return thread, made


def fetch_threads(gh: Gh, pr: Mapping[str, Any]) -> tuple[list[Json], int]:
    """(every review thread of `pr` with all its comments, the number of GraphQL requests made).

    `pr` holds host, owner, name and number."""
    host = pr.get("host")
    requests = 0
    threads: list[Json] = []
    reading = _connection_of(pr, "reviewThreads")
    for nodes, _cursor in _pages(gh, host, REVIEW_THREADS_QUERY, _variables(pr), reading):
        requests += 1
        for node, path in nodes:
            thread, made = _thread(gh, host, node, path)
            threads.append(thread)
            requests += made
    return threads, requests


def _more_comments(
    gh: Gh, host: str | None, thread_id: str, after: str
) -> tuple[list[tuple[Json, str]], int]:
    nodes: list[tuple[Json, str]] = []
    cursor: str | None = after
    made = 0
    while cursor and made < MAX_PAGES:
        data = graphql(gh, host, THREAD_COMMENTS_QUERY, {"id": thread_id, "cursor": cursor})
        made += 1
        node = shapes.obj(shapes.field(data, "node", "$.data"), "$.data.node")
        page, cursor = _page(shapes.field(node, "comments", "$.data.node"), "$.data.node.comments")
        nodes += page
    return nodes, made


def fetch_reviews(gh: Gh, pr: Mapping[str, Any]) -> list[Json]:
    """The submitted reviews of `pr`: {id, author, is_bot, association, body, marker, state}."""
    found: list[Json] = []
    reading = _connection_of(pr, "reviews")
    for nodes, _cursor in _pages(gh, pr.get("host"), REVIEWS_QUERY, _variables(pr), reading):
        for node, path in nodes:
            item = comment(node, path, association=True)
            kept = ("id", "author", "is_bot", "association", "body", "marker")
            found.append({key: item[key] for key in kept})
            found[-1]["state"] = shapes.text(node.get("state"), f"{path}.state", optional=True)
    return found


def fetch_conversation(gh: Gh, pr: Mapping[str, Any]) -> list[Json]:
    """The conversation comments of `pr`: {id, author, is_bot, association, body, url, marker}."""
    found: list[Json] = []
    reading = _connection_of(pr, "comments")
    for nodes, _cursor in _pages(gh, pr.get("host"), CONVERSATION_QUERY, _variables(pr), reading):
        for node, path in nodes:
            item = comment(node, path, association=True)
            kept = ("id", "author", "is_bot", "association", "body", "url", "marker")
            found.append({key: item[key] for key in kept})
    return found


def latest_comments(gh: Gh, host: str | None, thread_ids: Sequence[str]) -> dict[str, list[Json]]:
    """Thread id -> its latest comments (up to PAGE_SIZE), for threads that still exist."""
    found: dict[str, list[Json]] = {}
    ids = list(dict.fromkeys(thread_ids))
    for start in range(0, len(ids), PAGE_SIZE):
        data = graphql(gh, host, LATEST_COMMENTS_QUERY, {"ids": ids[start : start + PAGE_SIZE]})
        for index, node in enumerate(shapes.items(shapes.field(data, "nodes", "$.data"), "$.data.nodes")):
            if node is None:
                continue  # an id that no longer resolves
            path = f"$.data.nodes[{index}]"
            thread = shapes.obj(node, path)
            thread_id = shapes.required_text(shapes.field(thread, "id", path), f"{path}.id")
            nodes, _cursor = shapes.connection(
                shapes.field(thread, "comments", path), f"{path}.comments", paged=False
            )
            found[thread_id] = [
                comment(item, f"{path}.comments.nodes[{at}]") for at, item in enumerate(nodes)
            ]
    return found


def reply_to_thread(gh: Gh, host: str | None, thread_id: str, body: str) -> Json:
    """Post `body` as a reply in review thread `thread_id`: {id, database_id, url} of the new comment."""
    data = graphql(gh, host, REPLY_TO_THREAD_MUTATION, {"threadId": thread_id, "body": body})
    path = "$.data.addPullRequestReviewThreadReply"
    payload = shapes.field(data, "addPullRequestReviewThreadReply", "$.data")
    posted = shapes.field(shapes.obj(payload, path), "comment", path) if payload is not None else None
    if posted is None:
        raise FixloopError("GITHUB_POST_FAILED", f"GitHub returned no comment for the reply to {thread_id}.")
    posted = shapes.obj(posted, f"{path}.comment")
    return {
        "id": shapes.required_text(shapes.field(posted, "id", f"{path}.comment"), f"{path}.comment.id"),
        "database_id": shapes.number(posted.get("databaseId"), f"{path}.comment.databaseId"),
        "url": shapes.text(posted.get("url"), f"{path}.comment.url", optional=True),
    }


def resolve_thread(gh: Gh, host: str | None, thread_id: str) -> bool:
    data = graphql(gh, host, RESOLVE_THREAD_MUTATION, {"threadId": thread_id})
    path = "$.data.resolveReviewThread"
    payload = shapes.field(data, "resolveReviewThread", "$.data")
    if payload is None:
        return False
    thread = shapes.field(shapes.obj(payload, path), "thread", path)
    if thread is None:
        return False
    thread = shapes.obj(thread, f"{path}.thread")
    return shapes.flag(shapes.field(thread, "isResolved", f"{path}.thread"), f"{path}.thread.isResolved")
