"""One comment (of a review thread, a review or the conversation) as the run keeps it, checked and redacted.

A comment is {id, database_id, author, is_bot, association, body, created_at, url, marker}. The body is
text from anyone on GitHub: secrets in it are masked (fixloop.core.redact) before anything keeps it, and it
is cut at MAX_BODY_CHARS. `marker` is the fixloop marker the full body carries, whoever wrote it: only a
comment by the account fixloop acts as counts as fixloop's (`is_own`). `association` is GitHub's
authorAssociation of the author with the repository (OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fixloop.core.redact import redact
from fixloop.github import shapes

MAX_BODY_CHARS = 20_000
CUT_NOTE = "\n[... cut by fixloop]"
_MARKER = re.compile(r"<!--\s*fixloop:[^>]*-->")

Json = dict[str, Any]


def is_bot(login: str, typename: str | None) -> bool:
    return typename == "Bot" or login.lower().endswith("[bot]")


def same_account(login: str, other: str) -> bool:
    """Whether two logins name one account (GitHub logins ignore case; a bot may come with `[bot]`)."""
    return login.lower().removesuffix("[bot]") == other.lower().removesuffix("[bot]") != ""


def is_own(comment: Mapping[str, Any], viewer: str) -> bool:
    """Whether `comment` is a reply fixloop posted: it carries a marker and the account fixloop acts as
    (`viewer`, gh's user) wrote it. A marker in anyone else's comment (or quoted) is text."""
    return bool(comment.get("marker")) and same_account(str(comment.get("author") or ""), viewer)


def _author(value: Any, path: str) -> tuple[str, bool]:
    if value is None:
        return "ghost", False  # a deleted account
    author = shapes.obj(value, path)
    login = shapes.required_text(shapes.field(author, "login", path), f"{path}.login")
    typename = shapes.text(author.get("__typename"), f"{path}.__typename", optional=True)
    bot = is_bot(login, typename)
    return (f"{login}[bot]" if bot and not login.endswith("[bot]") else login), bot


def body_and_marker(raw: str) -> tuple[str, str | None]:
    """(the body as kept: redacted, then cut; the last fixloop marker of the full body)."""
    found = _MARKER.findall(raw)
    kept = redact(raw)
    if len(kept) > MAX_BODY_CHARS:
        kept = kept[:MAX_BODY_CHARS] + CUT_NOTE
    return kept, found[-1] if found else None


def comment(node: Mapping[str, Any], path: str, *, association: bool = False) -> Json:
    """The comment `node` at `path` of an answer; `association`: the query asked for authorAssociation."""
    item = dict(node)
    author, bot = _author(shapes.field(item, "author", path), f"{path}.author")
    raw = shapes.text(shapes.field(item, "body", path), f"{path}.body", optional=True) or ""
    body, marker = body_and_marker(raw)
    kept: Json = {
        "id": shapes.required_text(shapes.field(item, "id", path), f"{path}.id"),
        "database_id": shapes.number(item.get("databaseId"), f"{path}.databaseId"),
        "author": author,
        "is_bot": bot,
        "body": body,
        "created_at": shapes.text(item.get("createdAt"), f"{path}.createdAt", optional=True),
        "url": shapes.text(item.get("url"), f"{path}.url", optional=True),
        "marker": marker,
    }
    if association:
        kept["association"] = shapes.required_text(
            shapes.field(item, "authorAssociation", path), f"{path}.authorAssociation"
        )
    return kept
