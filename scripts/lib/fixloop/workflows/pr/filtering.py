"""Phase 2's rule, code only: which review threads the run answers, and why each other one is left alone.

Who may ask: an account with write access to the repository (its authorAssociation is one of
`trusted`, by default OWNER, MEMBER or COLLABORATOR) or a bot (a GitHub App comments only where the
repository's admins installed it; whether bots are answered is `include_bots`). A thread opened by anyone
else is left alone (`no_write_access`), and what such accounts write in a kept thread is no request and is
not handed to the agents. fixloop's own replies are the comments with a marker written by `viewer`, the
account gh acts as; a marker in anyone else's comment is text.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fixloop.contracts.runconfig import WRITE_ACCESS
from fixloop.github.comments import is_own, same_account

# Why a thread is dropped, in the order the rules apply.
REASONS: tuple[str, ...] = ("resolved", "outdated", "empty", "no_write_access", "answered", "own", "bot")


@dataclass(frozen=True)
class Who:
    """The accounts the rules tell apart: the PR's author, gh's account, who may ask, whether bots may."""

    pr_author: str
    viewer: str
    include_bots: bool = False
    trusted: Collection[str] = WRITE_ACCESS

    def may_ask(self, comment: Mapping[str, Any]) -> bool:
        return bool(comment.get("is_bot")) or str(comment.get("association") or "").upper() in self.trusted

    def is_author(self, comment: Mapping[str, Any]) -> bool:
        return same_account(str(comment.get("author") or ""), self.pr_author)

    def shown(self, comment: Mapping[str, Any]) -> bool:
        """Whether the agents see `comment`: not when an account that may not ask wrote it."""
        return self.may_ask(comment) or self.is_author(comment) or is_own(comment, self.viewer)


def drop_reason(thread: Mapping[str, Any], who: Who) -> str | None:
    """Why `thread` is left alone, or None when the run answers it."""
    if thread.get("is_resolved"):
        return "resolved"
    if thread.get("is_outdated"):
        return "outdated"
    comments = list(thread.get("comments") or [])
    if not comments:
        return "empty"
    if not who.shown(comments[0]):
        return "no_write_access"
    # Requests come from accounts that may ask, other than the PR author; fixloop's replies are not
    # requests. What the author adds after a reply asks nothing new.
    asking = [
        index
        for index, c in enumerate(comments)
        if not is_own(c, who.viewer) and not who.is_author(c) and who.may_ask(c)
    ]
    after_latest_request = comments[asking[-1] + 1 :] if asking else comments
    if any(is_own(c, who.viewer) for c in after_latest_request):
        return "answered"
    others = [comments[index] for index in asking]
    if not others:
        return "own"
    if not who.include_bots and all(c.get("is_bot") for c in others):
        return "bot"
    return None


def filter_threads(
    threads: Iterable[Mapping[str, Any]], who: Who
) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """(the threads to answer, in order, without the comments of accounts that may not ask; reason -> ids
    of the threads dropped for it)."""
    kept: list[dict[str, Any]] = []
    dropped: dict[str, list[str]] = {reason: [] for reason in REASONS}
    for thread in threads:
        reason = drop_reason(thread, who)
        if reason is None:
            comments = list(thread.get("comments") or [])
            shown = [c for c in comments if who.shown(c)]
            kept.append({**thread, "comments": shown, "hidden_comments": len(comments) - len(shown)})
        else:
            dropped[reason].append(str(thread.get("id")))
    return kept, dropped


def outsiders(threads: Iterable[Mapping[str, Any]], ids: Collection[str]) -> list[dict[str, Any]]:
    """The threads of `ids` (left alone for want of write access) as the run reports them."""
    found = []
    for thread in threads:
        if str(thread.get("id")) in ids:
            opener = (thread.get("comments") or [{}])[0]
            found.append(
                {
                    "thread": str(thread.get("id")),
                    "author": opener.get("author"),
                    "association": opener.get("association") or "unknown",
                    "file": thread.get("path"),
                    "line": thread.get("line") or thread.get("original_line"),
                }
            )
    return found
