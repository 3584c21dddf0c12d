"""Pull requests through gh: what the user typed, the checkout's repository, one pull request, a comment."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from fixloop.core.errors import FixloopError
from fixloop.core.redact import redact
from fixloop.github import shapes
from fixloop.github.gh import Gh

PR_FIELDS = "number,state,headRefName,baseRefName,author,url,title,headRefOid"
_NUMBER = re.compile(r"#?([1-9][0-9]{0,9})")
_PULL_PATH = re.compile(r"/([^/]+)/([^/]+)/pull/([1-9][0-9]{0,9})(?:/.*)?")


@dataclass(frozen=True)
class PullRequestRef:
    """A pull request as the user named it: a number, a URL, or nothing (the current branch's)."""

    text: str
    number: int | None = None
    host: str | None = None
    owner: str | None = None
    name: str | None = None

    @property
    def argument(self) -> list[str]:
        """What `gh pr view` takes for it (nothing: the pull request of the current branch)."""
        if self.host is not None:
            return [self.text]
        return [str(self.number)] if self.number is not None else []


def parse_reference(text: str) -> PullRequestRef:
    """`7`, `#7`, `https://HOST/OWNER/REPO/pull/7[/files]`, or "" for the current branch's pull request."""
    given = text.strip()
    if not given:
        return PullRequestRef("")
    match = _NUMBER.fullmatch(given)
    if match:
        return PullRequestRef(given, int(match[1]))
    parts = urlsplit(given)
    path = _PULL_PATH.fullmatch(parts.path)
    if parts.scheme in ("http", "https") and parts.netloc and path:
        return PullRequestRef(given, int(path[3]), parts.netloc.lower(), path[1], path[2])
    raise FixloopError(
        "INVALID_PR_REFERENCE",
        f"{given!r} names no pull request: give its number (e.g. 42) or its URL "
        "(https://github.com/OWNER/REPO/pull/42).",
        received=given,
    )


def check_auth(gh: Gh) -> None:
    """GH_AUTH_REQUIRED unless `gh auth status` says gh is logged in."""
    result = gh.run("auth", "status")
    if not result.ok:
        raise FixloopError(
            "GH_AUTH_REQUIRED",
            "gh is not logged in to GitHub: run `gh auth login` (scope: repo). "
            f"gh says: {result.error_text()}",
            suggestion="gh auth login",
        )


def checkout_repository(gh: Gh) -> dict[str, str]:
    """{"name_with_owner", "url"} of the GitHub repository gh finds in the checkout's remotes."""
    result = gh.run("repo", "view", "--json", "nameWithOwner,url")
    document = _json(result.stdout) if result.ok else None
    if not isinstance(document, dict) or not document.get("nameWithOwner"):
        raise FixloopError(
            "NO_GITHUB_REMOTE",
            "This checkout has no GitHub remote gh can use: add one with "
            "`git remote add origin https://github.com/OWNER/REPO.git` (or choose one with "
            f"`gh repo set-default`). gh says: {result.error_text()}",
            suggestion="git remote add origin https://github.com/OWNER/REPO.git",
        )
    return {"name_with_owner": str(document["nameWithOwner"]), "url": str(document.get("url") or "")}


def view_pull_request(gh: Gh, ref: PullRequestRef) -> dict[str, Any]:
    """The pull request `ref` names: number, url, host, owner, name, title, state, branches, head, author."""
    result = gh.run("pr", "view", *ref.argument, "--json", PR_FIELDS)
    document = _json(result.stdout) if result.ok else None
    if not isinstance(document, dict) or not isinstance(document.get("number"), int):
        said = result.error_text()
        which = f"#{ref.number}" if ref.number is not None else "of the current branch"
        if "Could not resolve to a PullRequest" in said or "no pull requests found" in said:
            raise FixloopError(
                "PR_NOT_FOUND",
                f"No pull request {which} in this repository: check the number with `gh pr list`.",
                suggestion="gh pr list",
                gh_said=said,
            )
        raise FixloopError("GH_COMMAND_FAILED", f"`gh pr view` failed: {said}", gh_said=said)
    url = str(document.get("url") or "")
    parts = urlsplit(url)
    path = _PULL_PATH.fullmatch(parts.path)
    author = document.get("author") or {}
    return {
        "number": int(document["number"]),
        "url": url,
        "host": parts.netloc.lower() or None,
        "owner": path[1] if path else None,
        "name": path[2] if path else None,
        "title": redact(str(document.get("title") or "")),
        "state": str(document.get("state") or ""),
        "head_ref": str(document.get("headRefName") or ""),
        "base_ref": str(document.get("baseRefName") or ""),
        "head_oid": str(document.get("headRefOid") or ""),
        "author": str(author.get("login") or "") if isinstance(author, dict) else "",
    }


def viewer_login(gh: Gh, host: str | None) -> str:
    """The login of the account gh acts as on `host` (gh's default host when None): `gh api user`.
    GH_AUTH_REQUIRED when gh has no user there (a token of an app has none), GITHUB_BAD_RESPONSE when the
    answer holds no login."""
    result = gh.run("api", "user", *(["--hostname", host] if host else []))
    if not result.ok:
        raise FixloopError(
            "GH_AUTH_REQUIRED",
            "fixloop cannot tell which GitHub account gh acts as (`gh api user` failed): log in as a user "
            f"with `gh auth login`. gh says: {result.error_text()}",
            suggestion="gh auth login",
        )
    document = _json(result.stdout)
    user = shapes.obj(document, "$") if document is not None else None
    if user is None:
        raise shapes.bad("$", "a JSON object", result.stdout.strip())
    return shapes.required_text(shapes.field(user, "login", "$"), "$.login")


def comment_on_pull_request(gh: Gh, url: str, body: str) -> str:
    """Add a conversation comment to the pull request at `url`; the comment's URL."""
    out = gh.checked("pr", "comment", url, "--body-file", "-", input_text=body, code="GITHUB_POST_FAILED")
    return out.strip()


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
