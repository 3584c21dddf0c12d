"""Incremental review: `--since REF`, the branch's last ended review, and the full diff after a rebase or
force-push. Uncommitted changes are always part of the review."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers_runs import FakeClock, git, read_events

from fixloop.core.errors import FixloopError
from fixloop.runs import ending
from fixloop.runs.command_start import prompt_path, start_command, started_text
from fixloop.runs.reviewed import reviewed_path

SESSION = "sess-9"
ENV = {"CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_CODE_SESSION_ATTENDED": "0"}


def commit(root: Path, name: str, text: str, message: str) -> str:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(root, "add", name)
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def review(root: Path, words: str = "", clock: FakeClock | None = None) -> dict[str, Any]:
    """Start `/fixloop:review WORDS` as the slash command does; the run's state."""
    path = prompt_path(root, SESSION)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"prompt": f"/fixloop:review {words}".strip(), "prompt_id": "p", "ts_ms": 1}))
    return start_command(root, "review", ENV, clock=clock or FakeClock())


def events_of(state: dict[str, Any]) -> list[dict[str, Any]]:
    return read_events(state["logging"]["log_files"]["jsonl"])


def base_event(state: dict[str, Any]) -> dict[str, Any]:
    found = [event for event in events_of(state) if event.get("data_type") == "review_base"]
    assert len(found) == 1
    summary: dict[str, Any] = found[0]["summary"]
    return summary


@pytest.fixture
def feature(git_project: Path) -> Iterator[Path]:
    """main: init, then a README change after the fork; feature: two commits on src/."""
    git(git_project, "checkout", "-q", "-b", "feature")
    commit(git_project, "src/one.py", "one\n", "one")
    commit(git_project, "src/two.py", "two\n", "two")
    git(git_project, "checkout", "-q", "main")
    commit(git_project, "README.md", "# moved on\n", "main moves on")
    git(git_project, "checkout", "-q", "feature")
    yield git_project


def test_since_a_commit_reviews_what_changed_after_it_and_the_uncommitted_changes(feature: Path) -> None:
    first = git(feature, "rev-parse", "HEAD~1").strip()
    (feature / "notes.txt").write_text("untracked\n")
    state = review(feature, f"--since {first}")
    assert state["changed_files"] == ["notes.txt", "src/two.py"]
    assert state["base_ref"] == first
    base = state["review_base"]
    assert (base["reason"], base["since"], base["diff_base"], base["branch"]) == (
        "since",
        first,
        first,
        "feature",
    )
    assert (
        base["message"] == f"Reviewing the changes since {first} ({first[:12]}) and the uncommitted changes."
    )
    assert started_text(state).endswith(base["message"])
    assert base_event(state)["reason"] == "since"


def test_since_a_branch_reviews_from_where_this_branch_forked(feature: Path) -> None:
    fork = git(feature, "merge-base", "main", "HEAD").strip()
    state = review(feature, "--since main")
    # README.md changed on main after the fork: not this branch's change, so not reviewed
    assert state["changed_files"] == ["src/one.py", "src/two.py"]
    assert state["base_ref"] == fork
    base = state["review_base"]
    assert (base["reason"], base["since"], base["base_branch"]) == ("since", "main", "main")
    assert f"merge base {fork[:12]}" in base["message"]


