"""``/fixloop:fix-pr-review`` end to end: the real Claude Code CLI with the scripted model (fixloop_model),
the real ``gh`` against the local GitHub server (fake_github), on a pull request with six review threads: one
resolved, one outdated, two to fix, one question, one request to disagree with (tests/e2e/pr_model.py).

What GitHub received is read from the server's own record of every request gh made (and from its threads);
what the run did, from git, the files, the run's logs and the command's final message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from claude_runner import ClaudeRunner, git
from fake_github import VIEWER_LOGIN, FakeGitHub, RecordedRequest, ReviewThread
from fixloop_model import COMMENT_NEW, COORDINATOR, EXCEPT_NEW, FixloopModel, parse_next
from fixloop_session import MakeRunner, StartAPI, approve_commands, reply_tool_uses, run_engine_text
from pr_model import (
    PR_AUTHOR,
    PR_BRANCH,
    PrSession,
    ReviewThreads,
    configure,
    gh_env,
    new_pr_project,
    path_without_gh,
    pr_scenario,
    reply_body,
    run_command,
    seed_pull_request,
)
from scripted_api import ScriptedAPI

from fixloop.contracts.pr import CLASSIFIER_AGENT, REPLY_WRITER_AGENT
from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT
from fixloop.github.markers import reply_marker

JSON = dict[str, Any]

pytestmark = pytest.mark.usefixtures("gh_bin")

REPLY = "ReplyToReviewThread"
# What the engine may ask GitHub through `gh api graphql`
ENGINE_OPERATIONS = {
    "PullRequestReviewThreads",
    "PullRequestReviews",
    "PullRequestConversation",
    "ReviewThreadsLatestComments",
    REPLY,
    "ResolveReviewThread",
}
# gh's own, for `gh auth status`, `gh repo view`, `gh pr view` and `gh pr comment` (the summary comment)
GH_OWN_OPERATIONS = {"UserCurrent", "RepositoryInfo", "PullRequestByNumber", "CommentCreate"}
WRITES = {REPLY, "ResolveReviewThread", "CommentCreate"}
SUBJECT = "Address review comments on #7: inventory/stock.py:14, inventory/stock.py:27"


# --------------------------------------------------------------------------------------------------
# The set-up every test shares
# --------------------------------------------------------------------------------------------------


@dataclass
class Stage:
    """A pull request on the server, a scripted model, a CLI runner pointed at both, and a checkout."""

    github: FakeGitHub
    threads: ReviewThreads
    model: FixloopModel
    api: ScriptedAPI
    runner: ClaudeRunner
    project: Path
    plugin_data: Path

    def run(self, arguments: str = "7", **env: str) -> PrSession:
        return run_command(self.runner, self.api, self.model, self.project, arguments, env=env)


@pytest.fixture
def stage(
    github: FakeGitHub, start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> Iterator[Stage]:
    threads = seed_pull_request(github)
    model = FixloopModel(pr_scenario())
    api = start_api(model.script())
    runner = make_runner(api, shared_plugin_data=shared_plugin_data, timeout=300, env=gh_env(github))
    project = new_pr_project(runner, github)
    approve_commands(project, shared_plugin_data)
    yield Stage(github, threads, model, api, runner, project, shared_plugin_data)


def replies_sent(github: FakeGitHub, since: int = 0) -> list[RecordedRequest]:
    """The reply mutations GitHub accepted, from request number ``since`` on."""
    return [r for r in github.graphql_requests()[since:] if r.operation == REPLY and r.status == 200]


def writes(github: FakeGitHub, since: int = 0) -> list[RecordedRequest]:
    """Every request that changes something on GitHub (GraphQL mutations, REST writes)."""
    changing = [r for r in github.requests[since:] if r.method not in ("GET", "HEAD")]
    return [r for r in changing if r.path != "/api/graphql" or r.operation in WRITES]


def fixloop_replies(thread: ReviewThread) -> list[str]:
    return [c.body for c in thread.comments if c.author.login == VIEWER_LOGIN]


def expected_reply(thread: ReviewThread, run_id: str, body: str) -> str:
    return f"{body}\n\n{reply_marker(run_id, thread.id)}"


def draft_bodies(threads: ReviewThreads, short_sha: str) -> dict[str, str]:
    """Thread id -> what the scripted writer drafts for it when the fixes are in commit ``short_sha``."""
    return {
        threads.fix_except.id: f"Fixed in {short_sha}: Catch FileNotFoundError only.",
        threads.fix_comment.id: f"Fixed in {short_sha}: Say an unknown SKU counts as 0 units.",
        threads.question.id: reply_body(
            {"comments": [{"body": ""}], "outcome": {"label": "answer", "reason": ""}}
        ),
        threads.disagree.id: "I'd keep the name: remove_items is the module's public name; callers use it.",
    }


def check_headless(stage: Stage, session: PrSession, *, logged_in: bool = True) -> None:
    """No approval was needed or refused, the coordinator only called agents and ended with the engine's
    final message, verbatim; every gh call was the engine's: no model turn ran a command, and GitHub saw
    only the engine's queries (and gh's own)."""
    github = stage.github
    result = session.result.result or {}
    assert result.get("permission_denials") == [], result.get("permission_denials")
    coordinator = [r for r in session.requests if r["rule"] == COORDINATOR]
    assert coordinator and {tuple(t["name"] for t in r["body"]["tools"]) for r in coordinator} == {("Agent",)}
    code, text = run_engine_text(
        stage.project, "next", session.run.run_id, "--text", plugin_data=stage.plugin_data
    )
    ended = parse_next(text.strip())
    assert code == 0 and ended is not None and ended.final is not None, text
    assert session.final == ended.final
    uses = [use for record in session.requests for use in reply_tool_uses(record)]
    commands = [str(use["input"].get("command")) for use in uses if use["name"] == "Bash"]
    assert [c for c in commands if "gh" in c.split()] == [] and commands == []
    assert {use["name"] for use in uses} <= {"Agent", "Read", "Edit", "Write"}
    assert all(r.headers.get("User-Agent", "").startswith("GitHub CLI ") for r in github.requests)
    assert all(r.authenticated is logged_in for r in github.requests)
    operations = {r.operation for r in github.graphql_requests()}
    assert operations <= ENGINE_OPERATIONS | GH_OWN_OPERATIONS, operations


def check_first_run(stage: Stage, session: PrSession, head_before: str) -> str:
    """Exactly four replies, one to each thread that needs one, naming the commit that holds both fixes;
    the resolved and outdated threads untouched. The commit's sha."""
    github, threads, run = stage.github, stage.threads, session.run
    head = git(stage.project, "rev-parse", "HEAD").strip()
    # The fixes: one commit on the PR branch, exactly the file the fixer changed, the tree clean.
    assert git(stage.project, "rev-list", f"{head_before}..{head}").split() == [head]
    assert git(stage.project, "rev-parse", "--abbrev-ref", "HEAD").strip() == PR_BRANCH
    shown = git(stage.project, "show", "--name-only", "--format=%s%n%b", head)
    assert shown.splitlines()[0] == SUBJECT
    assert f"- {threads.fix_except.id} (inventory/stock.py:14)" in shown
    assert f"- {threads.fix_comment.id} (inventory/stock.py:27)" in shown
    assert shown.rstrip().splitlines()[-1] == "inventory/stock.py"
    assert git(stage.project, "status", "--porcelain") == ""
    stock = (stage.project / "inventory" / "stock.py").read_text(encoding="utf-8")
    assert EXCEPT_NEW in stock and COMMENT_NEW in stock
    # GitHub: four reply mutations, each to its own thread, each body the draft plus this run's marker.
    drafts = draft_bodies(threads, head[:7])
    sent = replies_sent(github)
    assert [r.body["variables"]["threadId"] for r in sent] == [t.id for t in threads.answered]
    for request in sent:
        thread_id = request.body["variables"]["threadId"]
        assert (
            request.body["variables"]["body"]
            == f"{drafts[thread_id]}\n\n{reply_marker(run.run_id, thread_id)}"
        )
    assert [r.operation for r in writes(github)] == [REPLY] * 4
    for thread in threads.answered:
        assert fixloop_replies(thread) == [expected_reply(thread, run.run_id, drafts[thread.id])]
        assert not thread.is_resolved
    assert [len(threads.resolved.comments), len(threads.outdated.comments)] == [1, 1]
    # The run: every phase succeeded; what it posted is recorded with each comment's id.
    assert run.state["status"] == "success"
    assert [r["status"] for r in run.state["phase_results"]] == ["success"] * 8
    posted = run.state["pr_review"]["posted"]
    assert {thread_id: entry["comment_id"] for thread_id, entry in posted.items()} == {
        thread.id: thread.comments[-1].id for thread in threads.answered
    }
    assert run.of_type("ERROR") == [] and run.of_type("WARNING") == []
    assert "Review threads: 4 of 6 to answer (left alone: resolved 1, outdated 1)." in session.final
    assert f"Committed {head[:7]}: fixes 2 of 2 thread(s) (inventory/stock.py)" in session.final
    assert "Replies posted: 4 (already there: 0); threads resolved: 0; failed: 0." in session.final
    # Who worked: the classifier, the fixer, the writer, then the review of the changed file.
    dispatched = [
        [str(u["input"]["subagent_type"]).split(":", 1)[1] for u in reply_tool_uses(r)]
        for r in session.requests
        if r["rule"] == COORDINATOR and reply_tool_uses(r)
    ]
    assert dispatched[:3] == [[CLASSIFIER_AGENT], [FIXER_AGENT], [REPLY_WRITER_AGENT]]
    assert sorted(dispatched[3]) == sorted(REVIEWER_AGENTS)
    assert {r["rule"] for r in session.requests} <= {
        COORDINATOR, CLASSIFIER_AGENT, FIXER_AGENT, REPLY_WRITER_AGENT, VERIFIER_AGENT, *REVIEWER_AGENTS
    }  # fmt: skip
    return head


