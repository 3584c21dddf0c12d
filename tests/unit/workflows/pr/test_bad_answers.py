"""fix-pr-review when GitHub (or a proxy in front of it) answers GraphQL with something else than was asked:
one GITHUB_BAD_RESPONSE naming the field, never an internal error, with the real gh and the local server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_github import FakeGitHub
from helpers_github import answer, called, events, open_pr, start, state, step

Change = Callable[[Any], Any]
THREADS = "$.data.repository.pullRequest.reviewThreads"


def pull(answer: Any) -> Any:
    return answer["data"]["repository"]["pullRequest"]


def first_thread(answer: Any) -> Any:
    return pull(answer)["reviewThreads"]["nodes"][0]


def setting(get: Callable[[Any], Any], key: str, value: Any) -> Change:
    def change(answer: Any) -> Any:
        get(answer)[key] = value
        return answer

    return change


def removing(get: Callable[[Any], Any], key: str) -> Change:
    def change(answer: Any) -> Any:
        del get(answer)[key]
        return answer

    return change


def first_comment(answer: Any) -> Any:
    return first_thread(answer)["comments"]["nodes"][0]


CASES: list[tuple[str, Change, str, str]] = [
    ("connection-as-list", setting(pull, "reviewThreads", []), THREADS, "an object"),
    ("thread-without-id", removing(first_thread, "id"), f"{THREADS}.nodes[0].id", "the field id"),
    ("thread-id-null", setting(first_thread, "id", None), f"{THREADS}.nodes[0].id", "a non-empty string"),
    ("flag-as-text", setting(first_thread, "isResolved", "false"), f"{THREADS}.nodes[0].isResolved",
     "a boolean"),
    ("line-as-text", setting(first_thread, "line", "3"), f"{THREADS}.nodes[0].line", "an integer or null"),
    ("nodes-as-object", setting(lambda a: pull(a)["reviewThreads"], "nodes", {"0": {}}), f"{THREADS}.nodes",
     "a list"),
    ("comments-missing", removing(first_thread, "comments"), f"{THREADS}.nodes[0].comments",
     "the field comments"),
    ("author-as-text", setting(first_comment, "author", "bob"),
     f"{THREADS}.nodes[0].comments.nodes[0].author", "an object"),
    ("association-missing", removing(first_comment, "authorAssociation"),
     f"{THREADS}.nodes[0].comments.nodes[0].authorAssociation", "the field authorAssociation"),
    ("has-next-page-as-text", setting(lambda a: pull(a)["reviewThreads"]["pageInfo"], "hasNextPage", "no"),
     f"{THREADS}.pageInfo.hasNextPage", "a boolean"),
    ("data-as-list", lambda answer: {"data": []}, "$.data", "an object"),
    ("answer-as-list", lambda answer: [answer], "$", "a JSON object"),
    ("answer-not-json", lambda answer: "<html>Bad gateway</html>", "$", "a JSON object"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_malformed_threads_answer_ends_the_run_with_one_github_error(
    github: FakeGitHub, pr_checkout: Path, change: Change, path: str, expected: str
) -> None:
    pr = open_pr(github)
    pr.add_thread(path="src/app.py", line=1, body="Strip the fields.", author="bob")
    github.tamper_operation("PullRequestReviewThreads", change)
    run_id = start(pr_checkout)
    stop = step(pr_checkout, run_id)
    assert (stop["action"], stop["status"], stop["reason"]) == ("stop", "failed", "GITHUB_BAD_RESPONSE")
    final = state(pr_checkout, run_id)
    assert final["error_count"] <= 1 and "INTERNAL" not in str(final.get("errors"))
    (failed,) = [r for r in final["phase_results"] if r["status"] == "failed"]
    assert failed["phase"] == "phase_1"
    message = stop["error"]["message"]
    if path == "$":  # gh itself refuses an answer that is no JSON object, and says why
        assert message.startswith("GitHub answered something that is no GraphQL response (gh says: ")
    else:
        assert message.startswith(f"GitHub answered something fixloop did not ask for: {path} is ")
        assert f"expected {expected}." in message
    (error,) = [e for e in events(pr_checkout, run_id) if e["type"] == "ERROR"]
    assert (error["code"], error["path"], error["expected"]) == ("GITHUB_BAD_RESPONSE", path, expected)


def test_a_malformed_answer_at_phase_6_is_one_github_error(github: FakeGitHub, pr_checkout: Path) -> None:
    pr = open_pr(github)
    threads = [
        pr.add_thread(path="src/app.py", line=1, body=f"Question {i}?", author="bob") for i in range(2)
    ]
    run_id = start(pr_checkout)
    assert called(step(pr_checkout, run_id)) == ["comment-classifier"]
    labels = [{"thread_id": t.id, "label": "answer", "confidence": 90, "reason": "Asked."} for t in threads]
    assert answer(
        pr_checkout,
        run_id,
        "comment-classifier",
        {"status": "success", "agent": "comment-classifier", "classifications": labels},
    )["valid"]
    assert called(step(pr_checkout, run_id)) == ["reply-writer"]
    replies = [{"thread_id": t.id, "body": "Yes."} for t in threads]
    assert answer(pr_checkout, run_id, "reply-writer",
                  {"status": "success", "agent": "reply-writer", "replies": replies})["valid"]  # fmt: skip
    # the reply to the first thread is made, but its answer comes back without the comment's id
    github.tamper_operation(
        "ReplyToReviewThread",
        setting(lambda a: a["data"]["addPullRequestReviewThreadReply"]["comment"], "id", 7),
    )
    stop = step(pr_checkout, run_id)
    assert (stop["action"], stop["status"]) == ("stop", "partial")
    path = "$.data.addPullRequestReviewThreadReply.comment.id"
    assert f"Warning REPLY_NOT_POSTED: Thread {threads[0].id}: GitHub answered something fixloop did not " \
        f"ask for: {path} is a number (7)" in stop["message"]  # fmt: skip
    assert list(state(pr_checkout, run_id)["pr_review"]["posted"]) == [threads[1].id]

    # the latest comments read before posting come back with a thread's comments as a list
    later = start(pr_checkout, phase="6")
    github.tamper_operation(
        "ReviewThreadsLatestComments", setting(lambda a: a["data"]["nodes"][0], "comments", [])
    )
    stop = step(pr_checkout, later)
    assert (stop["status"], stop["reason"]) == ("failed", "GITHUB_BAD_RESPONSE")
    assert "$.data.nodes[0].comments is a list ([]), expected an object." in stop["error"]["message"]
