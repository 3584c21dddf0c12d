"""The hidden marker every comment fixloop posts carries, so a later run knows what is already answered.

Anyone can write a marker: a comment is fixloop's only when it also comes from gh's own account
(fixloop.github.comments.is_own)."""

from __future__ import annotations

import re

_ANY_MARKER = re.compile(r"<!--\s*fixloop:")


def reply_marker(run_id: str, thread_id: str) -> str:
    """The marker of the reply drafted by run `run_id` to review thread `thread_id`."""
    return f"<!-- fixloop: run {run_id} thread {thread_id} -->"


def summary_marker(run_id: str) -> str:
    return f"<!-- fixloop: run {run_id} summary -->"


def with_marker(body: str, marker: str) -> str:
    return f"{body.rstrip()}\n\n{marker}"


def has_marker(body: str) -> bool:
    """Whether `body` holds a fixloop marker (of any run), whoever wrote it."""
    return bool(_ANY_MARKER.search(body))