# --------------------------------------------------------------------------------------------------
# The scenarios
# --------------------------------------------------------------------------------------------------


def test_replies_once_to_each_open_thread_with_the_fixes_committed_and_a_second_run_posts_nothing(
    stage: Stage,
) -> None:
    head_before = git(stage.project, "rev-parse", "HEAD").strip()
    first = stage.run()
    check_headless(stage, first)
    head = check_first_run(stage, first, head_before)

    # the PR author's own word after a reply asks nothing new
    with stage.github.model.lock:
        stage.threads.fix_except.add_reply("Thanks, that reads better.", PR_AUTHOR)
    requests_before = len(stage.github.requests)
    second = stage.run()
    check_headless(stage, second)
    assert writes(stage.github, requests_before) == []
    assert [len(fixloop_replies(t)) for t in stage.threads.answered] == [1, 1, 1, 1]
    assert git(stage.project, "rev-parse", "HEAD").strip() == head
    run = second.run
    assert run.state["status"] == "success"
    assert second.final.splitlines()[0] == f"fixloop pr-review {run.run_id}: success (no_open_threads)"
    assert [r["status"] for r in run.state["phase_results"]] == ["success"] * 3 + ["skipped"] * 5
    dropped = run.state["pr_review"]["dropped"]
    assert sorted(dropped["answered"]) == sorted(t.id for t in stage.threads.answered)
    assert (dropped["resolved"], dropped["outdated"]) == (
        [stage.threads.resolved.id],
        [stage.threads.outdated.id],
    )
    assert (
        "Review threads: 0 of 6 to answer (left alone: resolved 1, outdated 1, answered 4)." in second.final
    )
    # Nothing to judge: the coordinator ended at once, no agent ran.
    assert {r["rule"] for r in second.requests} == {COORDINATOR}


