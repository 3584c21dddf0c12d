"""`fixloop review publish` with the real ``gh`` against the local GitHub server: one review of inline
comments, one summary edited in place, never a finding twice, the check per --fail-on, dismissals kept,
and each failure path with its code in the log."""

from __future__ import annotations

import difflib
import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from fake_github import VIEWER_LOGIN, FakeGitHub

from fixloop.core.errors import FixloopError
from fixloop.github.gh import Gh
from fixloop.github.publish_body import ZERO_WIDTH_SPACE, finding_of, summary_key_of
from fixloop.review.identity import fingerprint
from fixloop.runs.baseline import list_findings, load_baseline, remove_finding
from fixloop.store.logwriter import EventLog
from fixloop.workflows.publish.run import RunFacts, publish_facts

pytestmark = pytest.mark.usefixtures("gh_bin")

APP = "".join(f"line {n}\n" for n in range(1, 13))
OLD_SHA = "1f0e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"
NEW_SHA = "2a1b0c9d8e7f60514233241506f7e8d9c0b1a2f3"


def added_patch(lines: int) -> str:
    return f"@@ -0,0 +1,{lines} @@\n" + "".join(f"+line {n}\n" for n in range(1, lines + 1))


def finding(number: int, file: str, line: int, description: str, **extra: Any) -> dict[str, Any]:
    issue: dict[str, Any] = {
        "id": f"FL-{number:03d}",
        "file": file,
        "line": line,
        "end_line": None,
        "severity": "medium",
        "confidence": 80,
        "category": "bug",
        "description": description,
        "suggestion": "",
        "existing_code": None,
        "improved_code": None,
    }
    issue.update(extra)
    issue["fingerprint"] = fingerprint(issue)
    return issue


A = finding(1, "src/app.py", 2, "`total` is never checked for None", severity="high")
B = finding(2, "src/app.py", 5, "`retry` loops forever on a closed socket")
C = finding(3, "src/util.py", 40, "`parse` swallows every exception", severity="low")
D = finding(4, "src/app.py", 9, "`timeout` is read from the wrong setting")


@pytest.fixture
def pr_setup(github: FakeGitHub, github_checkout: Path) -> Path:
    (github_checkout / "src").mkdir()
    (github_checkout / "src" / "app.py").write_text(APP)
    github.repo.add_pull_request(7, head_ref_oid=OLD_SHA)
    github.pull_files[7] = [
        {"filename": "src/app.py", "status": "added", "patch": added_patch(12)},
        {"filename": "src/util.py", "status": "modified", "patch": "@@ -1,2 +1,3 @@\n a\n+b\n c\n"},
        {"filename": "docs/guide.md", "status": "modified", "patch": "@@ -1 +1 @@\n-a\n+b\n"},
    ]
    return github_checkout


def facts(root: Path, issues: Sequence[Mapping[str, Any]], **config: Any) -> RunFacts:
    log = EventLog(root / "publish.jsonl", None, "run-1")
    reviewed = ["src/app.py", "src/util.py"]
    return RunFacts("20240501-120000-abcd", [dict(i) for i in issues], reviewed, "success", None, config, log)


def run(github: FakeGitHub, root: Path, issues: Sequence[Mapping[str, Any]], **kw: Any) -> dict[str, Any]:
    config = kw.pop("config", {})
    return publish_facts(
        root, facts(root, issues, **config), "7", gh=Gh(root, github.env), sleep=lambda s: None, **kw
    )


def writes(github: FakeGitHub, since: int) -> list[tuple[str, str, str | None]]:
    """(method, path, GraphQL mutation) of each request after `since` that changes something."""
    found = []
    for request in github.requests[since:]:
        if request.path == "/api/graphql":
            if isinstance(request.body, dict) and str(request.body.get("query", "")).lstrip().startswith(
                "mutation"
            ):
                found.append((request.method, request.path, request.operation))
        elif request.method != "GET":
            found.append((request.method, request.path, None))
    return found


def log_codes(root: Path) -> list[str]:
    lines = (root / "publish.jsonl").read_text().splitlines()
    return [
        event.get("code") for event in map(json.loads, lines) if event.get("type") in ("ERROR", "WARNING")
    ]


REPO = "/api/v3/repos/octo/demo"


