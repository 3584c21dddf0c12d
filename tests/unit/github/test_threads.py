"""fixloop.github.threads with the real gh: every page of threads and comments, reviews, replies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_github import GITHUB_HOST, FakeGitHub
from helpers_github import open_pr

from fixloop.core.errors import FixloopError
from fixloop.github import markers
from fixloop.github.gh import Gh
from fixloop.github.pulls import viewer_login
from fixloop.github.queries import REPLY_TO_THREAD_MUTATION, RESOLVE_THREAD_MUTATION, REVIEW_THREADS_QUERY
from fixloop.github.threads import (
    MAX_BODY_CHARS,
    fetch_conversation,
    fetch_reviews,
    fetch_threads,
    latest_comments,
    reply_to_thread,
    resolve_thread,
)

PR = {"host": GITHUB_HOST, "owner": "octo", "name": "demo", "number": 7}


def test_threads_are_read_page_by_page_with_every_comment(github: FakeGitHub, pr_checkout: Path) -> None:
    pr = open_pr(github)
    seeded = [pr.add_thread(path=f"src/m{i}.py", line=i + 1, body=f"issue {i}") for i in range(150)]
    chatty = seeded[120]
    for i in range(230):
        chatty.add_reply(f"reply {i}", "bob")
    threads, requests = fetch_threads(Gh(pr_checkout), PR)
    assert [t["id"] for t in threads] == [t.id for t in seeded]
    assert [c["body"] for c in threads[120]["comments"]] == ["issue 120", *(f"reply {i}" for i in range(230))]
    assert requests == 4
    sent = [(r.operation, r.body["variables"]) for r in github.graphql_requests()]
    first_page = github.graphql_requests()[0]
    assert first_page.body["query"] == REVIEW_THREADS_QUERY
    assert sent[0] == ("PullRequestReviewThreads", {"owner": "octo", "name": "demo", "number": 7})
    assert [name for name, _ in sent] == [
        "PullRequestReviewThreads",
        "PullRequestReviewThreads",
        "ReviewThreadComments",
        "ReviewThreadComments",
    ]  # 231 comments: 100 with the thread, then 100 and 31
    assert set(sent[1][1]) == {"owner", "name", "number", "cursor"}
    assert sent[2][1]["id"] == chatty.id and sent[3][1]["cursor"] != sent[2][1]["cursor"]
    assert all(r.host == GITHUB_HOST and r.authenticated for r in github.requests)


def test_a_thread_is_normalised_with_bots_and_markers(github: FakeGitHub, pr_checkout: Path) -> None:
    pr = open_pr(github)
    marker = markers.reply_marker("a1b2c3d4", "PRRT_x")
    thread = pr.add_thread(
        path="src/app.py",
        line=3,
        body="x" * (MAX_BODY_CHARS + 10),
        author="coderabbitai[bot]",
        replies=[("fixloop-bot", f"Done.\n\n{marker}")],
        is_outdated=True,
    )
    (found,), _ = fetch_threads(Gh(pr_checkout), PR)
    bot, reply = found["comments"]
    keys = ("id", "path", "line", "original_line", "is_resolved", "is_outdated")
    assert {key: found[key] for key in keys} == {
        "id": thread.id, "path": "src/app.py", "line": 3, "original_line": 3, "is_resolved": False,
        "is_outdated": True,
    }  # fmt: skip
    assert (bot["author"], bot["is_bot"], bot["marker"]) == ("coderabbitai[bot]", True, None)
    assert bot["body"].endswith("[... cut by fixloop]") and len(bot["body"]) < MAX_BODY_CHARS + 30
    assert (reply["author"], reply["is_bot"], reply["marker"]) == ("fixloop-bot", False, marker)
    assert (
        reply["url"] == f"https://{GITHUB_HOST}/octo/demo/pull/7#discussion_r{thread.comments[1].database_id}"
    )


def test_reviews_and_conversation(github: FakeGitHub, pr_checkout: Path) -> None:
    pr = open_pr(github)
    for i in range(105):
        pr.add_comment(author="carol", body=f"note {i}")
    review = pr.add_review(author="dependabot[bot]", body="Bump it.", state="COMMENTED")
    gh = Gh(pr_checkout)
    assert fetch_reviews(gh, PR) == [
        {"id": review.id, "author": "dependabot[bot]", "is_bot": True, "association": "COLLABORATOR",
         "body": "Bump it.", "marker": None, "state": "COMMENTED"}
    ]  # fmt: skip
    conversation = fetch_conversation(gh, PR)
    assert [c["body"] for c in conversation] == [f"note {i}" for i in range(105)]
    assert [r.operation for r in github.graphql_requests()] == [
        "PullRequestReviews",
        "PullRequestConversation",
        "PullRequestConversation",
    ]


def test_an_unknown_repository_or_pull_request(github: FakeGitHub, pr_checkout: Path) -> None:
    gh = Gh(pr_checkout)
    with pytest.raises(FixloopError) as no_pr:
        fetch_threads(gh, PR)
    assert (no_pr.value.code, no_pr.value.message) == ("GITHUB_NOT_FOUND", no_pr.value.message)
    assert "Could not resolve to a PullRequest with the number of 7" in no_pr.value.message
    with pytest.raises(FixloopError) as no_repo:
        fetch_threads(gh, {**PR, "name": "nope"})
    assert no_repo.value.code == "GITHUB_NOT_FOUND"


def test_reply_resolve_and_latest_comments(github: FakeGitHub, pr_checkout: Path) -> None:
    pr = open_pr(github)
    first = pr.add_thread(path="src/app.py", line=1, body="Rename this.")
    second = pr.add_thread(path="src/app.py", line=2, body="And this.")
    gh = Gh(pr_checkout)
    made = reply_to_thread(gh, GITHUB_HOST, first.id, "Renamed.")
    added = first.comments[-1]
    assert made == {
        "id": added.id,
        "database_id": added.database_id,
        "url": f"https://{GITHUB_HOST}/octo/demo/pull/7#discussion_r{added.database_id}",
    }
    assert (added.body, added.author.login) == ("Renamed.", "fixloop-bot")
    assert resolve_thread(gh, GITHUB_HOST, first.id) is True and first.is_resolved
    latest = latest_comments(gh, GITHUB_HOST, [first.id, second.id, first.id])
    assert {key: [c["body"] for c in value] for key, value in latest.items()} == {
        first.id: ["Rename this.", "Renamed."],
        second.id: ["And this."],
    }
    bodies: list[Any] = [r.body for r in github.graphql_requests()[:2]]
    assert bodies == [
        {"query": REPLY_TO_THREAD_MUTATION, "variables": {"threadId": first.id, "body": "Renamed."}},
        {"query": RESOLVE_THREAD_MUTATION, "variables": {"threadId": first.id}},
    ]
    assert github.graphql_requests()[2].body["variables"] == {"ids": [first.id, second.id]}


def test_a_reply_to_a_thread_that_does_not_exist(github: FakeGitHub, pr_checkout: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        reply_to_thread(Gh(pr_checkout), GITHUB_HOST, "PRRT_nope", "x")
    assert caught.value.code == "GITHUB_NOT_FOUND"
    assert caught.value.message == "GitHub: Could not resolve to a node with the global id of 'PRRT_nope'"


def test_what_is_read_is_redacted_with_its_marker_and_association_kept(
    github: FakeGitHub, pr_checkout: Path
) -> None:
    token = "ghp_" + "Zt4Kq8Lm2Nx6Pw0Rv3Ys7Ub1Cd5Ef9Gh2Ij4"
    marker = markers.reply_marker("a1b2c3d4", "PRRT_x")
    github.model.actor("eve", association="FIRST_TIME_CONTRIBUTOR")
    pr = open_pr(github)
    pr.add_thread(path="src/app.py", line=1, body=f"Use {token}", author="eve",
                  replies=[("fixloop-bot", f"No: {token}\n\n{marker}")])  # fmt: skip
    pr.add_comment(author="bob", body=f"token {token}")
    (thread,), _ = fetch_threads(Gh(pr_checkout), PR)
    opened, reply = thread["comments"]
    assert (opened["body"], opened["association"]) == ("Use [REDACTED]", "FIRST_TIME_CONTRIBUTOR")
    assert (reply["body"], reply["marker"], reply["association"]) == (
        f"No: [REDACTED]\n\n{marker}",
        marker,
        "OWNER",
    )
    (said,) = fetch_conversation(Gh(pr_checkout), PR)
    assert token not in said["body"] and said["association"] == "COLLABORATOR"


def test_the_login_gh_acts_as(github: FakeGitHub, pr_checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert viewer_login(Gh(pr_checkout), GITHUB_HOST) == "fixloop-bot"
    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", "ghp_" + "0" * 36)
    with pytest.raises(FixloopError) as refused:
        viewer_login(Gh(pr_checkout), GITHUB_HOST)
    assert refused.value.code == "GH_AUTH_REQUIRED" and "`gh api user` failed" in refused.value.message


def test_a_malformed_answer_is_one_error_naming_the_field(github: FakeGitHub, pr_checkout: Path) -> None:
    pr = open_pr(github)
    thread = pr.add_thread(path="src/app.py", line=1, body="Q?", author="bob")

    def no_comment_id(answer: Any) -> Any:
        answer["data"]["nodes"][0]["comments"]["nodes"][0]["id"] = ["PRRC_1"]
        return answer

    github.tamper_operation("ReviewThreadsLatestComments", no_comment_id)
    with pytest.raises(FixloopError) as caught:
        latest_comments(Gh(pr_checkout), GITHUB_HOST, [thread.id])
    assert caught.value.code == "GITHUB_BAD_RESPONSE"
    assert caught.value.details == {
        "path": "$.data.nodes[0].comments.nodes[0].id",
        "expected": "a non-empty string",
        "received": "a list",
    }
    assert 'is a list (["PRRC_1"]), expected a non-empty string.' in caught.value.message
    assert (
        latest_comments(Gh(pr_checkout), GITHUB_HOST, [thread.id, "PRRT_gone"])[thread.id][0]["body"] == "Q?"
    )
