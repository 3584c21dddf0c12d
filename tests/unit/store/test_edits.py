"""Rolling back an editing agent's recorded edits: exactly those, never the user's, never outside."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers_runs import git
from helpers_touches import agent_writes

from fixloop.store import edits, touches


@pytest.fixture
def run_dir(git_project: Path) -> Path:
    return git_project / ".claude" / "fixloop" / "runs" / "r1"


@pytest.fixture
def begun(git_project: Path, run_dir: Path) -> dict[str, Any]:
    return edits.begin(git_project, run_dir, "round-1", ["src/app.py"])


def codes(report: edits.RollbackReport) -> dict[str, list[str]]:
    return {warning["code"]: warning["files"] for warning in report["warnings"]}


def test_begin_snapshots_and_opens_the_window(
    git_project: Path, run_dir: Path, begun: dict[str, Any]
) -> None:
    assert (begun["run_dir"], begun["touches"], begun["dir"]) == (
        str(run_dir),
        "round-1",
        str(run_dir / "snapshots" / "round-1"),
    )
    window = touches.active_window(run_dir)
    assert window is not None and window["label"] == "round-1" and window["baseline"]["dir"] == begun["dir"]
    edits.end(begun)
    assert touches.active_window(run_dir) is None
    assert edits.changed_since(begun) == []


def test_edited_files_are_restored_and_created_ones_deleted(
    git_project: Path, run_dir: Path, begun: dict[str, Any]
) -> None:
    os.chmod(git_project / "src" / "app.py", 0o755)
    begun = edits.begin(git_project, run_dir, "round-1", ["src/app.py"])
    agent_writes(git_project, run_dir, "src/app.py", "BROKEN\n")
    agent_writes(git_project, run_dir, "src/app.py", "BROKEN twice\n")
    agent_writes(git_project, run_dir, "pkg/sub/new.py", "new\n")
    report = edits.rollback(begun)
    assert (git_project / "src" / "app.py").read_text() == "print('hi')\n"
    assert (git_project / "src" / "app.py").stat().st_mode & 0o777 == 0o755
    assert not (git_project / "pkg").exists()  # the folders the new file needed went with it
    assert report == {
        "label": "round-1",
        "restored": ["src/app.py"],
        "deleted": ["pkg/sub/new.py"],
        "kept": [],
        "refused": [],
        "left_as_is": [],
        "warnings": [],
    }
    assert touches.active_window(run_dir) is None


def test_a_new_folder_that_holds_a_users_file_stays(
    git_project: Path, run_dir: Path, begun: dict[str, Any]
) -> None:
    agent_writes(git_project, run_dir, "pkg/new.py", "new\n")
    (git_project / "pkg" / "mine.txt").write_text("the user's\n")
    report = edits.rollback(begun)
    assert sorted(path.name for path in (git_project / "pkg").iterdir()) == ["mine.txt"]
    assert (report["deleted"], report["left_as_is"]) == (["pkg/new.py"], ["pkg/mine.txt"])


def test_a_file_the_user_changed_after_the_agent_keeps_the_users_version(
    git_project: Path, run_dir: Path, begun: dict[str, Any]
) -> None:
    agent_writes(git_project, run_dir, "src/app.py", "BROKEN\n")
    (git_project / "src" / "app.py").write_text("BROKEN, then the user's fix\n")
    agent_writes(git_project, run_dir, "src/new.py", "new\n")
    (git_project / "src" / "new.py").write_text("new, and the user's line\n")
    report = edits.rollback(begun)
    assert (git_project / "src" / "app.py").read_text() == "BROKEN, then the user's fix\n"
    assert (git_project / "src" / "new.py").read_text() == "new, and the user's line\n"
    assert (report["restored"], report["deleted"]) == ([], [])
    assert [(kept["path"], kept["code"]) for kept in report["kept"]] == [
        ("src/app.py", "ROLLBACK_KEPT_USER_EDIT"),
        ("src/new.py", "ROLLBACK_KEPT_USER_EDIT"),
    ]
    assert [(w["code"], w["files"]) for w in report["warnings"]] == [
        ("ROLLBACK_KEPT_USER_EDIT", ["src/app.py"]),
        ("ROLLBACK_KEPT_USER_EDIT", ["src/new.py"]),
    ]


def test_a_user_edit_between_two_agent_edits_is_kept(
    git_project: Path, run_dir: Path, begun: dict[str, Any]
) -> None:
    agent_writes(git_project, run_dir, "src/app.py", "agent 1\n")
    (git_project / "src" / "app.py").write_text("agent 1\nuser\n")
    agent_writes(git_project, run_dir, "src/app.py", "agent 1\nuser\nagent 2\n")
    report = edits.rollback(begun)
    assert (git_project / "src" / "app.py").read_text() == "agent 1\nuser\nagent 2\n"
    assert codes(report) == {"ROLLBACK_KEPT_USER_EDIT": ["src/app.py"]}


def test_changes_without_a_recorded_write_are_left_as_is(
    git_project: Path, run_dir: Path, begun: dict[str, Any]
) -> None:
    # A touch whose write never completed (the tool was refused), then a Bash command changed the file;
    # another file changed by Bash only; an ignored file the snapshot cannot see stays unnamed.
    window = touches.active_window(run_dir)
    call: dict[str, Any] = {
        "cwd": None,
        "agent_type": "fixloop:review-fixer",
        "agent": "review-fixer",
        "agent_id": "a1",
        "tool": "Edit",
        "tool_use_id": "t1",
        "ts_ms": 1,
    }
    touches.note(run_dir, "touch", window, str(git_project), str(git_project / "src" / "app.py"), **call)
    (git_project / "src" / "app.py").write_text("sed -i by the agent\n")
    (git_project / "README.md").write_text("# demo, reformatted by a command\n")
    (git_project / "build.log").write_text("ignored\n")
    report = edits.rollback(begun)
    assert (git_project / "src" / "app.py").read_text() == "sed -i by the agent\n"
    assert (git_project / "README.md").read_text() == "# demo, reformatted by a command\n"
    assert report["left_as_is"] == ["README.md", "src/app.py"]
    assert codes(report) == {"ROLLBACK_LEFT_AS_IS": ["README.md", "src/app.py"]}
    (warning,) = report["warnings"]
    assert warning["message"].startswith("2 file(s) changed without a recorded Edit/Write of the agent")


def test_a_touch_that_resolves_through_a_new_symlink_is_refused(
    git_project: Path, run_dir: Path, begun: dict[str, Any]
) -> None:
    agent_writes(git_project, run_dir, "src/app.py", "BROKEN\n")
    # Then a command moves the folder away and puts a link in its place.
    shutil.move(git_project / "src", git_project / "moved")
    (git_project / "src").symlink_to("moved")
    report = edits.rollback(begun)
    assert (git_project / "moved" / "app.py").read_text() == "BROKEN\n"
    (refused,) = report["refused"]
    assert (refused["path"], refused["code"]) == ("src/app.py", "ROLLBACK_REFUSED")
    assert "a symbolic link now stands in its path" in refused["reason"]
    assert report["restored"] == []


def test_a_link_that_now_leads_outside_is_refused(
    git_project: Path, run_dir: Path, begun: dict[str, Any], tmp_path: Path
) -> None:
    agent_writes(git_project, run_dir, "pkg/new.py", "new\n")
    shutil.rmtree(git_project / "pkg")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "new.py").write_text("new\n")  # the same content, outside the project
    (git_project / "pkg").symlink_to(tmp_path / "elsewhere")
    report = edits.rollback(begun)
    assert (tmp_path / "elsewhere" / "new.py").read_text() == "new\n"
    (refused,) = report["refused"]
    assert refused["path"] == "pkg/new.py" and "resolves outside the project" in refused["reason"]


def test_a_touch_whose_prior_was_not_kept_stays_as_it_is(
    git_project: Path, run_dir: Path, begun: dict[str, Any]
) -> None:
    agent_writes(git_project, run_dir, "src/app.py", "BROKEN\n")
    shutil.rmtree(run_dir / "touches" / "round-1" / "priors")
    report = edits.rollback(begun)
    assert (git_project / "src" / "app.py").read_text() == "BROKEN\n"
    assert codes(report) == {"ROLLBACK_NO_PRIOR": ["src/app.py"]}


def test_a_change_begun_without_a_window_rolls_nothing_back(git_project: Path, run_dir: Path) -> None:
    from fixloop.store import snapshot

    old = snapshot.take(git_project, run_dir / "snapshots" / "round-1", ["src/app.py"])
    (git_project / "src" / "app.py").write_text("BROKEN\n")
    report = edits.rollback(old)
    assert (git_project / "src" / "app.py").read_text() == "BROKEN\n"
    assert (report["label"], codes(report)) == (None, {"ROLLBACK_NO_TOUCHES": []})


def test_an_unchanged_touched_file_needs_nothing(
    git_project: Path, run_dir: Path, begun: dict[str, Any]
) -> None:
    agent_writes(git_project, run_dir, "src/app.py", "print('hi')\n")
    report = edits.rollback(begun)
    assert (report["restored"], report["warnings"]) == ([], [])


def test_outside_git_the_recorded_edits_are_undone_too(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    (project / "a.txt").write_text("a\n")
    run_dir = project / ".claude" / "fixloop" / "runs" / "r1"
    begun = edits.begin(project, run_dir, "round-1")
    assert begun["kind"] == "files"
    agent_writes(project, run_dir, "a.txt", "changed\n")
    (project / "b.txt").write_text("the user's\n")
    report = edits.rollback(begun)
    assert (project / "a.txt").read_text() == "a\n"
    assert (project / "b.txt").read_text() == "the user's\n"
    assert (report["restored"], report["left_as_is"]) == (["a.txt"], [])


def test_a_commit_of_the_agents_edit_is_still_undone_in_the_work_tree(
    git_project: Path, run_dir: Path, begun: dict[str, Any]
) -> None:
    agent_writes(git_project, run_dir, "src/app.py", "BROKEN\n")
    git(git_project, "commit", "-q", "-am", "the agent committed")
    report = edits.rollback(begun)
    assert (git_project / "src" / "app.py").read_text() == "print('hi')\n"
    assert report["restored"] == ["src/app.py"]