def test_since_what_names_no_commit_is_refused(feature: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        review(feature, "--since no-such-branch")
    assert caught.value.code == "INVALID_GIT_BASE"


def test_since_and_paths_together_are_refused(feature: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        review(feature, "--since main src")
    assert caught.value.code == "CONFLICTING_ARGUMENTS"


def test_a_first_review_of_a_branch_is_the_full_diff_against_its_base(feature: Path) -> None:
    fork = git(feature, "merge-base", "main", "HEAD").strip()
    state = review(feature)
    assert state["changed_files"] == ["src/one.py", "src/two.py"]
    base = state["review_base"]
    assert (base["reason"], base["base_branch"], base["diff_base"]) == ("merge_base", "main", fork)
    assert base["message"].startswith("No earlier fixloop review of branch feature.")


def test_the_next_review_covers_only_what_changed_since_the_last_ended_one(feature: Path) -> None:
    first = review(feature)
    reviewed_at = git(feature, "rev-parse", "HEAD").strip()
    ending.end_run(feature, first["run_id"], "partial")
    commit(feature, "src/three.py", "three\n", "three")
    (feature / "src" / "one.py").write_text("edited, not committed\n")

    second = review(feature)
    assert second["changed_files"] == ["src/one.py", "src/three.py"]
    base = second["review_base"]
    assert (base["reason"], base["diff_base"], base["last_review_run"]) == (
        "last_review",
        reviewed_at,
        first["run_id"],
    )
    assert started_text(second).endswith(
        f"Reviewing the changes since the last fixloop review of branch feature (run {first['run_id']}, "
        f"commit {reviewed_at[:12]}) and the uncommitted changes."
    )
    stored = json.loads(reviewed_path(feature).read_text())
    assert stored["branches"]["feature"]["commit"] == reviewed_at
    assert list(stored["started"]) == [second["run_id"]]


@pytest.mark.parametrize("status", ["failed", "user_cancelled", None])
def test_a_review_that_failed_was_cancelled_or_still_runs_does_not_count(
    feature: Path, status: str | None
) -> None:
    first = review(feature)
    if status is not None:
        ending.end_run(feature, first["run_id"], status)
    commit(feature, "src/three.py", "three\n", "three")
    second = review(feature)
    assert second["review_base"]["reason"] == "merge_base"
    assert second["changed_files"] == ["src/one.py", "src/three.py", "src/two.py"]


def test_after_a_force_push_the_stored_commit_falls_back_to_the_full_diff(feature: Path) -> None:
    first = review(feature)
    old_head = git(feature, "rev-parse", "HEAD").strip()
    ending.end_run(feature, first["run_id"], "partial")
    # rewrite the branch: drop its last commit and commit something else instead
    git(feature, "reset", "-q", "--hard", "HEAD~1")
    commit(feature, "src/rewritten.py", "new\n", "rewritten")
    fork = git(feature, "merge-base", "main", "HEAD").strip()

    second = review(feature)
    assert second["changed_files"] == ["src/one.py", "src/rewritten.py"]
    base = second["review_base"]
    assert (base["reason"], base["diff_base"], base["base_branch"]) == ("history_rewritten", fork, "main")
    assert base["message"] == (
        f"The commit of the last review of branch feature ({old_head[:12]}, run {first['run_id']}) is no "
        f"longer in its history (rebased or force-pushed). Reviewing the full diff against main (merge base "
        f"{fork[:12]}) and the uncommitted changes."
    )
    warnings = [event for event in events_of(second) if event["type"] == "WARNING"]
    assert [(event["code"], event["message"]) for event in warnings] == [
        ("REVIEW_BASE_RESET", base["message"])
    ]


def test_without_a_base_branch_a_review_of_main_is_the_uncommitted_changes(git_project: Path) -> None:
    (git_project / "src" / "app.py").write_text("changed\n")
    state = review(git_project)
    assert state["changed_files"] == ["src/app.py"]
    assert state["base_ref"] == "HEAD"
    base = state["review_base"]
    assert (base["reason"], base["diff_base"], base["branch"]) == ("head", "", "main")
    assert "No base branch found" in base["message"]


def test_a_detached_head_is_reviewed_against_its_base_branch(feature: Path) -> None:
    git(feature, "checkout", "-q", "--detach", "HEAD")
    state = review(feature)
    assert state["review_base"]["reason"] == "merge_base"
    assert state["review_base"]["branch"] is None
    assert state["changed_files"] == ["src/one.py", "src/two.py"]
    assert not reviewed_path(feature).exists()  # no branch to remember the review of


def test_an_unreadable_reviewed_file_only_makes_the_review_fuller(feature: Path) -> None:
    first = review(feature)
    ending.end_run(feature, first["run_id"], "partial")
    reviewed_path(feature).write_text("{not json")
    assert review(feature)["review_base"]["reason"] == "merge_base"