def test_first_publish_posts_one_review_and_one_summary(github: FakeGitHub, pr_setup: Path) -> None:
    answer = run(github, pr_setup, [A, B, C], fail_on="high")
    assert writes(github, 0) == [
        ("POST", f"{REPO}/pulls/7/reviews", None),
        ("POST", f"{REPO}/check-runs", None),
        ("POST", f"{REPO}/issues/7/comments", None),
    ]
    pr = github.repo.pull_requests[7]
    assert len(pr.reviews) == 1 and len(pr.threads) == 2
    assert [(t.path, t.line) for t in pr.threads] == [("src/app.py", 2), ("src/app.py", 5)]
    assert [finding_of(t.comments[0].body) for t in pr.threads] == [
        (A["fingerprint"], "bug"),
        (B["fingerprint"], "bug"),
    ]
    assert answer["outside_diff"] == ["FL-003"]
    [summary] = pr.comments
    assert summary.author.login == VIEWER_LOGIN
    assert "src/util.py:40" in summary.body and "`parse` swallows every exception" in summary.body
    assert "`docs/guide.md`: outside the run's review scope" in summary.body
    assert "| 0 | 1 | 1 | 1 |" in summary.body
    assert github.check_runs[0]["conclusion"] == "failure" and github.check_runs[0]["head_sha"] == OLD_SHA


def test_a_push_posts_only_the_new_finding_and_replies_once_on_the_fixed_one(
    github: FakeGitHub, pr_setup: Path
) -> None:
    run(github, pr_setup, [A, B, C])
    pr = github.repo.pull_requests[7]
    summary_id = pr.comments[0].database_id
    pr.head_ref_oid = NEW_SHA
    since = len(github.requests)
    answer = run(github, pr_setup, [B, C, D])
    assert writes(github, since) == [
        ("POST", f"{REPO}/pulls/7/reviews", None),
        ("POST", "/api/graphql", "ReplyToReviewThread"),
        ("POST", f"{REPO}/check-runs", None),
        ("PATCH", f"{REPO}/issues/comments/{summary_id}", None),
    ]
    assert answer["inline_comments"] == [{"path": "src/app.py", "line": 9, "id": "FL-004"}]
    assert answer["already_posted"] == ["FL-002"]
    fixed_thread = pr.threads[0]
    assert len(fixed_thread.comments) == 2 and fixed_thread.comments[1].body.startswith("Fixed:")
    assert len(pr.comments) == 1 and len(pr.threads) == 3

    since = len(github.requests)
    third = run(github, pr_setup, [B, C, D])
    assert writes(github, since) == []
    assert third["summary"] == "unchanged" and third["inline_comments"] == [] and third["fixed_threads"] == []


def test_check_conclusion_follows_fail_on(github: FakeGitHub, pr_setup: Path) -> None:
    expected = {
        "critical": "success",
        "high": "failure",
        "medium": "failure",
        "low": "failure",
        None: "neutral",
    }
    for level, conclusion in expected.items():
        assert run(github, pr_setup, [A, B], fail_on=level, dry_run=True)["check"] == conclusion
    assert run(github, pr_setup, [B], fail_on="high", dry_run=True)["check"] == "success"


def test_without_check_permission_a_commit_status_is_set(github: FakeGitHub, pr_setup: Path) -> None:
    github.check_runs_allowed = False
    answer = run(github, pr_setup, [A], fail_on="medium")
    assert answer["check_kind"] == "status"
    assert github.statuses[0]["state"] == "failure" and github.statuses[0]["context"] == "fixloop/review"


def test_max_findings_and_min_severity_are_counted_in_the_summary(github: FakeGitHub, pr_setup: Path) -> None:
    answer = run(github, pr_setup, [A, B, C, D], config={"max_findings": 1, "min_severity": "medium"})
    assert answer["left_out"] == {"below_min_severity": 1, "over_max_findings": 2}
    assert [c["id"] for c in answer["inline_comments"]] == ["FL-001"]
    body = github.repo.pull_requests[7].comments[0].body
    assert "3 finding(s) left out of this review (1 below min severity, 2 over max findings)." in body