def test_a_dry_run_posts_nothing_and_shows_what_it_would_post(stage: Stage) -> None:
    head = git(stage.project, "rev-parse", "HEAD").strip()
    session = stage.run("--dry-run 7")
    check_headless(stage, session)
    assert writes(stage.github) == []
    assert [fixloop_replies(t) for t in stage.threads.answered] == [[]] * 4
    assert git(stage.project, "rev-parse", "HEAD").strip() == head
    assert git(stage.project, "status", "--porcelain") == ""
    assert "Replies drafted (dry run, nothing posted): 4" in session.final
    threads = stage.threads
    would = {
        threads.fix_except.id: "Would change: Catch FileNotFoundError only.",
        threads.fix_comment.id: "Would change: Say an unknown SKU counts as 0 units.",
    }
    for thread in threads.answered:
        label = {threads.question.id: "answer", threads.disagree.id: "disagree"}.get(thread.id, "fix")
        body = would.get(thread.id) or draft_bodies(threads, "")[thread.id]
        assert f"- {thread.id} ({label}): {body}" in session.final
    assert FIXER_AGENT not in {r["rule"] for r in session.requests}
    assert "posted" not in session.run.state["pr_review"]


def test_phase_6_after_a_dry_run_posts_no_reply_about_a_fix_it_never_made(stage: Stage) -> None:
    """`--phase=6` after a dry run posts the previewed answers, but not the replies to threads to fix: the dry
    run fixed nothing, and a reply would mark the thread answered. The next full run fixes and answers
    them."""
    threads = stage.threads
    dry = stage.run("--dry-run 7")
    head = git(stage.project, "rev-parse", "HEAD").strip()
    posting = stage.run("--phase=6 7")
    check_headless(stage, posting)
    sent = replies_sent(stage.github)
    assert [r.body["variables"]["threadId"] for r in sent] == [threads.question.id, threads.disagree.id]
    drafts = draft_bodies(threads, "")
    for thread in (threads.question, threads.disagree):
        assert fixloop_replies(thread) == [expected_reply(thread, dry.run.run_id, drafts[thread.id])]
    assert [fixloop_replies(t) for t in threads.fixed] == [[], []]
    assert posting.run.state["status"] == "partial"
    (warning,) = posting.run.of_type("WARNING", code="DRY_RUN_FIX_NOT_POSTED")
    assert sorted(warning["threads"]) == sorted(t.id for t in threads.fixed)
    assert "Replies posted: 2 (already there: 0); threads resolved: 0; failed: 0." in posting.final
    assert "Warning DRY_RUN_FIX_NOT_POSTED: 2 reply(ies) not posted" in posting.final

    full = stage.run()
    check_headless(stage, full)
    dropped = full.run.state["pr_review"]["dropped"]
    assert sorted(dropped["answered"]) == sorted([threads.question.id, threads.disagree.id])
    assert [t["id"] for t in full.run.state["pr_review"]["kept"]] == [t.id for t in threads.fixed]
    fixed_in = git(stage.project, "rev-parse", "HEAD").strip()
    assert git(stage.project, "rev-list", f"{head}..{fixed_in}").split() == [fixed_in]
    after = draft_bodies(threads, fixed_in[:7])
    for thread in threads.fixed:
        assert fixloop_replies(thread) == [expected_reply(thread, full.run.run_id, after[thread.id])]
    assert [len(fixloop_replies(t)) for t in threads.answered] == [1, 1, 1, 1]
    assert len(replies_sent(stage.github)) == 4


