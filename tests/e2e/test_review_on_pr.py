"""`/fixloop:review --pr 7` end to end: the real pinned Claude Code CLI with the scripted model, the real
plugin, and the real ``gh`` against the local GitHub server. The engine publishes when the loop ends: one
review with an inline comment per finding, one summary, one check; a second run posts nothing new."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_github import FakeGitHub
from fixloop_model import Scenario, issue, reviewer
from fixloop_session import MakeRunner, StartAPI, command_session
from pr_model import PR_BRANCH, checkout_pr, gh_env

pytestmark = pytest.mark.usefixtures("gh_bin")

SWALLOWED = issue("swallowed-error", auto_fixable=False)
MISLEADING = issue("misleading-comment", auto_fixable=False)
DUPLICATED = issue("duplicated-total", auto_fixable=False)
REPO = "/api/v3/repos/octo/demo"


def added(lines: int) -> str:
    return f"@@ -0,0 +1,{lines} @@\n" + "".join("+line\n" for _ in range(lines))


def test_review_with_pr_posts_the_findings_once(
    github: FakeGitHub, start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    github.repo.add_pull_request(7, head_ref_name=PR_BRANCH)
    github.pull_files[7] = [
        {"filename": "inventory/stock.py", "status": "added", "patch": added(60)},
        {"filename": "inventory/report.py", "status": "added", "patch": added(60)},
    ]
    scenario = Scenario(
        agents={
            "silent-failure-hunter": reviewer({1: [SWALLOWED]}),
            "comment-analyzer": reviewer({1: [MISLEADING]}),
        }
    )
    first = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        scenario,
        arguments="--pr 7",
        env=gh_env(github),
        before=lambda project: checkout_pr(project, github),
    )
    writes = [(r.method, r.path) for r in github.requests if r.method != "GET" and r.path != "/api/graphql"]
    assert writes == [
        ("POST", f"{REPO}/pulls/7/reviews"),
        ("POST", f"{REPO}/check-runs"),
        ("POST", f"{REPO}/issues/7/comments"),
    ]
    pr = github.repo.pull_requests[7]
    assert sorted((t.path, t.line) for t in pr.threads) == [
        ("inventory/stock.py", 14),
        ("inventory/stock.py", 27),
    ]
    published = [
        e
        for e in first.run.events
        if e.get("type") == "DATA_COLLECTED" and e.get("data_type") == "pr_publish"
    ]
    assert len(published) == 1
    assert github.check_runs[0]["conclusion"] == "neutral"

    since = len(github.requests)
    command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        scenario,
        arguments="--pr 7",
        env=gh_env(github),
        project=first.project,
    )
    later = [r for r in github.requests[since:] if r.method != "GET" and r.path != "/api/graphql"]
    mutations = [r for r in github.requests[since:] if r.path == "/api/graphql" and "mutation" in str(r.body)]
    assert later == [] and mutations == [] and len(pr.threads) == 2 and len(pr.comments) == 1

    # A push: the misleading comment is gone, a new finding comes. One new inline comment, one reply on
    # the fixed thread, the same summary edited, a check for the new commit; nothing else.
    pr.head_ref_oid = "2a1b0c9d8e7f60514233241506f7e8d9c0b1a2f3"
    pushed = Scenario(
        agents={
            "silent-failure-hunter": reviewer({1: [SWALLOWED]}),
            "code-simplifier": reviewer({1: [DUPLICATED]}),
        }
    )
    since = len(github.requests)
    command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        pushed,
        arguments="--pr 7",
        env=gh_env(github),
        project=first.project,
    )
    changed = [
        (r.method, r.path if r.path != "/api/graphql" else r.operation)
        for r in github.requests[since:]
        if r.method != "GET" and (r.path != "/api/graphql" or "mutation" in str(r.body))
    ]
    summary_id = pr.comments[0].database_id
    assert changed == [
        ("POST", f"{REPO}/pulls/7/reviews"),
        ("POST", "ReplyToReviewThread"),
        ("POST", f"{REPO}/check-runs"),
        ("PATCH", f"{REPO}/issues/comments/{summary_id}"),
    ]
    fixed = next(t for t in pr.threads if t.line == 27)
    assert len(fixed.comments) == 2 and fixed.comments[1].body.startswith("Fixed:")
    assert sorted((t.path, t.line) for t in pr.threads)[0] == ("inventory/report.py", 18)
    assert len(pr.threads) == 3 and len(pr.comments) == 1
