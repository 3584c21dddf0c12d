"""A pull request's review threads, reviews and conversation through `gh api graphql`, and replies to them.

Everything read is normalised to plain dicts (what the run state keeps): a comment is
{id, database_id, author, is_bot, body, created_at, url, marker}; `marker` is the fixloop marker the full
body carries (bodies are kept up to MAX_BODY_CHARS).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from fixloop.core.errors import FixloopError
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

MAX_PAGES = 200  # 20,000 nodes: a guard against a cursor that never ends
MAX_BODY_CHARS = 20_000
_MARKER = re.compile(r"<!--\s*fixloop:[^>]*-->")

Json = dict[str, Any]


def is_bot(login: str, typename: str | None) -> bool:
    return typename == "Bot" or login.lower().endswith("[bot]")


def _author(node: Mapping[str, Any]) -> tuple[str, bool]:
    author = node.get("author")
    if not isinstance(author, dict):
        return "ghost", False  # a deleted account
    login = str(author.get("login") or "ghost")
    bot = is_bot(login, author.get("__typename"))
    return (f"{login}[bot]" if bot and not login.endswith("[bot]") else login), bot


def _body(node: Mapping[str, Any]) -> tuple[str, str | None]:
    body = str(node.get("body") or "")
    found = _MARKER.findall(body)
    kept = body if len(body) <= MAX_BODY_CHARS else body[:MAX_BODY_CHARS] + "\n[... cut by fixloop]"
    return kept, found[-1] if found else None


def comment(node: Mapping[str, Any]) -> Json:
    author, bot = _author(node)
    body, marker = _body(node)
    return {
        "id": str(node.get("id") or ""),
        "database_id": node.get("databaseId"),
        "author": author,
        "is_bot": bot,
        "body": body,
        "created_at": node.get("createdAt"),
        "url": node.get("url"),
        "marker": marker,
    }


def _pages(
    gh: Gh,
    host: str | None,
    query: str,
    variables: Mapping[str, Any],
    connection: Callable[[Json], Json | None],
) -> Iterator[Json]:
    """Every page of one connection, following `endCursor` from the first page on."""
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        data = graphql(gh, host, query, {**variables, **({"cursor": cursor} if cursor else {})})
        page = connection(data)
        if page is None:
            return
        yield page
        info = page.get("pageInfo") or {}
        if not info.get("hasNextPage") or not info.get("endCursor"):
            return
        cursor = str(info["endCursor"])
    raise FixloopError(
        "GITHUB_TOO_MANY_PAGES", f"More than {MAX_PAGES} pages of {PAGE_SIZE}: stopped reading."
    )


def _pull_request(data: Json, pr: Mapping[str, Any]) -> Json:
    repository = data.get("repository")
    if not isinstance(repository, dict):
        raise FixloopError("GITHUB_NOT_FOUND", f"Repository {pr['owner']}/{pr['name']} not found on GitHub.")
    pull = repository.get("pullRequest")
    if not isinstance(pull, dict):
        raise FixloopError("PR_NOT_FOUND", f"Pull request #{pr['number']} not found on GitHub.")
    return pull


def _variables(pr: Mapping[str, Any]) -> Json:
    return {"owner": pr["owner"], "name": pr["name"], "number": int(pr["number"])}


def fetch_threads(gh: Gh, pr: Mapping[str, Any]) -> tuple[list[Json], int]:
    """(every review thread of `pr` with all its comments, the number of GraphQL requests made).

    `pr` holds host, owner, name and number."""
    host = pr.get("host")
    requests = 0
    threads: list[Json] = []
    for page in _pages(
        gh, host, REVIEW_THREADS_QUERY, _variables(pr), lambda d: _pull_request(d, pr)["reviewThreads"]
    ):
        requests += 1
        for node in page.get("nodes") or []:
            comments = node.get("comments") or {}
            nodes = list(comments.get("nodes") or [])
            info = comments.get("pageInfo") or {}
            if info.get("hasNextPage"):
                more, made = _more_comments(gh, host, str(node["id"]), str(info.get("endCursor")))
                nodes += more
                requests += made
            threads.append(
                {
                    "id": str(node["id"]),
                    "path": node.get("path"),
                    "line": node.get("line"),
                    "original_line": node.get("originalLine"),
                    "is_resolved": bool(node.get("isResolved")),
                    "is_outdated": bool(node.get("isOutdated")),
                    "comments": [comment(item) for item in nodes if isinstance(item, dict)],
                }
            )
    return threads, requests


def _more_comments(gh: Gh, host: str | None, thread_id: str, after: str) -> tuple[list[Json], int]:
    nodes: list[Json] = []
    cursor: str | None = after
    made = 0
    while cursor:
        data = graphql(gh, host, THREAD_COMMENTS_QUERY, {"id": thread_id, "cursor": cursor})
        made += 1
        page = (data.get("node") or {}).get("comments") or {}
        nodes += [item for item in page.get("nodes") or [] if isinstance(item, dict)]
        info = page.get("pageInfo") or {}
        cursor = str(info["endCursor"]) if info.get("hasNextPage") and info.get("endCursor") else None
        if made >= MAX_PAGES:
            break
    return nodes, made


def fetch_reviews(gh: Gh, pr: Mapping[str, Any]) -> list[Json]:
    """The submitted reviews of `pr`: {id, author, is_bot, body, state}."""
    found: list[Json] = []
    for page in _pages(
        gh, pr.get("host"), REVIEWS_QUERY, _variables(pr), lambda d: _pull_request(d, pr)["reviews"]
    ):
        for node in page.get("nodes") or []:
            item = comment(node)
            found.append({key: item[key] for key in ("id", "author", "is_bot", "body", "marker")})
            found[-1]["state"] = node.get("state")
    return found


def fetch_conversation(gh: Gh, pr: Mapping[str, Any]) -> list[Json]:
    """The conversation comments of `pr`: {id, author, is_bot, body, url, marker}."""
    found: list[Json] = []
    for page in _pages(
        gh, pr.get("host"), CONVERSATION_QUERY, _variables(pr), lambda d: _pull_request(d, pr)["comments"]
    ):
        for node in page.get("nodes") or []:
            item = comment(node)
            found.append({key: item[key] for key in ("id", "author", "is_bot", "body", "url", "marker")})
    return found


def latest_comments(gh: Gh, host: str | None, thread_ids: Sequence[str]) -> dict[str, list[Json]]:
    """Thread id -> its latest comments (up to PAGE_SIZE), for threads that still exist."""
    found: dict[str, list[Json]] = {}
    ids = list(dict.fromkeys(thread_ids))
    for start in range(0, len(ids), PAGE_SIZE):
        data = graphql(gh, host, LATEST_COMMENTS_QUERY, {"ids": ids[start : start + PAGE_SIZE]})
        for node in data.get("nodes") or []:
            if isinstance(node, dict) and node.get("id"):
                nodes = (node.get("comments") or {}).get("nodes") or []
                found[str(node["id"])] = [comment(item) for item in nodes if isinstance(item, dict)]
    return found


def reply_to_thread(gh: Gh, host: str | None, thread_id: str, body: str) -> Json:
    """Post `body` as a reply in review thread `thread_id`: {id, database_id, url} of the new comment."""
    data = graphql(gh, host, REPLY_TO_THREAD_MUTATION, {"threadId": thread_id, "body": body})
    posted = (data.get("addPullRequestReviewThreadReply") or {}).get("comment")
    if not isinstance(posted, dict) or not posted.get("id"):
        raise FixloopError("GITHUB_POST_FAILED", f"GitHub returned no comment for the reply to {thread_id}.")
    return {"id": str(posted["id"]), "database_id": posted.get("databaseId"), "url": posted.get("url")}


def resolve_thread(gh: Gh, host: str | None, thread_id: str) -> bool:
    data = graphql(gh, host, RESOLVE_THREAD_MUTATION, {"threadId": thread_id})
    thread = (data.get("resolveReviewThread") or {}).get("thread") or {}
    return bool(thread.get("isResolved"))