@pytest.mark.parametrize("lost", ["refused", "answer_lost"])
def test_phase_6_after_an_interrupted_post_posts_only_what_is_missing(stage: Stage, lost: str) -> None:
    """GitHub fails the third reply once: refused (nothing posted) or its answer lost after it was posted.
    `--phase=6` then posts what is missing, using the first run's drafts and marker, and nothing twice."""
    threads = stage.threads
    stage.github.fail_operation(REPLY, nth=3, after_applying=lost == "answer_lost")
    first = stage.run()
    run_id = first.run.run_id
    missing = threads.answered[2]
    assert "Replies posted: 3 (already there: 0); threads resolved: 0; failed: 1." in first.final
    (warning,) = first.run.of_type("WARNING", code="REPLY_NOT_POSTED")
    assert missing.id in warning["message"]
    assert set(first.run.state["pr_review"]["posted"]) == {t.id for t in threads.answered} - {missing.id}
    requests_before = len(stage.github.requests)

    again = stage.run("--phase=6 7")
    check_headless(stage, again)
    assert {r["rule"] for r in again.requests} == {COORDINATOR}
    drafts = draft_bodies(threads, git(stage.project, "rev-parse", "--short=7", "HEAD").strip())
    new = [r for r in stage.github.requests[requests_before:] if r.operation == REPLY]
    if lost == "refused":
        assert [r.body["variables"]["threadId"] for r in new] == [missing.id]
        assert "Replies posted: 1 (already there: 3)" in again.final
    else:
        assert new == []
        assert "Replies posted: 0 (already there: 4)" in again.final
    for thread in threads.answered:
        assert fixloop_replies(thread) == [expected_reply(thread, run_id, drafts[thread.id])]
    assert [p["phase"] for p in again.run.state["phase_results"] if p["status"] != "skipped"] == ["phase_6"]
    posted = again.run.state["pr_review"]["posted"]
    assert {thread_id: entry["comment_id"] for thread_id, entry in posted.items()} == {
        thread.id: thread.comments[-1].id for thread in threads.answered
    }
    assert posted[missing.id]["found"] is (lost == "answer_lost")


