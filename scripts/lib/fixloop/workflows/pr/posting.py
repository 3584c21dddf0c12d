"""Phase 6's engine work: post each reply draft once, recording every posted comment in the run at once.

Before posting, the threads' latest comments are read from GitHub: a thread that already holds a comment
by the run's gh account (`viewer`) with the draft's marker (`<!-- fixloop: run RUN thread THREAD -->`, RUN
being the run that drafted it) is not posted to again, whatever the run state says, so a crash between
posting and recording never doubles a reply. The same marker in another account's comment is not the
reply: it is posted. Each posted comment's id is written to the run state right after it is posted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fixloop.core import timekeeping
from fixloop.core.errors import FixloopError
from fixloop.github import markers
from fixloop.github import threads as gh_threads
from fixloop.github.comments import is_own
from fixloop.github.gh import Gh
from fixloop.runs import lifecycle
from fixloop.runs.lifecycle import Clock

# Failures that no other thread would escape: stop posting.
FATAL_CODES = ("GH_UNAVAILABLE", "GH_TIMEOUT", "GH_AUTH_REQUIRED")


def _save(root: Path, run_id: str, thread_id: str, entry: dict[str, Any], clock: Clock) -> None:
    def note(state: dict[str, Any]) -> None:
        state.setdefault("pr_review", {}).setdefault("posted", {})[thread_id] = entry

    lifecycle.store_for(root, run_id, clock).update(note, action="pr_reply_posted")


def post_replies(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> Any:
    """Post the run's drafts not yet posted, but those of the threads in `params["hold"]`, as gh's account
    `params["viewer"]`;
    {"ok", "posted", "found", "resolved", "failed"}."""
    run_id = str(state["run_id"])
    record = state["pr_review"]
    host = record["pr"].get("host")
    drafts: list[dict[str, Any]] = list(record.get("drafts") or [])
    posted: dict[str, Any] = dict(record.get("posted") or {})
    gh = Gh(Path(str(state["project_dir"])))
    outcome: dict[str, Any] = {"ok": True, "posted": [], "found": [], "resolved": [], "failed": {}}
    hold = set(params.get("hold") or [])
    viewer = str(params["viewer"])
    todo = [draft for draft in drafts if draft["thread_id"] not in posted and draft["thread_id"] not in hold]
    try:
        latest = gh_threads.latest_comments(gh, host, [draft["thread_id"] for draft in todo]) if todo else {}
    except FixloopError as error:
        return {**outcome, "ok": False, "code": error.code, "message": error.message}
    for draft in todo:
        thread_id = str(draft["thread_id"])
        marker = markers.reply_marker(str(draft["run_id"]), thread_id)
        existing = next(
            (c for c in latest.get(thread_id, []) if c.get("marker") == marker and is_own(c, viewer)), None
        )
        if existing is not None:
            entry = {"comment_id": existing["id"], "url": existing.get("url"), "found": True}
            outcome["found"].append(thread_id)
        else:
            try:
                made = gh_threads.reply_to_thread(
                    gh, host, thread_id, markers.with_marker(draft["body"], marker)
                )
            except FixloopError as error:
                outcome["failed"][thread_id] = {"code": error.code, "message": error.message}
                if error.code in FATAL_CODES:
                    break
                continue
            entry = {"comment_id": made["id"], "url": made.get("url"), "found": False}
            outcome["posted"].append(thread_id)
        entry["at_ms"] = timekeeping.now_ms(clock)
        _save(root, run_id, thread_id, entry, clock)
        posted[thread_id] = entry
    if params.get("resolve"):
        _resolve(root, run_id, gh, host, drafts, posted, outcome, clock)
    return outcome


def _resolve(
    root: Path,
    run_id: str,
    gh: Gh,
    host: str | None,
    drafts: list[dict[str, Any]],
    posted: dict[str, Any],
    outcome: dict[str, Any],
    clock: Clock,
) -> None:
    """Resolve each thread whose fix was committed and whose reply is posted."""
    for draft in drafts:
        thread_id = str(draft["thread_id"])
        entry = posted.get(thread_id)
        if not draft.get("commit") or entry is None or entry.get("resolved"):
            continue
        try:
            resolved = gh_threads.resolve_thread(gh, host, thread_id)
        except FixloopError as error:
            outcome["failed"][thread_id] = {"code": error.code, "message": f"not resolved: {error.message}"}
            continue
        if resolved:
            _save(root, run_id, thread_id, {**entry, "resolved": True}, clock)
            outcome["resolved"].append(thread_id)
