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
    if comments[-1].get("marker"):
        return "answered"  # the latest comment is fixloop's own reply
    others = [c for c in comments if str(c.get("author") or "").lower() != pr_author.lower()]
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