def test_opted_in_it_resolves_the_fixed_threads_and_posts_one_summary_comment(stage: Stage) -> None:
    configure(stage.project, pr_resolve_threads=True, pr_post_summary=True)
    session = stage.run()
    check_headless(stage, session)
    threads, run_id = stage.threads, session.run.run_id
    assert [t.is_resolved for t in threads.answered] == [True, True, False, False]
    resolved = [r for r in stage.github.graphql_requests() if r.operation == "ResolveReviewThread"]
    assert [r.body["variables"]["threadId"] for r in resolved] == [t.id for t in threads.fixed]
    assert "Replies posted: 4 (already there: 0); threads resolved: 2; failed: 0." in session.final
    summary = [c for c in threads.pr.comments if c.author.login == VIEWER_LOGIN]
    head = git(stage.project, "rev-parse", "--short=7", "HEAD").strip()
    assert [c.body for c in summary] == [
        "fixloop answered 4 review thread(s) of this pull request.\n"
        f"- Fixed: 2 thread(s), in commit {head}.\n"
        "- Answered: 1; disagreed: 1; asked to clarify: 0.\n"
        "- Review of the changes: 1 round(s), 0 issue(s) fixed, 0 left.\n\n"
        f"<!-- fixloop: run {run_id} summary -->"
    ]
    record = session.run.state["pr_review"]
    assert record["summary_comment"] == {
        "url": f"{stage.github.web_url}/octo/demo/pull/7#issuecomment-{summary[0].database_id}",
        "found": False,
    }
    assert [r.operation for r in writes(stage.github)] == [REPLY] * 4 + ["ResolveReviewThread"] * 2 + [
        "CommentCreate"
    ]
    assert session.run.state["status"] == "success"


# --------------------------------------------------------------------------------------------------
# Phase 0: what must hold before the run touches the pull request
# --------------------------------------------------------------------------------------------------

PreflightCase = Callable[[Stage, Path], tuple[str, dict[str, str]]]


def _no_gh(stage: Stage, tmp: Path) -> tuple[str, dict[str, str]]:
    return "7", {"PATH": path_without_gh(tmp / "bin")}


def _logged_out(stage: Stage, tmp: Path) -> tuple[str, dict[str, str]]:
    return "7", {"GH_ENTERPRISE_TOKEN": "ghp_revokedToken0000000000000000000000"}


def _no_remote(stage: Stage, tmp: Path) -> tuple[str, dict[str, str]]:
    git(stage.project, "remote", "remove", "origin")
    return "7", {}


def _unknown_pr(stage: Stage, tmp: Path) -> tuple[str, dict[str, str]]:
    return "99", {}


def _closed_pr(stage: Stage, tmp: Path) -> tuple[str, dict[str, str]]:
    stage.threads.pr.state = "CLOSED"
    return "7", {}


def _other_branch(stage: Stage, tmp: Path) -> tuple[str, dict[str, str]]:
    git(stage.project, "checkout", "-q", "-b", "feature/other")
    return "7", {}


PREFLIGHT: dict[str, tuple[PreflightCase, str]] = {
    "GH_UNAVAILABLE": (_no_gh, "https://cli.github.com"),
    "GH_AUTH_REQUIRED": (_logged_out, "gh auth login"),
    "NO_GITHUB_REMOTE": (_no_remote, "git remote add origin"),
    "PR_NOT_FOUND": (_unknown_pr, "gh pr list"),
    "PR_NOT_OPEN": (_closed_pr, "gh pr reopen 7"),
    "PR_BRANCH_MISMATCH": (_other_branch, "gh pr checkout 7"),
}


@pytest.mark.parametrize("code", list(PREFLIGHT))
def test_each_phase_0_error_has_its_code_in_the_log_and_the_final_message(
    stage: Stage, tmp_path: Path, code: str
) -> None:
    prepare, fix = PREFLIGHT[code]
    arguments, env = prepare(stage, tmp_path)
    session = stage.run(arguments, **env)
    check_headless(stage, session, logged_in=code != "GH_AUTH_REQUIRED")
    run = session.run
    assert run.state["status"] == "failed"
    (error,) = run.of_type("ERROR")
    assert error["code"] == code
    assert f"ERROR | {code} |" in run.text_log
    headline, error_line = session.final.splitlines()[:2]
    assert headline == f"fixloop pr-review {run.run_id}: failed ({code})"
    assert error_line.startswith(f"Error {code}: ") and fix in session.final
    assert [r["status"] for r in run.state["phase_results"]][:1] == ["failed"]
    assert {r["rule"] for r in session.requests} == {COORDINATOR}
    assert writes(stage.github) == []
    assert "fetched" not in (run.state.get("pr_review") or {})
