"""The REST endpoints fixloop uses to review a pull request: its files, one review with inline comments,
the summary comment, replies, reactions, and the check on the head commit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.github.rest import Rest

CHECK_NAME = "fixloop review"
STATUS_CONTEXT = "fixloop/review"
Json = dict[str, Any]


def _repo(pr: Mapping[str, Any]) -> str:
    return f"repos/{pr['owner']}/{pr['name']}"


def pull_request(rest: Rest, pr: Mapping[str, Any]) -> Json:
    got = rest.call("GET", f"{_repo(pr)}/pulls/{pr['number']}", not_found="PR_NOT_FOUND")
    if not isinstance(got, dict):
        raise FixloopError(
            "GITHUB_BAD_RESPONSE", "GitHub answered the pull request with no object.", path="$"
        )
    return got


def changed_files(rest: Rest, pr: Mapping[str, Any]) -> list[Json]:
    """{filename, status, patch?} of each file the pull request changes."""
    items = rest.pages(f"{_repo(pr)}/pulls/{pr['number']}/files", not_found="PR_NOT_FOUND")
    return [item for item in items if isinstance(item, dict)]


def post_review(rest: Rest, pr: Mapping[str, Any], commit: str, body: str, comments: Sequence[Json]) -> Json:
    """Submit one COMMENT review on `commit` with `comments` ({path, line, side, start_line?, body})."""
    payload = {"commit_id": commit, "event": "COMMENT", "body": body, "comments": list(comments)}
    got = rest.call("POST", f"{_repo(pr)}/pulls/{pr['number']}/reviews", payload, not_found="PR_NOT_FOUND")
    return got if isinstance(got, dict) else {}


def issue_comments(rest: Rest, pr: Mapping[str, Any]) -> list[Json]:
    items = rest.pages(f"{_repo(pr)}/issues/{pr['number']}/comments", not_found="PR_NOT_FOUND")
    return [item for item in items if isinstance(item, dict)]


def create_issue_comment(rest: Rest, pr: Mapping[str, Any], body: str) -> Json:
    got = rest.call("POST", f"{_repo(pr)}/issues/{pr['number']}/comments", {"body": body})
    return got if isinstance(got, dict) else {}


def update_issue_comment(rest: Rest, pr: Mapping[str, Any], comment_id: int, body: str) -> Json:
    got = rest.call("PATCH", f"{_repo(pr)}/issues/comments/{comment_id}", {"body": body})
    return got if isinstance(got, dict) else {}


def comment_reactions(rest: Rest, pr: Mapping[str, Any], comment_id: int) -> list[Json]:
    """The reactions on review comment `comment_id`: {content, user: {login}, created_at}."""
    try:
        items = rest.pages(f"{_repo(pr)}/pulls/comments/{comment_id}/reactions")
    except FixloopError as error:
        if error.code == "GITHUB_NOT_FOUND":
            return []  # the comment was deleted since the threads were read
        raise
    return [item for item in items if isinstance(item, dict)]


def set_check(
    rest: Rest, pr: Mapping[str, Any], commit: str, conclusion: str, title: str, summary: str
) -> str:
    """A check run on `commit` ("check_run"), or a commit status when the token may not create check runs
    (a 403: GitHub lets only apps create them) ("status")."""
    payload = {
        "name": CHECK_NAME,
        "head_sha": commit,
        "status": "completed",
        "conclusion": conclusion,
        "output": {"title": title, "summary": summary},
    }
    try:
        rest.call("POST", f"{_repo(pr)}/check-runs", payload)
        return "check_run"
    except FixloopError as error:
        if error.code != "GITHUB_NO_WRITE_PERMISSION":
            raise
    state = "failure" if conclusion == "failure" else "success"
    status = {"state": state, "context": STATUS_CONTEXT, "description": title[:140]}
    rest.call("POST", f"{_repo(pr)}/statuses/{commit}", status)
    return "status"
