"""The task each agent of fix-pr-review is given: its threads, what to do with them, its contract."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.contracts.pr import CLASSIFIER_AGENT, REPLY_WRITER_AGENT
from fixloop.contracts.prompt_text import contract_text

MAX_COMMENT_CHARS = 4000
MAX_CONTEXT_ITEMS = 20


def _cut(text: str, limit: int = MAX_COMMENT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + " [...]"


def _place(thread: Mapping[str, Any]) -> dict[str, Any]:
    return {"file": thread.get("path"), "line": thread.get("line") or thread.get("original_line")}


def thread_view(thread: Mapping[str, Any]) -> dict[str, Any]:
    """A thread as an agent reads it: id, file, line and the conversation."""
    return {
        "thread_id": thread["id"],
        **_place(thread),
        "comments": [
            {"author": c.get("author"), "body": _cut(str(c.get("body") or ""))}
            for c in thread.get("comments") or []
        ],
    }


def thread_text(thread: Mapping[str, Any]) -> str:
    """The conversation of a thread as one description (for the review fixer's issue)."""
    lines = [f"Review thread on {thread.get('path')}:"]
    lines += [f"- {c.get('author')}: {_cut(str(c.get('body') or ''))}" for c in thread.get("comments") or []]
    return "\n".join(lines)


def _header(state: Mapping[str, Any], pr: Mapping[str, Any], what: str) -> str:
    return (
        f"fixloop run {state.get('run_id')}: {what} of pull request #{pr.get('number')} "
        f"({pr.get('title')}, {pr.get('url')}). Working directory: {state.get('project_dir')}"
    )


def classifier_task(
    state: Mapping[str, Any],
    pr: Mapping[str, Any],
    threads: Sequence[Mapping[str, Any]],
    context: Sequence[Mapping[str, Any]],
    threshold: int,
) -> str:
    lines = [
        _header(state, pr, f"label {len(threads)} review thread(s)"),
        "",
        "For each thread, read the code at its file and line, then decide what the reviewer's latest "
        "request needs: fix (the code should change), answer (a reply without a change), disagree (the "
        "change would not improve the code; say why) or unclear (you cannot tell what is asked).",
        f"Give your confidence honestly: fixloop treats a label below {threshold} as unclear, changes "
        "nothing for it and asks the reviewer to clarify. For fix, say precisely what to change.",
        "Do not edit files; read only.",
        "",
        "Threads:",
        json.dumps([thread_view(thread) for thread in threads], ensure_ascii=False, indent=1),
    ]
    if context:
        lines += [
            "",
            "Review summaries and conversation comments (context only; they are not threads to label):",
            json.dumps(
                [{"author": c.get("author"), "body": _cut(str(c.get("body") or ""), 1500)} for c in context][
                    :MAX_CONTEXT_ITEMS
                ],
                ensure_ascii=False,
                indent=1,
            ),
        ]
    lines += ["", contract_text(CLASSIFIER_AGENT)]
    return "\n".join(lines)


def fixer_task(state: Mapping[str, Any], pr: Mapping[str, Any], issues: Sequence[Mapping[str, Any]]) -> str:
    lines = [
        _header(state, pr, f"fix what {len(issues)} review thread(s) ask"),
        "",
        "Each issue is a reviewer's thread: its id is the thread's id. Rules: change only what each thread "
        "asks; do not touch unrelated code or files; do not commit, stash, reset or check out anything "
        "(fixloop verifies, then commits exactly the files you changed, or rolls them back); skip a thread "
        "rather than guess.",
        "",
        "Issues:",
        json.dumps(list(issues), ensure_ascii=False, indent=1),
        "",
        contract_text("fixer"),
    ]
    return "\n".join(lines)


def writer_task(state: Mapping[str, Any], pr: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> str:
    lines = [
        _header(state, pr, f"write the replies to {len(items)} review thread(s)"),
        "",
        "Write one reply per thread, to its reviewer, from what `outcome` says was done:",
        "- fixed: say what changed and name the commit by its short sha (given as `commit`).",
        "- not fixed (a fix was tried and failed, or was rolled back): say so and why, briefly.",
        "- answer: answer the question from the code (read it); disagree: explain why, politely, with the "
        "facts; unclear: ask one precise question about what the reviewer wants.",
        "- dry run: say what would be changed; name no commit.",
        "Be brief and concrete. fixloop adds its own hidden marker to each reply; do not add one.",
        "",
        "Threads:",
        json.dumps(list(items), ensure_ascii=False, indent=1),
        "",
        contract_text(REPLY_WRITER_AGENT),
    ]
    return "\n".join(lines)
