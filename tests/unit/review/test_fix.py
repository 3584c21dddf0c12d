"""The review-fixer's step: counts, files, a fixer that fails, and rolling back its edits on a project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers_review import (
    CR,
    A,
    B,
    C,
    Loop,
    fixer_doc,
    issue,
    open_review,
)
from helpers_runs import FakeClock, git
from helpers_touches import agent_writes
from workflows.flow_helpers import (
    CHANGED_APP,
    FIXABLE,
    agents_of,
    events,
    next_action,
    record_valid,
    review_project,
    review_round,
    start,
    state,
)

from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS
from fixloop.store import layout


def test_fixer_failure_still_goes_to_verification() -> None:
    loop = open_review(use_verifier=False)
    loop.review({CR: [A]})
    assert loop.next()["action"] == "fix"
    doc = loop.next()  # the fixer recorded nothing
    assert doc["action"] == "verify"
    failure = loop.of_type("AGENT_FAILURE")[-1]
    assert (failure["agent"], failure["error_code"]) == ("review-fixer", "NULL_RESPONSE")
    assert loop.review_doc["rounds"][0]["fix"]["result"] == {"attempted": 0, "succeeded": 0, "failed": 0}


def test_fix_counts_and_files() -> None:
    loop = open_review(use_verifier=False)
    loop.review({CR: [A, B, C]})
    loop.next()
    loop.effects.changed = ["src/app.py", "src/new.py"]
    loop.record("review-fixer", fixer_doc({"FL-001": "succeeded", "FL-002": "failed", "FL-003": "skipped"}))
    loop.next()
    fix = loop.review_doc["rounds"][0]["fix"]
    assert fix["result"] == {"attempted": 2, "succeeded": 1, "failed": 1}
    assert fix["files_modified"] == ["src/app.py", "src/new.py"]
    end = loop.of_type("REVIEW_FIX_ITERATION")[-1]
    assert end["remaining"] == 2
    # the next round reviews the new file too
    loop.verify(True)
    assert loop.next()["task"]["task_desc"].endswith("review 2 changed file(s).")


def failed_round(loop: Loop) -> None:
    loop.review({CR: [A]})
    loop.next()
    loop.record("review-fixer", fixer_doc({"FL-001": "succeeded"}))
    loop.next()
    loop.verify(False)
    assert loop.next()["action"] == "ask_user"


def test_a_rollback_keeps_its_report_in_the_round_and_warns_of_every_file_it_left() -> None:
    loop = open_review(use_verifier=False)
    failed_round(loop)
    report = {
        "label": "round-1",
        "restored": ["src/app.py"],
        "deleted": ["src/new.py"],
        "kept": [{"path": "README.md", "code": "ROLLBACK_KEPT_USER_EDIT", "reason": "changed after"}],
        "refused": [],
        "left_as_is": ["notes.txt"],
        "warnings": [
            {
                "code": "ROLLBACK_KEPT_USER_EDIT",
                "message": "README.md: changed after.",
                "files": ["README.md"],
            },
            {"code": "ROLLBACK_LEFT_AS_IS", "message": "1 file(s) changed ...", "files": ["notes.txt"]},
        ],
    }
    loop.effects.rollback = lambda snapshot: report  # type: ignore[method-assign]
    chosen = loop.choose("rollback")
    assert chosen["restored_files"] == ["src/app.py", "src/new.py"]
    rnd = loop.review_doc["rounds"][0]
    assert (rnd["rolled_back"], rnd["rollback_files"], rnd["rollback"]) == (
        True,
        ["src/app.py", "src/new.py"],
        report,
    )
    assert loop.of_type("WARNING") == [
        {
            "code": "ROLLBACK_KEPT_USER_EDIT",
            "message": "Rollback of round 1: README.md: changed after.",
            "iteration": 1,
            "files": ["README.md"],
        },
        {
            "code": "ROLLBACK_LEFT_AS_IS",
            "message": "Rollback of round 1: 1 file(s) changed ...",
            "iteration": 1,
            "files": ["notes.txt"],
        },
    ]


def test_a_round_without_a_snapshot_restores_nothing_and_says_so() -> None:
    loop = open_review(use_verifier=False)
    failed_round(loop)
    loop.review_doc["rounds"][0]["fix"]["snapshot"] = None
    assert loop.choose("rollback")["restored_files"] == []
    assert loop.effects.rollbacks == []
    (warning,) = loop.of_type("WARNING")
    assert (warning["code"], warning["iteration"]) == ("NO_SNAPSHOT", 1)


# ---- rolling a fix back after a failed verification, on a real project --------------------------------

CHECK_APP = "! grep -q BROKEN src/app.py"  # the project's tests: they fail once the fixer breaks the app


def fix_round(root: Path, issues: list[dict[str, Any]] | None = None) -> tuple[str, Path]:
    """A review run of the change to src/app.py (unattended: a failed verification rolls the fix back), at
    its fix dispatch: (run id, run directory)."""
    review_project(root, test_command=CHECK_APP, use_verifier=False)
    run_id = start(root)
    assert agents_of(next_action(run_id)) == list(REVIEWER_AGENTS)
    review_round(run_id, {CR: issues or [FIXABLE]})
    assert agents_of(next_action(run_id)) == [FIXER_AGENT]
    return run_id, Path(layout.run_dir(root, run_id))


def fixer_answers_and_verification_fails(root: Path, run_id: str) -> dict[str, Any]:
    """The fixer reports success; `next` runs the verification, which fails, and takes the configured
    default (rollback). The run's first review round."""
    record_valid(run_id, FIXER_AGENT, fixer_doc({"FL-001": "succeeded"}))
    assert next_action(run_id)["action"] == "stop"
    rnd: dict[str, Any] = state(root, run_id)["review"]["rounds"][0]
    assert (rnd["verification_passed"], rnd["choice"], rnd["rolled_back"]) == (False, "rollback", True)
    return rnd


