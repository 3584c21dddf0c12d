"""The local GitHub API server (fake_github) driven by the real ``gh`` CLI: every command fixloop's workflows
use, the requests gh makes for them, pagination, mutations, logs and errors."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from fake_github import (
    BLOB_HOST,
    CONVERSATION_QUERY,
    DEFAULT_TOKEN,
    GITHUB_HOST,
    LATEST_COMMENTS_QUERY,
    REPLY_TO_THREAD_MUTATION,
    RESOLVE_THREAD_MUTATION,
    REVIEW_THREADS_QUERY,
    REVIEWS_QUERY,
    THREAD_COMMENTS_QUERY,
    VIEWER_LOGIN,
    FakeGitHub,
    Job,
    PullRequest,
    ReviewThread,
    Step,
    WorkflowRun,
    execute_graphql,
)

pytestmark = pytest.mark.usefixtures("gh_bin")

WEB = f"https://{GITHUB_HOST}"
API = f"{WEB}/api/v3"
SHA = "1f0e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"


def gh(
    github: FakeGitHub, cwd: Path, *args: str, env: dict[str, str] | None = None, ok: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["gh", *args], cwd=cwd, env=env or github.env, capture_output=True, text=True, timeout=30, check=False
    )
    if ok:
        assert done.returncode == 0, f"gh {' '.join(args)} failed ({done.returncode}): {done.stderr}"
    return done


def gh_json(github: FakeGitHub, cwd: Path, *args: str) -> Any:
    return json.loads(gh(github, cwd, *args).stdout)


def calls(github: FakeGitHub) -> list[tuple[str, str, str]]:
    """(method, host, path with query) of every request, in order."""
    out = []
    for r in github.requests:
        query = "&".join(f"{k}={v}" for k, values in r.query.items() for v in values if k != "sig")
        out.append((r.method, r.host, r.path + (f"?{query}" if query else "")))
    return out


def seeded_pr(github: FakeGitHub) -> PullRequest:
    return github.repo.add_pull_request(
        7, title="Fix the parser", head_ref_name="fix/parser", author="alice", head_ref_oid=SHA
    )


# --------------------------------------------------------------------------------------------------
# Authentication
# --------------------------------------------------------------------------------------------------


def test_auth_status_reads_scopes_then_the_viewer(github: FakeGitHub, github_checkout: Path) -> None:
    done = gh(github, github_checkout, "auth", "status")
    assert done.stdout == ""
    assert done.stderr == (
        f"{GITHUB_HOST}\n"
        f"  ✓ Logged in to {GITHUB_HOST} as {VIEWER_LOGIN} (GH_ENTERPRISE_TOKEN)\n"
        f"  ✓ Git operations for {GITHUB_HOST} configured to use https protocol.\n"
        f"  ✓ Token: ghp_{'*' * (len(DEFAULT_TOKEN) - 4)}\n"
        "  ✓ Token scopes: repo, read:org, workflow\n"
    )
    assert calls(github) == [("GET", GITHUB_HOST, "/api/v3/"), ("POST", GITHUB_HOST, "/api/graphql")]
    viewer_query = github.requests[1]
    assert viewer_query.operation == "UserCurrent"
    assert viewer_query.body == {"query": "query UserCurrent{viewer{login}}"}
    assert all(r.authenticated for r in github.requests)
    assert github.tunnels == [f"{GITHUB_HOST}:443"] * len(github.tunnels)


def test_api_user_and_recorded_headers(github: FakeGitHub, github_checkout: Path) -> None:
    user = gh_json(github, github_checkout, "api", "user")
    assert user["login"] == VIEWER_LOGIN
    assert user["type"] == "User"
    assert user["html_url"] == f"{WEB}/{VIEWER_LOGIN}"
    assert user["url"] == f"{API}/users/{VIEWER_LOGIN}"
    (request,) = github.requests
    assert (request.method, request.path, request.status, request.body) == ("GET", "/api/v3/user", 200, None)
    assert request.authenticated
    assert request.headers["User-Agent"].startswith("GitHub CLI ")
    assert "Authorization" not in request.headers and request.headers["Host"] == GITHUB_HOST


def test_a_wrong_token_gets_401_bad_credentials(github: FakeGitHub, github_checkout: Path) -> None:
    env = github.env | {"GH_ENTERPRISE_TOKEN": "ghp_wrong"}
    done = gh(github, github_checkout, "api", "user", env=env, ok=False)
    assert done.returncode == 1
    assert done.stderr == "gh: Bad credentials (HTTP 401)\n"
    assert json.loads(done.stdout) == {
        "message": "Bad credentials",
        "documentation_url": "https://docs.github.com/rest",
    }
    assert [(r.path, r.status, r.authenticated) for r in github.requests] == [("/api/v3/user", 401, False)]


def test_requests_without_a_token_get_401(github: FakeGitHub) -> None:
    context = github.ssl_context()
    answers = []
    for path, data in (("/api/v3/user", None), ("/api/graphql", b'{"query": "{viewer{login}}"}')):
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(urllib.request.Request(github.url + path, data=data), context=context)
        answers.append((caught.value.code, json.loads(caught.value.read())["message"]))
    assert answers == [
        (401, "Requires authentication"),
        (401, "This endpoint requires you to be authenticated."),
    ]
    assert [r.authenticated for r in github.requests] == [False, False]


def test_the_proxy_tunnels_to_the_fake_hosts_only(github: FakeGitHub, github_checkout: Path) -> None:
    env = github.env | {"GH_TOKEN": "ghp_other"}
    done = gh(github, github_checkout, "api", "--hostname", "github.com", "user", env=env, ok=False)
    assert done.returncode == 1
    assert "Forbidden" in done.stderr
    assert github.tunnels == ["api.github.com:443"]
    assert github.requests == []


# --------------------------------------------------------------------------------------------------
# Pull requests
# --------------------------------------------------------------------------------------------------

PR_FIELDS = "number,state,headRefName,baseRefName,author,url,title,headRefOid"


def test_pr_view_json_fields(github: FakeGitHub, github_checkout: Path) -> None:
    seeded_pr(github)
    view = gh_json(github, github_checkout, "pr", "view", "7", "--json", PR_FIELDS)
    alice = github.model.actor("alice")
    assert view == {
        "number": 7,
        "state": "OPEN",
        "headRefName": "fix/parser",
        "baseRefName": "main",
        "author": {"id": alice.id, "is_bot": False, "login": "alice", "name": ""},
        "url": f"{WEB}/octo/demo/pull/7",
        "title": "Fix the parser",
        "headRefOid": SHA,
    }
    (request,) = github.graphql_requests()
    assert request.operation == "PullRequestByNumber"
    assert request.body["variables"] == {"owner": "octo", "repo": "demo", "pr_number": 7}
    assert calls(github) == [("POST", GITHUB_HOST, "/api/graphql")]


def test_pr_view_finds_the_pull_request_of_the_current_branch(
    github: FakeGitHub, github_checkout: Path
) -> None:
    seeded_pr(github)
    github.repo.add_pull_request(8, head_ref_name="other")
    subprocess.run(["git", "checkout", "-q", "-b", "fix/parser"], cwd=github_checkout, check=True)
    view = gh_json(github, github_checkout, "pr", "view", "--json", "number,headRefName")
    assert view == {"number": 7, "headRefName": "fix/parser"}
    (request,) = github.graphql_requests()
    assert request.operation == "PullRequestForBranch"
    assert request.body["variables"]["headRefName"] == "fix/parser"


def test_pr_list_and_repo_view(github: FakeGitHub, github_checkout: Path) -> None:
    seeded_pr(github)
    github.repo.add_pull_request(8, head_ref_name="docs", state="MERGED")
    github.repo.add_pull_request(9, head_ref_name="feature/x")
    listed = gh_json(github, github_checkout, "pr", "list", "--json", "number,headRefName")
    assert listed == [{"number": 9, "headRefName": "feature/x"}, {"number": 7, "headRefName": "fix/parser"}]
    repo = gh_json(github, github_checkout, "repo", "view", "--json", "nameWithOwner,defaultBranchRef")
    assert repo == {"nameWithOwner": "octo/demo", "defaultBranchRef": {"name": "main"}}
    assert [r.operation for r in github.graphql_requests()] == ["PullRequestList", "RepositoryInfo"]


def test_pr_view_of_an_unknown_number_is_not_found(github: FakeGitHub, github_checkout: Path) -> None:
    done = gh(github, github_checkout, "pr", "view", "999", "--json", "number,title", ok=False)
    assert done.returncode == 1
    assert (
        done.stderr
        == "GraphQL: Could not resolve to a PullRequest with the number of 999. (repository.pullRequest)\n"
    )


def test_pr_comment_adds_an_issue_comment(github: FakeGitHub, github_checkout: Path) -> None:
    pr = seeded_pr(github)
    done = gh(github, github_checkout, "pr", "comment", "7", "--body", "Fixed in 1f0e2d3.")
    (comment,) = pr.comments
    assert (comment.body, comment.author.login) == ("Fixed in 1f0e2d3.", VIEWER_LOGIN)
    assert done.stdout == f"{WEB}/octo/demo/pull/7#issuecomment-{comment.database_id}\n"
    find, create = github.graphql_requests()
    assert (find.operation, create.operation) == ("PullRequestByNumber", "CommentCreate")
    assert create.body["variables"] == {"input": {"body": "Fixed in 1f0e2d3.", "subjectId": pr.id}}
    assert "addComment(input: $input)" in create.body["query"]


# --------------------------------------------------------------------------------------------------
# fixloop's review-thread query and mutations through `gh api graphql`
# --------------------------------------------------------------------------------------------------


def review_threads_page(
    github: FakeGitHub, cwd: Path, cursor: str | None, query: str = REVIEW_THREADS_QUERY
) -> Any:
    args = [
        "api",
        "graphql",
        "-f",
        f"query={query}",
        "-F",
        "owner={owner}",
        "-F",
        "name={repo}",
    ]
    args += ["-F", "number=7"] + (["-f", f"cursor={cursor}"] if cursor else [])
    return gh_json(github, cwd, *args)


def test_review_threads_are_paged_100_at_a_time(github: FakeGitHub, github_checkout: Path) -> None:
    pr = seeded_pr(github)
    threads = [pr.add_thread(path=f"src/m{i}.py", line=i + 1, body=f"issue {i}") for i in range(150)]
    pages, cursor = [], None
    while True:
        page = review_threads_page(github, github_checkout, cursor)["data"]["repository"]["pullRequest"]
        pages.append(page)
        info = page["reviewThreads"]["pageInfo"]
        if not info["hasNextPage"]:
            break
        cursor = info["endCursor"]
    assert [len(p["reviewThreads"]["nodes"]) for p in pages] == [100, 50]
    ids = [node["id"] for p in pages for node in p["reviewThreads"]["nodes"]]
    assert ids == [t.id for t in threads]
    assert [r.body["variables"] for r in github.graphql_requests()] == [
        {"owner": "octo", "name": "demo", "number": 7},
        {"owner": "octo", "name": "demo", "number": 7, "cursor": cursor},
    ]
    assert pages[1]["reviewThreads"]["pageInfo"] == {
        "hasNextPage": False,
        "endCursor": pages[1]["reviewThreads"]["pageInfo"]["endCursor"],
    }


def test_review_threads_query_reads_threads_reviews_and_comments(
    github: FakeGitHub, github_checkout: Path
) -> None:
    pr = seeded_pr(github)
    github.model.actor("alice", association="CONTRIBUTOR")
    open_thread = pr.add_thread(
        path="src/app.py",
        line=12,
        body="Handle None here.",
        author="coderabbitai[bot]",
        replies=[("alice", "Why?"), ("fixloop-bot", "Because.")],
    )
    old_thread = pr.add_thread(
        path="src/old.py", line=None, original_line=4, body="Typo.", is_outdated=True, is_resolved=True
    )
    review = pr.add_review(author="reviewer", body="Two things.", state="CHANGES_REQUESTED")
    comment = pr.add_comment(author="alice", body="Thanks!")
    pull = review_threads_page(github, github_checkout, None)["data"]["repository"]["pullRequest"]
    end_cursor = pull["reviewThreads"]["pageInfo"]["endCursor"]

    def author(login: str) -> dict[str, str]:
        kind = github.model.actor(login).kind
        return {"__typename": kind, "login": login.removesuffix("[bot]")}

    def comments(thread: ReviewThread) -> dict[str, Any]:
        return {
            "pageInfo": {"hasNextPage": False, "endCursor": thread_cursors[thread.id]},
            "nodes": [
                {
                    "id": c.id,
                    "databaseId": c.database_id,
                    "author": author(c.author.rest_login),
                    "authorAssociation": c.author.association,
                    "body": c.body,
                    "createdAt": c.created_at,
                    "url": f"{WEB}/octo/demo/pull/7#discussion_r{c.database_id}",
                }
                for c in thread.comments
            ],
        }

    thread_cursors = {
        node["id"]: node["comments"]["pageInfo"]["endCursor"] for node in pull["reviewThreads"]["nodes"]
    }
    # GraphQL gives a bot's login without the "[bot]" REST adds; __typename says it is a Bot
    assert [c.author.login for c in open_thread.comments] == ["coderabbitai", "alice", "fixloop-bot"]
    # authorAssociation: COLLABORATOR unless a test sets it; the viewer owns the repository
    served = pull["reviewThreads"]["nodes"][0]["comments"]["nodes"]
    assert [c["authorAssociation"] for c in served] == ["COLLABORATOR", "CONTRIBUTOR", "OWNER"]
    assert pull == {
        "number": 7,
        "author": {"__typename": "User", "login": "alice"},
        "headRefName": "fix/parser",
        "state": "OPEN",
        "reviewThreads": {
            "pageInfo": {"hasNextPage": False, "endCursor": end_cursor},
            "nodes": [
                {
                    "id": open_thread.id,
                    "isResolved": False,
                    "isOutdated": False,
                    "path": "src/app.py",
                    "line": 12,
                    "originalLine": 12,
                    "comments": comments(open_thread),
                },
                {
                    "id": old_thread.id,
                    "isResolved": True,
                    "isOutdated": True,
                    "path": "src/old.py",
                    "line": None,
                    "originalLine": 4,
                    "comments": comments(old_thread),
                },
            ],
        },
    }
    assert end_cursor is not None and all(thread_cursors.values())
    reviews = review_threads_page(github, github_checkout, None, REVIEWS_QUERY)["data"]
    assert reviews["repository"]["pullRequest"]["reviews"]["nodes"] == [
        {
            "id": review.id,
            "author": author("reviewer"),
            "authorAssociation": "COLLABORATOR",
            "body": "Two things.",
            "state": "CHANGES_REQUESTED",
        }
    ]
    conversation = review_threads_page(github, github_checkout, None, CONVERSATION_QUERY)["data"]
    assert conversation["repository"]["pullRequest"]["comments"]["nodes"] == [
        {
            "id": comment.id,
            "author": author("alice"),
            "authorAssociation": "CONTRIBUTOR",
            "body": "Thanks!",
            "url": f"{WEB}/octo/demo/pull/7#issuecomment-{comment.database_id}",
        }
    ]
    assert [r.operation for r in github.graphql_requests()] == [
        "PullRequestReviewThreads",
        "PullRequestReviews",
        "PullRequestConversation",
    ]


def test_thread_comments_pages_and_latest_comments_of_several_threads(
    github: FakeGitHub, github_checkout: Path
) -> None:
    pr = seeded_pr(github)
    long_thread = pr.add_thread(
        path="src/app.py", line=1, body="first", replies=[("alice", f"reply {i}") for i in range(120)]
    )
    short_thread = pr.add_thread(path="src/app.py", line=2, body="only one")

    def run(query: str, variables: dict[str, Any]) -> Any:
        done = subprocess.run(
            ["gh", "api", "graphql", "--input", "-"],
            cwd=github_checkout,
            env=github.env,
            input=json.dumps({"query": query, "variables": variables}),
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return json.loads(done.stdout)["data"]

    first = run(THREAD_COMMENTS_QUERY, {"id": long_thread.id})["node"]["comments"]
    rest = run(THREAD_COMMENTS_QUERY, {"id": long_thread.id, "cursor": first["pageInfo"]["endCursor"]})
    second = rest["node"]["comments"]
    assert (len(first["nodes"]), first["pageInfo"]["hasNextPage"]) == (100, True)
    assert (len(second["nodes"]), second["pageInfo"]["hasNextPage"]) == (21, False)
    assert [c["id"] for c in first["nodes"] + second["nodes"]] == [c.id for c in long_thread.comments]
    latest = run(LATEST_COMMENTS_QUERY, {"ids": [short_thread.id, long_thread.id]})["nodes"]
    assert [(node["id"], node["isResolved"], len(node["comments"]["nodes"])) for node in latest] == [
        (short_thread.id, False, 1),
        (long_thread.id, False, 100),
    ]
    assert latest[1]["comments"]["nodes"][-1]["body"] == "reply 119"
    assert [r.operation for r in github.graphql_requests()] == [
        "ReviewThreadComments",
        "ReviewThreadComments",
        "ReviewThreadsLatestComments",
    ]


def test_reply_and_resolve_mutations(github: FakeGitHub, github_checkout: Path) -> None:
    pr = seeded_pr(github)
    thread = pr.add_thread(path="src/app.py", line=3, body="Rename this.")
    body = "Renamed in 1f0e2d3.\n\n- `parse()` is now `parse_line()`"
    reply = gh_json(
        github,
        github_checkout,
        "api",
        "graphql",
        "-f",
        f"query={REPLY_TO_THREAD_MUTATION}",
        "-f",
        f"threadId={thread.id}",
        "-f",
        f"body={body}",
    )
    added = thread.comments[-1]
    assert (added.body, added.author.login, added.reply_to) == (body, VIEWER_LOGIN, thread.comments[0])
    assert reply == {
        "data": {
            "addPullRequestReviewThreadReply": {
                "comment": {
                    "id": added.id,
                    "databaseId": added.database_id,
                    "url": f"{WEB}/octo/demo/pull/7#discussion_r{added.database_id}",
                }
            }
        }
    }
    resolved = gh_json(
        github,
        github_checkout,
        "api",
        "graphql",
        "-f",
        f"query={RESOLVE_THREAD_MUTATION}",
        "-f",
        f"threadId={thread.id}",
    )
    assert resolved == {"data": {"resolveReviewThread": {"thread": {"id": thread.id, "isResolved": True}}}}
    assert thread.is_resolved and thread.resolved_by is github.model.viewer
    sent = [r.body for r in github.graphql_requests()]
    assert sent == [
        {"query": REPLY_TO_THREAD_MUTATION, "variables": {"threadId": thread.id, "body": body}},
        {"query": RESOLVE_THREAD_MUTATION, "variables": {"threadId": thread.id}},
    ]


def test_graphql_errors_come_back_as_github_gives_them(github: FakeGitHub, github_checkout: Path) -> None:
    seeded_pr(github)

    def graphql(*fields: str) -> subprocess.CompletedProcess[str]:
        return gh(github, github_checkout, "api", "graphql", *fields, ok=False)

    unknown_field = graphql("-f", "query=query Q { viewer { login nickname } }")
    assert unknown_field.returncode == 1
    assert unknown_field.stderr == "gh: Field 'nickname' doesn't exist on type 'User'\n"
    assert json.loads(unknown_field.stdout)["errors"][0]["path"] == ["query Q", "viewer", "nickname"]

    unknown_root = graphql("-f", "query={ pullRequestTemplates { name } }")
    assert unknown_root.stderr == "gh: Field 'pullRequestTemplates' doesn't exist on type 'Query'\n"

    broken = graphql("-f", "query={ viewer { login }")
    assert broken.stderr == "gh: Unexpected end of document\n"

    bad_thread = graphql(
        "-f", f"query={REPLY_TO_THREAD_MUTATION}", "-f", "threadId=PRRT_nope", "-f", "body=x"
    )
    assert bad_thread.stderr == "gh: Could not resolve to a node with the global id of 'PRRT_nope'\n"
    error = json.loads(bad_thread.stdout)["errors"][0]
    assert (error["type"], error["path"]) == ("NOT_FOUND", ["addPullRequestReviewThreadReply"])

    string_number = graphql(
        "-f", f"query={REVIEW_THREADS_QUERY}", "-f", "owner=octo", "-f", "name=demo", "-f", "number=7"
    )
    assert string_number.stderr == "gh: Variable $number of type Int! was provided invalid value\n"

    no_repo = graphql(
        "-f", f"query={REVIEW_THREADS_QUERY}", "-f", "owner=octo", "-f", "name=nope", "-F", "number=7"
    )
    assert no_repo.stderr == "gh: Could not resolve to a Repository with the name 'octo/nope'.\n"
    assert json.loads(no_repo.stdout)["data"] == {"repository": None}


def test_executor_pagination_limits_and_fragments(github: FakeGitHub) -> None:
    pr = seeded_pr(github)
    pr.add_thread(path="a.py", line=1, body="x", author="coderabbitai[bot]")

    def run(query: str, **variables: Any) -> Any:
        return execute_graphql(github.model, WEB, {"query": query, "variables": variables})

    def nodes_of(connection: str) -> str:
        return (
            '{ repository(owner: "octo", name: "demo") { pullRequest(number: 7) { '
            + connection
            + " { nodes { id } } } } }"
        )

    too_many = run(nodes_of("reviewThreads(first: 101)"))
    assert too_many["errors"][0]["type"] == "EXCESSIVE_PAGINATION"
    no_bound = run(nodes_of("reviews"))
    assert no_bound["errors"][0]["message"] == (
        "You must provide a `first` or `last` value to properly paginate the `reviews` connection."
    )
    typed = run(
        'query($n: Int!) { repository(owner: "octo", name: "demo") { pullRequest(number: $n) { '
        "reviewThreads(last: 1) { totalCount nodes { comments(first: 1) { nodes { author { __typename login "
        "...on Bot { id } ...F } } } } } } } } fragment F on User { name }",
        n=7,
    )
    author = typed["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"][0]["comments"]["nodes"][0][
        "author"
    ]
    assert author == {
        "__typename": "Bot",
        "login": "coderabbitai",
        "id": github.model.actor("coderabbitai[bot]").id,
    }
    assert typed["data"]["repository"]["pullRequest"]["reviewThreads"]["totalCount"] == 1


# --------------------------------------------------------------------------------------------------
# Actions
# --------------------------------------------------------------------------------------------------

RUN_FIELDS = "databaseId,headSha,status,conclusion,jobs,url,workflowName,headBranch"


def seeded_run(
    github: FakeGitHub, test_log: str = "FAILED tests/test_app.py::test_parse - assert 1 == 2\n"
) -> WorkflowRun:
    return github.repo.add_run(
        workflow="CI",
        head_branch="fix/parser",
        head_sha=SHA,
        jobs=[
            Job("lint", [Step("Set up job", log="Runner ready"), Step("Ruff", log="All checks passed!")]),
            Job(
                "test",
                [
                    Step("Set up job", log="Runner ready"),
                    Step("Run pytest", "failure", log=test_log),
                    Step("Upload report", "skipped"),
                ],
            ),
        ],
    )


def test_run_view_json(github: FakeGitHub, github_checkout: Path) -> None:
    run = seeded_run(github)
    lint, test = run.jobs
    view = gh_json(github, github_checkout, "run", "view", str(run.id), "--json", RUN_FIELDS)

    def job(j: Job, conclusions: list[str]) -> dict[str, Any]:
        return {
            "databaseId": j.id,
            "name": j.name,
            "status": "completed",
            "conclusion": j.conclusion,
            "startedAt": j.started_at,
            # gh 2.23 exports every job's completedAt as the last job's (a pointer to its loop variable)
            "completedAt": run.jobs[-1].completed_at,
            "url": f"{WEB}/octo/demo/actions/runs/{run.id}/job/{j.id}",
            "steps": [
                {"name": s.name, "status": "completed", "conclusion": c, "number": s.number}
                for s, c in zip(j.steps, conclusions, strict=True)
            ],
        }

    assert view == {
        "databaseId": run.id,
        "headSha": SHA,
        "status": "completed",
        "conclusion": "failure",
        "url": f"{WEB}/octo/demo/actions/runs/{run.id}",
        "workflowName": "CI",
        "headBranch": "fix/parser",
        "jobs": [job(lint, ["success", "success"]), job(test, ["success", "failure", "skipped"])],
    }
    repo = "/api/v3/repos/octo/demo/actions"
    assert calls(github) == [
        ("GET", GITHUB_HOST, f"{repo}/runs/{run.id}?exclude_pull_requests=true"),
        ("GET", GITHUB_HOST, f"{repo}/workflows/{run.workflow.id}"),
        ("GET", GITHUB_HOST, f"{repo}/runs/{run.id}/jobs"),
    ]


def test_run_view_log_failed_prints_the_failed_steps_of_a_large_log(
    github: FakeGitHub, github_checkout: Path
) -> None:
    lines = [
        f"tests/test_app.py::test_case_{i:06d} FAILED - AssertionError: expected {i}" for i in range(60000)
    ]
    run = seeded_run(github, test_log="\n".join(lines))
    done = gh(github, github_checkout, "run", "view", str(run.id), "--log-failed")
    assert len(done.stdout) > 5_000_000
    printed = done.stdout.splitlines()
    started = run.jobs[1].steps[1].started_at.removesuffix("Z")
    assert len(printed) == 60000
    assert printed[0] == f"test\tRun pytest\t{started}.0000000Z {lines[0]}"
    assert printed[-1] == f"test\tRun pytest\t{started}.0059999Z {lines[-1]}"
    repo = "/api/v3/repos/octo/demo/actions"
    assert calls(github) == [
        ("GET", GITHUB_HOST, f"{repo}/runs/{run.id}?exclude_pull_requests=true"),
        ("GET", GITHUB_HOST, f"{repo}/workflows/{run.workflow.id}"),
        ("GET", GITHUB_HOST, f"{repo}/runs/{run.id}/jobs"),
        ("GET", GITHUB_HOST, f"{repo}/runs/{run.id}/logs"),
        ("GET", BLOB_HOST, f"/runs/{github.repo.database_id}/{run.id}/logs.zip"),
    ]
    redirect, download = github.requests[-2:]
    assert (redirect.status, redirect.authenticated) == (302, True)
    # gh adds GH_ENTERPRISE_TOKEN to requests for any host but github.com, blob storage included
    assert (download.status, download.authenticated) == (200, True)


def test_run_view_log_failed_of_one_job_then_of_the_run_from_gh_cache(
    github: FakeGitHub, github_checkout: Path
) -> None:
    run = github.repo.add_run(
        jobs=[
            Job(
                "lint", [Step("Set up job", log="Runner ready"), Step("Ruff", "failure", log="E501 too long")]
            ),
            Job("test", [Step("Run pytest", "failure", log="assert 1 == 2")]),
        ]
    )
    lint, test = run.jobs
    lint_at, test_at = lint.steps[1].started_at[:-1], test.steps[0].started_at[:-1]
    one_job = gh(github, github_checkout, "run", "view", "--log-failed", "--job", str(test.id))
    assert one_job.stdout == f"test\tRun pytest\t{test_at}.0000000Z assert 1 == 2\n"
    whole_run = gh(github, github_checkout, "run", "view", str(run.id), "--log-failed")
    assert whole_run.stdout == (
        f"lint\tRuff\t{lint_at}.0000000Z E501 too long\ntest\tRun pytest\t{test_at}.0000000Z assert 1 == 2\n"
    )
    repo = "/api/v3/repos/octo/demo/actions"
    get_run = [
        ("GET", GITHUB_HOST, f"{repo}/runs/{run.id}?exclude_pull_requests=true"),
        ("GET", GITHUB_HOST, f"{repo}/workflows/{run.workflow.id}"),
    ]
    assert calls(github) == [
        ("GET", GITHUB_HOST, f"{repo}/jobs/{test.id}"),
        *get_run,
        ("GET", GITHUB_HOST, f"{repo}/runs/{run.id}/logs"),
        ("GET", BLOB_HOST, f"/runs/{github.repo.database_id}/{run.id}/logs.zip"),
        # the second command reads the archive gh cached under TMPDIR/gh-cli-cache
        *get_run,
        ("GET", GITHUB_HOST, f"{repo}/runs/{run.id}/jobs"),
    ]


def test_run_list_of_a_branch(github: FakeGitHub, github_checkout: Path) -> None:
    failed = seeded_run(github)
    github.repo.add_run(workflow="Release", head_branch="main", jobs=[Job("publish", [Step("Publish")])])
    passed = github.repo.add_run(workflow="Docs", jobs=[Job("build", [Step("Build")])])
    fields = "databaseId,status,conclusion,workflowName,headBranch"
    runs = gh_json(github, github_checkout, "run", "list", "--branch", "fix/parser", "--json", fields)
    assert runs == [
        {
            "databaseId": r.id,
            "status": "completed",
            "conclusion": c,
            "workflowName": w,
            "headBranch": "fix/parser",
        }
        for r, c, w in ((passed, "success", "Docs"), (failed, "failure", "CI"))
    ]
    repo = "/api/v3/repos/octo/demo/actions"
    assert calls(github) == [
        ("GET", GITHUB_HOST, f"{repo}/runs?per_page=20&exclude_pull_requests=true&branch=fix/parser"),
        ("GET", GITHUB_HOST, f"{repo}/workflows?per_page=100&page=1"),
    ]


def test_run_view_of_an_unknown_run_is_not_found(github: FakeGitHub, github_checkout: Path) -> None:
    done = gh(github, github_checkout, "run", "view", "123", "--json", "status", ok=False)
    assert done.returncode == 1
    assert done.stderr == (
        "failed to get run: HTTP 404: Not Found "
        f"({API}/repos/octo/demo/actions/runs/123?exclude_pull_requests=true)\n"
    )


# --------------------------------------------------------------------------------------------------
# GH_HOST with a port
# --------------------------------------------------------------------------------------------------


def test_a_host_with_a_port_works_for_api_calls_but_not_for_remotes(
    github: FakeGitHub, github_checkout: Path
) -> None:
    seeded_pr(github)
    env = github.direct_env
    host = f"127.0.0.1:{github.port}"
    user = json.loads(gh(github, github_checkout, "api", "user", env=env).stdout)
    assert user["html_url"] == f"https://{host}/{VIEWER_LOGIN}"
    from_remote = gh(github, github_checkout, "pr", "view", "7", "--json", "number", env=env, ok=False)
    assert (
        "none of the git remotes configured for this repository correspond to the GH_HOST"
        in from_remote.stderr
    )
    named = gh(
        github,
        github_checkout,
        "pr",
        "view",
        "7",
        "--json",
        "url",
        env=env | {"GH_REPO": f"{host}/octo/demo"},
    )
    assert json.loads(named.stdout) == {"url": f"https://{host}/octo/demo/pull/7"}
    assert github.tunnels == []


# --------------------------------------------------------------------------------------------------
# Failures a test plans
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("after_applying", [False, True], ids=["refused", "answer-lost"])
def test_the_nth_request_of_an_operation_fails_once(
    github: FakeGitHub, github_checkout: Path, after_applying: bool
) -> None:
    pr = seeded_pr(github)
    threads = [pr.add_thread(path="src/app.py", line=i + 1, body=f"q{i}") for i in range(3)]
    github.fail_operation("ReplyToReviewThread", nth=2, after_applying=after_applying)

    def reply(thread: ReviewThread) -> subprocess.CompletedProcess[str]:
        query = f"query={REPLY_TO_THREAD_MUTATION}"
        return gh(
            github, github_checkout, "api", "graphql", "-f", query, "-f", f"threadId={thread.id}",
            "-f", "body=ok", ok=False,
        )  # fmt: skip

    done = [reply(thread) for thread in threads]
    assert [d.returncode for d in done] == [0, 1, 0]
    assert done[1].stderr == "gh: Server Error (HTTP 502)\n"
    assert [len(t.comments) for t in threads] == [2, 2 if after_applying else 1, 2]
    assert [r.status for r in github.graphql_requests()] == [200, 502, 200]
    assert reply(threads[1]).returncode == 0  # once only


def test_an_answer_can_be_tampered_with_once(github: FakeGitHub, github_checkout: Path) -> None:
    """A broken proxy or server: the nth answer of an operation is replaced by what `change` makes of it."""
    pr = seeded_pr(github)
    pr.add_thread(path="src/app.py", line=3, body="Rename this.")

    def change(answer: Any) -> Any:
        answer["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"] = {"not": "a list"}
        return answer

    github.tamper_operation("PullRequestReviewThreads", change, nth=2)
    pages = [review_threads_page(github, github_checkout, None) for _ in range(3)]
    threads = [page["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"] for page in pages]
    assert threads[1] == {"not": "a list"}
    assert threads[0] == threads[2] and len(threads[0]) == 1
    assert [r.status for r in github.graphql_requests()] == [200, 200, 200]
