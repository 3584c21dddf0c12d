"""fix-pr-review end to end in the engine, with the real gh and the local GitHub server: every phase."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fake_github import FakeGitHub
from helpers_github import APP, answer, called, events, git, open_pr, start, state, step, task
from helpers_review import reviewer_doc

from fixloop.core.agent_names import REVIEWER_AGENTS


def seed(github: FakeGitHub) -> list[Any]:
    pr = open_pr(github)
    return [
        pr.add_thread(path="src/app.py", line=2, body="Strip the fields.", author="bob"),
        pr.add_thread(path="src/app.py", line=1, body="Why a comma?", author="carol"),
        pr.add_thread(path="src/app.py", line=1, body="Rename parse to parse_line.", author="bob"),
        pr.add_thread(path="src/app.py", line=2, body="Hmm.", author="dave"),
    ]


def labels(threads: list[Any]) -> dict[str, Any]:
    fix, question, rename, vague = threads
    return {
        "status": "success",
        "agent": "comment-classifier",
        "classifications": [
            {"thread_id": fix.id, "label": "fix", "confidence": 95, "reason": "Fields keep spaces.",
             "suggestion": "Strip each field."},
            {"thread_id": question.id, "label": "answer", "confidence": 90, "reason": "The format is CSV."},
            {"thread_id": rename.id, "label": "disagree", "confidence": 85, "reason": "parse is the API."},
            {"thread_id": vague.id, "label": "fix", "confidence": 40, "reason": "Maybe the split."},
        ],
    }  # fmt: skip


def replies(threads: list[Any], sha: str | None) -> dict[str, Any]:
    named = f"Fixed in {sha[:7]}: fields are stripped." if sha else "Would strip the fields."
    bodies = [named, "The input is CSV.", "parse is public API; keeping it.", "What should change here?"]
    return {
        "status": "success",
        "agent": "reply-writer",
        "replies": [{"thread_id": t.id, "body": body} for t, body in zip(threads, bodies, strict=True)],
    }


def fixer(thread_id: str) -> dict[str, Any]:
    return {
        "status": "success",
        "agent": "review-fixer",
        "results": [{"issue_id": thread_id, "status": "succeeded", "files": ["src/app.py"]}],
        "files_modified": ["src/app.py"],
    }


FIXED_APP = "def parse(line):\n    return [field.strip() for field in line.split(',')]\n"


def test_a_whole_run_fixes_commits_replies_and_reviews(github: FakeGitHub, pr_checkout: Path) -> None:
    threads = seed(github)
    run_id = start(pr_checkout, test_command="python -c 'import src.app'")
    action = step(pr_checkout, run_id)
    assert called(action) == ["comment-classifier"]
    classifier_task = task(pr_checkout, run_id, "comment-classifier")
    assert all(t.id in classifier_task for t in threads) and "Strip the fields." in classifier_task
    assert answer(pr_checkout, run_id, "comment-classifier", labels(threads))["valid"] is True

    action = step(pr_checkout, run_id)
    assert called(action) == ["review-fixer"]
    fixer_task = task(pr_checkout, run_id, "review-fixer")
    assert (
        threads[0].id in fixer_task and threads[3].id not in fixer_task
    )  # the low-confidence fix is unclear
    (pr_checkout / "src" / "app.py").write_text(FIXED_APP)
    assert answer(pr_checkout, run_id, "review-fixer", fixer(threads[0].id))["valid"] is True

    action = step(pr_checkout, run_id)
    assert called(action) == ["reply-writer"]
    head = git(pr_checkout, "rev-parse", "HEAD").strip()
    assert git(pr_checkout, "show", "--name-only", "--format=%s", "HEAD").splitlines() == [
        "Address review comments on #7: src/app.py:2",
        "",
        "src/app.py",
    ]
    assert git(pr_checkout, "status", "--porcelain") == ""
    record = state(pr_checkout, run_id)["pr_review"]
    assert record["fixes"] == {
        threads[0].id: {"status": "committed", "commit": head, "files": ["src/app.py"]}
    }
    assert record["classifications"][threads[3].id]["label"] == "unclear"
    writer_task = task(pr_checkout, run_id, "reply-writer")
    assert head[:7] in writer_task
    refused = answer(pr_checkout, run_id, "reply-writer", replies(threads, "0000000"))
    assert (refused["valid"], refused["retry"], refused["error"]["code"]) == (False, True, "THREADS_MISMATCH")
    assert answer(pr_checkout, run_id, "reply-writer", replies(threads, head))["valid"] is True

    action = step(pr_checkout, run_id)  # phase 6 posts, phase 7 starts the review
    assert called(action) == list(REVIEWER_AGENTS)
    posted = [thread.comments[-1] for thread in threads]
    assert [c.author.login for c in posted] == ["fixloop-bot"] * 4
    assert posted[0].body == (
        f"Fixed in {head[:7]}: fields are stripped.\n\n<!-- fixloop: run {run_id} thread {threads[0].id} -->"
    )
    assert not any(thread.is_resolved for thread in threads)
    for agent in REVIEWER_AGENTS:
        assert answer(pr_checkout, run_id, agent, reviewer_doc(agent))["valid"] is True
    stop = step(pr_checkout, run_id)
    assert stop["action"] == "stop" and stop["status"] == "success"
    final = state(pr_checkout, run_id)
    assert final["changed_files"] == ["src/app.py"] and final["base_ref"] != head
    assert [r["status"] for r in final["phase_results"]] == ["success"] * 8
    assert "Replies posted: 4 (already there: 0); threads resolved: 0; failed: 0." in stop["message"]
    mutations = [r.operation for r in github.graphql_requests() if r.operation == "ReplyToReviewThread"]
    assert len(mutations) == 4
    assert [e["type"] for e in events(pr_checkout, run_id)].count("PHASE_END") == 8
    assert (pr_checkout / "src" / "app.py").read_text() == FIXED_APP != APP


BREAKS = "python -c \"import sys; sys.exit('BROKEN' in open('src/app.py').read())\""


def classify(project: Path, run_id: str, threads: list[Any]) -> None:
    assert called(step(project, run_id)) == ["comment-classifier"]
    assert answer(project, run_id, "comment-classifier", labels(threads))["valid"] is True


def test_a_fix_that_breaks_verification_is_rolled_back(github: FakeGitHub, pr_checkout: Path) -> None:
    threads = seed(github)
    head = git(pr_checkout, "rev-parse", "HEAD")
    run_id = start(pr_checkout, test_command=BREAKS)
    classify(pr_checkout, run_id, threads)
    assert called(step(pr_checkout, run_id)) == ["review-fixer"]
    (pr_checkout / "src" / "app.py").write_text("BROKEN\n")
    (pr_checkout / "src" / "new.py").write_text("x = 1\n")
    assert answer(pr_checkout, run_id, "review-fixer", fixer(threads[0].id))["valid"] is True
    assert called(step(pr_checkout, run_id)) == ["reply-writer"]
    assert (pr_checkout / "src" / "app.py").read_text() == APP
    assert not (pr_checkout / "src" / "new.py").exists()
    assert git(pr_checkout, "rev-parse", "HEAD") == head and git(pr_checkout, "status", "--porcelain") == ""
    record = state(pr_checkout, run_id)["pr_review"]
    why = "verification failed after the fix (tests); the change was rolled back"
    assert record["fixes"] == {threads[0].id: {"status": "rolled_back", "reason": why}}
    assert record["commit"] is None
    writer_task = task(pr_checkout, run_id, "reply-writer")
    assert '"result": "not fixed"' in writer_task and why in writer_task
    phase_4 = state(pr_checkout, run_id)["flow"]["phases"]["4"]["work"]
    assert (
        phase_4["verification:baseline"]["tests"]["status"],
        phase_4["verification:verifying"]["tests"]["status"],
    ) == (
        "passed",
        "failed",
    )
    assert answer(pr_checkout, run_id, "reply-writer", replies(threads, None))["valid"] is True
    stop = step(pr_checkout, run_id)
    assert stop["status"] == "partial"  # phase 4 ended partial; the review had nothing to review
    assert "Warning FIX_ROLLED_BACK: The fix of the review threads was rolled back" in stop["message"]
    assert state(pr_checkout, run_id)["phase_results"][4]["status"] == "partial"


def test_the_classifier_must_label_exactly_the_threads_given(github: FakeGitHub, pr_checkout: Path) -> None:
    threads = seed(github)
    run_id = start(pr_checkout)
    assert called(step(pr_checkout, run_id)) == ["comment-classifier"]
    document = labels(threads)
    document["classifications"][1]["thread_id"] = "PRRT_other"
    refused = answer(pr_checkout, run_id, "comment-classifier", document)
    assert (refused["valid"], refused["retry"], refused["error"]["code"]) == (False, True, "THREADS_MISMATCH")
    assert refused["error"]["violations"] == [
        {"path": "$.classifications", "message": f"no entry for thread {threads[1].id}"},
        {"path": "$.classifications", "message": "thread PRRT_other was not given to you"},
    ]
    for _ in range(2):
        answer(pr_checkout, run_id, "comment-classifier", document)
    # three invalid answers: the batch is left unlabelled, and with it every thread
    stop = step(pr_checkout, run_id)
    assert (stop["status"], stop["reason"]) == ("failed", "CLASSIFIER_FAILED")
    assert (
        "Warning CLASSIFIER_FAILED: The comment classifier gave no valid labels for 4 thread(s)"
        in stop["message"]
    )


def test_a_dry_run_fixes_and_commits_nothing(github: FakeGitHub, pr_checkout: Path) -> None:
    threads = seed(github)
    head = git(pr_checkout, "rev-parse", "HEAD")
    run_id = start(pr_checkout, dry_run=True)
    classify(pr_checkout, run_id, threads)
    assert called(step(pr_checkout, run_id)) == ["reply-writer"]  # no fixer in a dry run
    assert '"result": "dry run"' in task(pr_checkout, run_id, "reply-writer")
    assert state(pr_checkout, run_id)["pr_review"]["fixes"] == {threads[0].id: {"status": "dry_run"}}
    assert answer(pr_checkout, run_id, "reply-writer", replies(threads, None))["valid"] is True
    stop = step(pr_checkout, run_id)
    assert stop["status"] == "dry_run_complete"
    assert (
        git(pr_checkout, "rev-parse", "HEAD") == head and (pr_checkout / "src" / "app.py").read_text() == APP
    )
    assert not any(r.operation == "ReplyToReviewThread" for r in github.graphql_requests())


def test_resolving_threads_and_the_summary_comment_are_opt_in(github: FakeGitHub, pr_checkout: Path) -> None:
    threads = seed(github)
    run_id = start(pr_checkout, pr_resolve_threads=True, pr_post_summary=True)
    classify(pr_checkout, run_id, threads)
    step(pr_checkout, run_id)
    (pr_checkout / "src" / "app.py").write_text(FIXED_APP)
    answer(pr_checkout, run_id, "review-fixer", fixer(threads[0].id))
    step(pr_checkout, run_id)
    head = git(pr_checkout, "rev-parse", "HEAD").strip()
    answer(pr_checkout, run_id, "reply-writer", replies(threads, head))
    assert called(step(pr_checkout, run_id)) == list(REVIEWER_AGENTS)
    assert [t.is_resolved for t in threads] == [True, False, False, False]  # only the committed fix
    for agent in REVIEWER_AGENTS:
        answer(pr_checkout, run_id, agent, reviewer_doc(agent))
    stop = step(pr_checkout, run_id)
    assert stop["status"] == "success"
    (comment,) = github.repo.pull_requests[7].comments
    assert comment.body == (
        "fixloop answered 4 review thread(s) of this pull request.\n"
        f"- Fixed: 1 thread(s), in commit {head[:7]}.\n"
        "- Answered: 1; disagreed: 1; asked to clarify: 1.\n"
        "- Review of the changes: 1 round(s), 0 issue(s) fixed, 0 left.\n\n"
        f"<!-- fixloop: run {run_id} summary -->"
    )
    assert state(pr_checkout, run_id)["pr_review"]["summary_comment"]["found"] is False
    operations = [r.operation for r in github.graphql_requests()]
    assert operations.count("ResolveReviewThread") == 1 and operations.count("CommentCreate") == 1


def test_a_refused_commit_leaves_the_fix_in_the_working_tree(github: FakeGitHub, pr_checkout: Path) -> None:
    threads = seed(github)
    hook = pr_checkout / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint says no' >&2\nexit 1\n")
    hook.chmod(0o755)
    head = git(pr_checkout, "rev-parse", "HEAD")
    run_id = start(pr_checkout)
    classify(pr_checkout, run_id, threads)
    step(pr_checkout, run_id)
    (pr_checkout / "src" / "app.py").write_text(FIXED_APP)
    answer(pr_checkout, run_id, "review-fixer", fixer(threads[0].id))
    assert called(step(pr_checkout, run_id)) == ["reply-writer"]
    assert git(pr_checkout, "rev-parse", "HEAD") == head
    assert (pr_checkout / "src" / "app.py").read_text() == FIXED_APP
    fix = state(pr_checkout, run_id)["pr_review"]["fixes"][threads[0].id]
    assert fix["status"] == "uncommitted" and "lint says no" in fix["reason"]
