"""Phase 6 of fix-pr-review: each reply is posted once, whatever crashes; a dry run posts nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_github import FakeGitHub, ReviewThread
from helpers_github import answer, called, open_pr, start, state, step

from fixloop.github import threads as gh_threads
from fixloop.github.markers import reply_marker

REPLIES = ["The input is CSV.", "It is tested in test_app.py.", "Kept: it is the public API.", "Which line?"]


def seed(github: FakeGitHub) -> list[ReviewThread]:
    pr = open_pr(github)
    return [pr.add_thread(path="src/app.py", line=1, body=f"Question {i}?", author="bob") for i in range(4)]


def draft(project: Path, threads: list[ReviewThread], **options: Any) -> str:
    """A run whose phases 0-5 are done: every thread labelled `answer`, one reply drafted each."""
    run_id = start(project, **options)
    assert called(step(project, run_id)) == ["comment-classifier"]
    labels = [
        {"thread_id": t.id, "label": "answer", "confidence": 90, "reason": "A question."} for t in threads
    ]
    document = {"status": "success", "agent": "comment-classifier", "classifications": labels}
    assert answer(project, run_id, "comment-classifier", document)["valid"]
    assert called(step(project, run_id)) == ["reply-writer"]  # phase 4 has no thread to fix
    replies = [{"thread_id": t.id, "body": body} for t, body in zip(threads, REPLIES, strict=True)]
    document = {"status": "success", "agent": "reply-writer", "replies": replies}
    assert answer(project, run_id, "reply-writer", document)["valid"]
    return run_id


def replies_of(github: FakeGitHub) -> list[str]:
    """The thread of every reply mutation sent, in order."""
    return [
        r.body["variables"]["threadId"]
        for r in github.graphql_requests()
        if r.operation == "ReplyToReviewThread"
    ]


def fixloop_comments(thread: ReviewThread) -> list[str]:
    return [c.body for c in thread.comments if "<!-- fixloop:" in c.body]


def test_every_draft_is_posted_once_with_its_marker(github: FakeGitHub, pr_checkout: Path) -> None:
    threads = seed(github)
    run_id = draft(pr_checkout, threads)
    stop = step(pr_checkout, run_id)
    assert (stop["action"], stop["status"]) == ("stop", "success")
    assert replies_of(github) == [t.id for t in threads]
    for thread, body in zip(threads, REPLIES, strict=True):
        assert fixloop_comments(thread) == [f"{body}\n\n{reply_marker(run_id, thread.id)}"]
    posted = state(pr_checkout, run_id)["pr_review"]["posted"]
    assert [(tid, entry["comment_id"], entry["found"]) for tid, entry in posted.items()] == [
        (t.id, t.comments[-1].id, False) for t in threads
    ]
    # the next run of the same pull request finds every thread answered
    again = start(pr_checkout)
    stop = step(pr_checkout, again)
    assert (stop["status"], stop["reason"]) == ("success", "no_open_threads")
    assert state(pr_checkout, again)["pr_review"]["dropped"]["answered"] == [t.id for t in threads]


def crash_on(monkeypatch: pytest.MonkeyPatch, after_posting: int, before_recording: bool) -> Any:
    """The process dies once `after_posting` replies are posted: before the next post, or right after the
    last one (before the run could record it)."""
    real = gh_threads.reply_to_thread
    made: list[str] = []

    def post(gh: Any, host: str | None, thread_id: str, body: str) -> dict[str, Any]:
        if len(made) == after_posting:
            raise KeyboardInterrupt
        made.append(thread_id)
        comment = real(gh, host, thread_id, body)
        if before_recording and len(made) == after_posting:
            raise KeyboardInterrupt
        return comment

    monkeypatch.setattr(gh_threads, "reply_to_thread", post)
    return real


@pytest.mark.parametrize("before_recording", [False, True], ids=["between-posts", "before-recording"])
def test_a_crash_after_two_of_four_posts_then_phase_6_posts_exactly_the_other_two(
    github: FakeGitHub, pr_checkout: Path, monkeypatch: pytest.MonkeyPatch, before_recording: bool
) -> None:
    threads = seed(github)
    crashed = draft(pr_checkout, threads)
    real = crash_on(monkeypatch, 2, before_recording)
    with pytest.raises(KeyboardInterrupt):
        step(pr_checkout, crashed)
    assert replies_of(github) == [threads[0].id, threads[1].id]
    recorded = state(pr_checkout, crashed)["pr_review"]["posted"]
    assert list(recorded) == ([threads[0].id] if before_recording else [threads[0].id, threads[1].id])
    monkeypatch.setattr(gh_threads, "reply_to_thread", real)

    run_id = start(pr_checkout, phase="6")
    stop = step(pr_checkout, run_id)
    assert (stop["action"], stop["status"]) == ("stop", "success")
    assert replies_of(github) == [t.id for t in threads]  # exactly the other two were posted
    for thread, body in zip(threads, REPLIES, strict=True):
        assert fixloop_comments(thread) == [f"{body}\n\n{reply_marker(crashed, thread.id)}"]
    record = state(pr_checkout, run_id)["pr_review"]
    assert record["inherited_from"] == {"drafts": crashed}
    assert {tid: entry["found"] for tid, entry in record["posted"].items() if tid == threads[1].id} == {
        threads[1].id: before_recording
    }
    # two were there already: recorded by the crashed run, or found on GitHub by their marker
    assert "Replies posted: 2 (already there: 2); threads resolved: 0; failed: 0." in stop["message"]
    assert state(pr_checkout, run_id)["phases"] == [6]


def test_running_the_crashed_run_again_posts_the_rest(
    github: FakeGitHub, pr_checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = seed(github)
    run_id = draft(pr_checkout, threads)
    real = crash_on(monkeypatch, 3, before_recording=True)
    with pytest.raises(KeyboardInterrupt):
        step(pr_checkout, run_id)
    monkeypatch.setattr(gh_threads, "reply_to_thread", real)
    stop = step(pr_checkout, run_id)
    assert stop["status"] == "success"
    assert replies_of(github) == [t.id for t in threads]
    assert all(len(fixloop_comments(thread)) == 1 for thread in threads)
    posted = state(pr_checkout, run_id)["pr_review"]["posted"]
    assert [entry["found"] for entry in posted.values()] == [False, False, True, False]


def test_phase_6_alone_without_earlier_drafts_fails(github: FakeGitHub, pr_checkout: Path) -> None:
    seed(github)
    run_id = start(pr_checkout, phase="6")
    stop = step(pr_checkout, run_id)
    assert (stop["status"], stop["reason"]) == ("failed", "PR_INPUT_MISSING")
    assert "run from phase 5 (e.g. --phase=5,6)" in stop["error"]["message"]
    assert github.requests == []


def test_a_dry_run_shows_the_drafts_and_posts_nothing(github: FakeGitHub, pr_checkout: Path) -> None:
    threads = seed(github)
    run_id = draft(pr_checkout, threads, dry_run=True)
    stop = step(pr_checkout, run_id)
    assert (stop["action"], stop["status"]) == ("stop", "dry_run_complete")
    assert replies_of(github) == []
    assert not any(
        r.operation in ("ReviewThreadsLatestComments", "ResolveReviewThread") for r in github.requests
    )
    assert all(fixloop_comments(thread) == [] for thread in threads)
    assert "Replies drafted (dry run, nothing posted): 4" in stop["message"]
    assert f"- {threads[0].id} (answer): The input is CSV." in stop["message"]
    record = state(pr_checkout, run_id)["pr_review"]
    assert "posted" not in record and len(record["drafts"]) == 4

    # the drafts of a dry run are what a later `--phase=6` posts
    later = start(pr_checkout, phase="6")
    assert step(pr_checkout, later)["status"] == "success"
    assert replies_of(github) == [t.id for t in threads]
    assert fixloop_comments(threads[3]) == [f"Which line?\n\n{reply_marker(run_id, threads[3].id)}"]


def test_phase_6_after_a_dry_run_holds_back_the_replies_about_fixes_it_never_made(
    github: FakeGitHub, pr_checkout: Path
) -> None:
    threads = seed(github)
    dry = start(pr_checkout, dry_run=True)
    assert called(step(pr_checkout, dry)) == ["comment-classifier"]
    labels = [
        {"thread_id": t.id, "label": "fix" if i == 0 else "answer", "confidence": 90, "reason": "Asked."}
        for i, t in enumerate(threads)
    ]
    document = {"status": "success", "agent": "comment-classifier", "classifications": labels}
    assert answer(pr_checkout, dry, "comment-classifier", document)["valid"]
    assert called(step(pr_checkout, dry)) == ["reply-writer"]  # a dry run fixes nothing
    bodies = ["Would strip the fields.", *REPLIES[1:]]
    replies = [{"thread_id": t.id, "body": body} for t, body in zip(threads, bodies, strict=True)]
    assert answer(pr_checkout, dry, "reply-writer", {"status": "success", "agent": "reply-writer",
                                                     "replies": replies})["valid"]  # fmt: skip
    assert step(pr_checkout, dry)["status"] == "dry_run_complete"
    assert [d["dry_run"] for d in state(pr_checkout, dry)["pr_review"]["drafts"]] == [True] * 4

    later = start(pr_checkout, phase="6")
    stop = step(pr_checkout, later)
    assert (stop["action"], stop["status"]) == ("stop", "partial")
    assert replies_of(github) == [t.id for t in threads[1:]]
    assert fixloop_comments(threads[0]) == []
    assert "Replies posted: 3 (already there: 0); threads resolved: 0; failed: 0." in stop["message"]
    assert (
        "Warning DRY_RUN_FIX_NOT_POSTED: 1 reply(ies) not posted: a dry run drafted them for threads to fix, "
        "and fixed nothing. Run the command without --phase and --dry-run to fix and answer them."
    ) in stop["message"]
    final = state(pr_checkout, later)
    assert list(final["pr_review"]["posted"]) == [t.id for t in threads[1:]]
    assert final["summary"]["replies_posted"] == 3
    # the fix thread is still open to the next run, the others answered
    again = start(pr_checkout)
    assert called(step(pr_checkout, again)) == ["comment-classifier"]
    record = state(pr_checkout, again)["pr_review"]
    assert [t["id"] for t in record["kept"]] == [threads[0].id]
    assert record["dropped"]["answered"] == [t.id for t in threads[1:]]