def test_bodies_carry_no_mention_and_no_secret(github: FakeGitHub, pr_setup: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    loud = finding(5, "src/app.py", 3, f"ask @octocat and @octo/team: token {token} is committed")
    run(github, pr_setup, [loud])
    body = github.repo.pull_requests[7].threads[0].comments[0].body
    assert token not in body and "[REDACTED]" in body
    assert f"@{ZERO_WIDTH_SPACE}octocat" in body and f"@{ZERO_WIDTH_SPACE}octo/team" in body
    assert "@octocat" not in body


@pytest.mark.parametrize("how", ["reply", "thumbs_down", "resolved"])
def test_a_dismissed_finding_goes_to_the_baseline_and_is_not_posted_again(
    github: FakeGitHub, pr_setup: Path, how: str
) -> None:
    run(github, pr_setup, [A, B])
    thread = github.repo.pull_requests[7].threads[0]
    if how == "reply":
        thread.add_reply("False positive: total is checked by the caller.", "maintainer")
    elif how == "thumbs_down":
        github.reactions[thread.comments[0].database_id] = [
            {"content": "-1", "user": {"login": "maintainer"}, "created_at": "2024-05-02T10:00:00Z"}
        ]
    else:
        thread.is_resolved, thread.resolved_by = True, github.model.actor("maintainer")
    answer = run(github, pr_setup, [A, B])
    assert [d["id"] for d in answer["dismissed"]] == ["FL-001"]
    [entry] = load_baseline(pr_setup)
    assert entry["fingerprint"] == A["fingerprint"] and entry.get("dismissed_by") == "maintainer"
    assert entry["reason"]
    # The next review no longer reports it (the baseline): its thread is not taken for a fixed one.
    since = len(github.requests)
    later = run(github, pr_setup, [B])
    assert later["fixed_threads"] == [] and later["inline_comments"] == []
    assert ("POST", "/api/graphql", "ReplyToReviewThread") not in writes(github, since)


def test_a_line_gone_from_the_diff_moves_to_the_summary(github: FakeGitHub, pr_setup: Path) -> None:
    # The diff read first shows line 11; by the time the review is posted, a push took it away.
    answer_files = github.pull_files[7]
    gone = finding(6, "src/app.py", 11, "`flush` is called twice")

    real = github._list_pull_files

    def shrinking(req: Any) -> Any:
        answer = real(req)
        answer_files[0]["patch"] = added_patch(10)  # the push lands right after the first read
        return answer

    github._routes = [(m, p, shrinking if h == real else h) for m, p, h in github._routes]
    answer = run(github, pr_setup, [A, gone])
    assert answer["outside_diff"] == ["FL-006"] and [c["id"] for c in answer["inline_comments"]] == ["FL-001"]
    assert "DIFF_LINE_GONE" in log_codes(pr_setup)
    assert [item["code"] for item in answer["warnings"]] == ["DIFF_LINE_GONE"]
    assert len(github.repo.pull_requests[7].threads) == 1
    assert "`flush` is called twice" in github.repo.pull_requests[7].comments[0].body


def failure(
    github: FakeGitHub, root: Path, pr_text: str = "7", env: dict[str, str] | None = None
) -> FixloopError:
    gh = Gh(root, env or github.env)
    with pytest.raises(FixloopError) as caught:
        publish_facts(root, facts(root, [A]), pr_text, gh=gh, sleep=lambda s: None)
    assert caught.value.code in log_codes(root)
    return caught.value


def test_failure_paths_each_have_their_code(github: FakeGitHub, pr_setup: Path) -> None:
    assert failure(github, pr_setup, "99").code == "PR_NOT_FOUND"
    github.repo.pull_requests[7].state = "CLOSED"
    assert failure(github, pr_setup).code == "PR_NOT_OPEN"
    github.repo.pull_requests[7].state = "OPEN"
    github.read_only = True
    assert failure(github, pr_setup).code == "GITHUB_NO_WRITE_PERMISSION"
    github.read_only = False
    github.rate_limited_writes = [120]
    error = failure(github, pr_setup)
    assert error.code == "GITHUB_RATE_LIMITED" and error.details["retry_after_seconds"] == 120
    no_token = {k: v for k, v in github.env.items() if k != "GH_ENTERPRISE_TOKEN"}
    assert failure(github, pr_setup, env=no_token).code == "GH_AUTH_REQUIRED"
    wrong_token = github.env | {"GH_ENTERPRISE_TOKEN": "ghp_" + "x" * 36}
    assert failure(github, pr_setup, env=wrong_token).code == "GH_AUTH_REQUIRED"


def test_a_short_rate_limit_is_waited_for_once(github: FakeGitHub, pr_setup: Path) -> None:
    github.rate_limited_writes = [2]
    waited: list[float] = []
    answer = publish_facts(
        pr_setup, facts(pr_setup, [A]), "7", gh=Gh(pr_setup, github.env), sleep=waited.append
    )
    assert waited == [2.0] and len(answer["inline_comments"]) == 1
    assert summary_key_of(github.repo.pull_requests[7].comments[0].body) is not None


SERVICE = """import logging


def total_of(data):
    return data["total"]


def load(path):
    try:
        return open(path).read()
    except:
        pass


def render(items):
    text = ""
    for item in items:
        text = text + str(item)
    return text
"""
FIXED_SERVICE = """import logging


def total_of(data):
    return data.get("total", 0)


def load(path):
    try:
        return open(path).read()
    except OSError:
        logging.exception("cannot read %s", path)
        raise


def render(items):
    return "".join(str(item) for item in items)
"""


def suggestion_of(body: str) -> str:
    """The code of the ```suggestion block of a comment body (its fence may be longer than three)."""
    lines = body.split("\n")
    start = next(n for n, line in enumerate(lines) if line.lstrip("`") == "suggestion")
    fence = lines[start][: len(lines[start]) - len("suggestion")]
    end = next(n for n in range(start + 1, len(lines)) if lines[n] == fence)
    return "\n".join(lines[start + 1 : end])


def patch_from(path: str, text: str, first: int, last: int, code: str) -> str:
    """The unified diff GitHub's "Commit suggestion" makes: lines first..last of `path` become `code`."""
    old = text.splitlines(keepends=True)
    new = old[: first - 1] + [line + "\n" for line in code.split("\n")] + old[last:]
    return "".join(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}"))


def test_suggestions_applied_with_git_apply_give_the_fix(github: FakeGitHub, pr_setup: Path) -> None:
    (pr_setup / "src" / "service.py").write_text(SERVICE)
    lines = SERVICE.split("\n")
    github.pull_files[7].append(
        {"filename": "src/service.py", "status": "added", "patch": added_patch(len(lines) - 1)}
    )
    fixes = [
        finding(
            7,
            "src/service.py",
            5,
            "`total_of` fails on data without `total`",
            existing_code='    return data["total"]',
            improved_code='    return data.get("total", 0)\n',
        ),
        finding(
            8,
            "src/service.py",
            11,
            "A bare `except` hides every error of `load`",
            end_line=12,
            existing_code="    except:\n        pass",
            improved_code='    except OSError:\n        logging.exception("cannot read %s", path)\n'
            "        raise",
        ),
        finding(
            9,
            "src/service.py",
            16,
            "`render` builds a string in a loop",
            end_line=19,
            existing_code='    text = ""\n    for item in items:\n'
            "        text = text + str(item)\n    return text",
            improved_code='    return "".join(str(item) for item in items)',
        ),
        finding(
            10,
            "src/service.py",
            8,
            "`load` opens a file it never closes",
            existing_code="    stale excerpt",
            improved_code="    x",
        ),
    ]
    since = len(github.requests)
    run(github, pr_setup, fixes)
    [review] = [r for r in github.requests[since:] if r.path.endswith("/pulls/7/reviews")]
    comments = {c["line"]: c for c in review.body["comments"]}
    assert "```suggestion" not in comments[8]["body"]  # the excerpt is not what line 8 holds: no guess
    subprocess.run(["git", "add", "src/service.py"], cwd=pr_setup, check=True)
    for line in (19, 12, 5):  # bottom up, as GitHub applies suggestions one commit each
        comment = comments[line]
        first = comment.get("start_line", line)
        current = (pr_setup / "src" / "service.py").read_text()
        patch = patch_from("src/service.py", current, first, line, suggestion_of(comment["body"]))
        subprocess.run(["git", "apply", "-"], cwd=pr_setup, input=patch, text=True, check=True)
    assert (pr_setup / "src" / "service.py").read_text() == FIXED_SERVICE


def test_the_cli_publishes_a_run_kept_on_disk(
    github: FakeGitHub, pr_setup: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`fixloop review publish RUN --pr 7` on a run the engine created: the summary names the files the run
    reviews and those of the pull request it does not; a second call changes nothing."""
    from click.testing import CliRunner

    from fixloop.cli import cli
    from fixloop.runs import creation, ending

    for key, value in github.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(pr_setup))
    run_id = creation.start_run("review", root=pr_setup, changed_files=["src/app.py"])["state"]["run_id"]
    first = CliRunner().invoke(cli, ["review", "publish", run_id, "--pr", "7", "--fail-on", "high"])
    assert first.exit_code == 0, first.output
    answer = json.loads(first.output)
    assert (answer["summary"], answer["check"], answer["inline_comments"]) == ("created", "success", [])
    body = github.repo.pull_requests[7].comments[0].body
    assert "Reviewed 1 file(s)." in body and "`src/util.py`: outside the run's review scope" in body
    assert github.check_runs[-1]["conclusion"] == "success"
    since = len(github.requests)
    again = CliRunner().invoke(cli, ["review", "publish", run_id, "--pr", "7", "--fail-on", "high"])
    assert json.loads(again.output)["summary"] == "unchanged" and writes(github, since) == []
    missing = CliRunner().invoke(cli, ["review", "publish", run_id, "--pr", "99"])
    assert missing.exit_code != 0 and json.loads(missing.output)["error"]["code"] == "PR_NOT_FOUND"
    ending.end_run(pr_setup, run_id, "user_cancelled", None)


def test_dismissal_words_come_from_the_config(github: FakeGitHub, pr_setup: Path) -> None:
    run(github, pr_setup, [A])
    github.repo.pull_requests[7].threads[0].add_reply("Nope, we keep it this way.", "maintainer")
    assert run(github, pr_setup, [A], dry_run=True)["dismissed"] == []
    answer = run(github, pr_setup, [A], config={"pr_dismissal_words": ["nope"]})
    assert answer["dismissed"] == [
        {"id": "FL-001", "reason": "Nope, we keep it this way.", "by": "maintainer"}
    ]
    assert load_baseline(pr_setup)[0]["reason"] == "Nope, we keep it this way."
    listed = list_findings(pr_setup)["findings"]
    assert [(e["issue_id"], e.get("dismissed_by")) for e in listed] == [("FL-001", "maintainer")]
    remove_finding(pr_setup, A["fingerprint"])
    assert load_baseline(pr_setup) == []


def test_a_fixed_thread_is_resolved_when_the_config_says_so(github: FakeGitHub, pr_setup: Path) -> None:
    run(github, pr_setup, [A, B])
    since = len(github.requests)
    run(github, pr_setup, [B], config={"pr_resolve_threads": True})
    mutations = [item[2] for item in writes(github, since) if item[1] == "/api/graphql"]
    assert mutations == ["ReplyToReviewThread", "ResolveReviewThread"]
    first, second = github.repo.pull_requests[7].threads
    assert (first.is_resolved, second.is_resolved) == (True, False)


def test_the_summary_gives_tokens_and_cost_and_the_report_link(github: FakeGitHub, pr_setup: Path) -> None:
    usage = {"total": {"calls": 7, "total_tokens": 123456, "cost_usd": 1.23456}}
    run_facts = facts(pr_setup, [A])
    run_facts.usage = usage
    gh = Gh(pr_setup, github.env)
    publish_facts(pr_setup, run_facts, "7", gh=gh, report_url="https://ci.example/run/1#artifacts")
    body = github.repo.pull_requests[7].comments[0].body
    assert "Tokens: 123456 · estimated cost: $1.2346" in body
    assert "[HTML report](https://ci.example/run/1#artifacts)" in body
    # A later run that differs only in its tokens leaves the summary as it is.
    run_facts.usage = {"total": {"calls": 9, "total_tokens": 999, "cost_usd": 0.5}}
    since = len(github.requests)
    again = publish_facts(pr_setup, run_facts, "7", gh=gh, report_url="https://ci.example/run/1#artifacts")
    assert again["summary"] == "unchanged" and writes(github, since) == []


def test_a_publish_cut_short_by_a_rate_limit_is_finished_by_the_next(
    github: FakeGitHub, pr_setup: Path
) -> None:
    github.rate_limited_writes = [None, 600]  # the review goes through, the check is refused
    assert failure(github, pr_setup).code == "GITHUB_RATE_LIMITED"
    pr = github.repo.pull_requests[7]
    assert (len(pr.reviews), len(pr.comments), github.check_runs) == (1, 0, [])
    since = len(github.requests)
    answer = run(github, pr_setup, [A])
    assert answer["inline_comments"] == [] and answer["already_posted"] == ["FL-001"]
    assert writes(github, since) == [
        ("POST", f"{REPO}/check-runs", None),
        ("POST", f"{REPO}/issues/7/comments", None),
    ]
