"""Phase 2's rule, code only: which review threads the run answers, and why each other one is left alone."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# Why a thread is dropped, in the order the rules apply.
REASONS: tuple[str, ...] = ("resolved", "outdated", "empty", "answered", "own", "bot")


def drop_reason(thread: Mapping[str, Any], pr_author: str, include_bots: bool) -> str | None:
    """Why `thread` is left alone, or None when the run answers it."""
    if thread.get("is_resolved"):
        return "resolved"
    if thread.get("is_outdated"):
        return "outdated"
    comments = list(thread.get("comments") or [])
    if not comments:
        return "empty"
    # Requests come from people other than the PR author; fixloop's replies (whoever's account posted
    # them) are not requests. What the author adds after a reply asks nothing new.
    asking = [
        index
        for index, c in enumerate(comments)
        if not c.get("marker") and str(c.get("author") or "").lower() != pr_author.lower()
    ]
    after_latest_request = comments[asking[-1] + 1 :] if asking else comments
    if any(c.get("marker") for c in after_latest_request):
        return "answered"
    others = [comments[index] for index in asking]
    if not others:
        return "own"
    if not include_bots and all(c.get("is_bot") for c in others):
        return "bot"
    return None


def filter_threads(
    threads: Iterable[Mapping[str, Any]], pr_author: str, include_bots: bool
) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """(the threads to answer, in order; reason -> ids of the threads dropped for it)."""
    kept: list[dict[str, Any]] = []
    dropped: dict[str, list[str]] = {reason: [] for reason in REASONS}
    for thread in threads:
        reason = drop_reason(thread, pr_author, include_bots)
        if reason is None:
            kept.append(dict(thread))
        else:
            dropped[reason].append(str(thread.get("id")))
    return kept, dropped