def rollback_warnings(root: Path, run_id: str) -> dict[str, list[str]]:
    return {
        event["code"]: event["files"]
        for event in events(root, run_id, "WARNING")
        if str(event["code"]).startswith("ROLLBACK_")
    }


def test_rollback_keeps_what_the_user_changed_while_the_fixer_worked(
    git_project: Path, fake_clock: FakeClock
) -> None:
    run_id, run_dir = fix_round(git_project)
    agent_writes(git_project, run_dir, "src/app.py", "BROKEN\n")
    (git_project / "README.md").write_text("# demo\nthe user's edit, made while the fixer worked\n")
    (git_project / "notes").mkdir()
    (git_project / "notes" / "todo.txt").write_text("the user's new file\n")
    rnd = fixer_answers_and_verification_fails(git_project, run_id)
    assert (git_project / "src" / "app.py").read_text() == CHANGED_APP
    assert (git_project / "README.md").read_text() == "# demo\nthe user's edit, made while the fixer worked\n"
    assert (git_project / "notes" / "todo.txt").read_text() == "the user's new file\n"
    assert rnd["rollback_files"] == ["src/app.py"]
    assert rnd["rollback"]["left_as_is"] == ["README.md", "notes/todo.txt"]
    assert rollback_warnings(git_project, run_id) == {"ROLLBACK_LEFT_AS_IS": ["README.md", "notes/todo.txt"]}


def test_rollback_restores_a_git_ignored_file_the_fixer_edited(
    git_project: Path, fake_clock: FakeClock
) -> None:
    (git_project / "local.log").write_text("the user's ignored settings\n")
    run_id, run_dir = fix_round(git_project)
    agent_writes(git_project, run_dir, "local.log", "rewritten by the fixer\n")
    agent_writes(git_project, run_dir, "src/app.py", "BROKEN\n")
    rnd = fixer_answers_and_verification_fails(git_project, run_id)
    assert (git_project / "local.log").read_text() == "the user's ignored settings\n"
    assert (git_project / "src" / "app.py").read_text() == CHANGED_APP
    assert rnd["rollback_files"] == ["local.log", "src/app.py"]
    assert rollback_warnings(git_project, run_id) == {}


def test_rollback_restores_a_write_through_a_committed_symlink(
    git_project: Path, fake_clock: FakeClock
) -> None:
    (git_project / ".gitignore").write_text("*.log\nprivate/\n")
    (git_project / "private").mkdir()
    (git_project / "private" / "app.cfg").write_text("setting = 1\n")
    (git_project / "conf").symlink_to("private")
    git(git_project, "add", ".gitignore", "conf")
    git(git_project, "commit", "-q", "-m", "settings through a link")
    run_id, run_dir = fix_round(git_project)
    agent_writes(git_project, run_dir, "conf/app.cfg", "setting = 2\n")
    agent_writes(git_project, run_dir, "src/app.py", "BROKEN\n")
    rnd = fixer_answers_and_verification_fails(git_project, run_id)
    assert (git_project / "private" / "app.cfg").read_text() == "setting = 1\n"
    assert (git_project / "conf").is_symlink()
    assert rnd["rollback_files"] == ["private/app.cfg", "src/app.py"]


def test_rollback_never_touches_a_file_outside_the_project_through_a_committed_symlink(
    git_project: Path, tmp_path: Path, fake_clock: FakeClock
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (git_project / "ext").symlink_to(outside)
    git(git_project, "add", "ext")
    git(git_project, "commit", "-q", "-m", "an external folder")
    # A reviewer's issue names a file through the link; the fix round snapshots the files its issues name.
    run_id, run_dir = fix_round(
        git_project, [FIXABLE, issue("CR-2", 1, "Data is stale", file="ext/data.txt")]
    )
    (outside / "data.txt").write_text("written outside the project while the fixer worked\n")
    agent_writes(git_project, run_dir, "ext/other.txt", "the fixer's write through the link\n")
    agent_writes(git_project, run_dir, "src/app.py", "BROKEN\n")
    rnd = fixer_answers_and_verification_fails(git_project, run_id)
    assert (outside / "data.txt").read_text() == "written outside the project while the fixer worked\n"
    assert (outside / "other.txt").read_text() == "the fixer's write through the link\n"
    assert (git_project / "src" / "app.py").read_text() == CHANGED_APP
    assert rnd["rollback_files"] == ["src/app.py"]
    (refused,) = rnd["rollback"]["refused"]
    assert (refused["path"], refused["code"]) == (str(outside.resolve() / "other.txt"), "ROLLBACK_REFUSED")
    assert rollback_warnings(git_project, run_id) == {
        "ROLLBACK_REFUSED": [str(outside.resolve() / "other.txt")]
    }
