"""Snapshots and rollbacks on real git work trees (and outside git)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers_runs import git, sha256_tree

from fixloop.core.errors import FixloopError
from fixloop.store import snapshot


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with committed files, and a user's own uncommitted work on top."""
    for name in list(os.environ):
        if name.startswith("GIT_"):
            monkeypatch.delenv(name)
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "src" / "app.py").write_text("def app():\n    return 1\n")
    (root / "src" / "util.py").write_text("def util():\n    return 2\n")
    (root / "src" / "gone.py").write_text("old = True\n")
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    os.chmod(root / "run.sh", 0o755)
    (root / ".gitignore").write_text("*.log\n.claude/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    # the user's own uncommitted work
    (root / "src" / "util.py").write_text("def util():\n    return 3  # user edit\n")
    (root / "notes.txt").write_text("user notes, untracked\n")
    (root / "src" / "staged.py").write_text("staged = 1\n")
    git(root, "add", "src/staged.py")
    (root / "src" / "gone.py").unlink()  # the user deleted it
    (root / "debug.log").write_text("ignored\n")
    return root.resolve()


def digest(root: Path) -> dict[str, str]:
    return {
        str(Path(path).relative_to(root)): value
        for path, value in sha256_tree(root).items()
        if "/.git/" not in path and "/snap/" not in path
    }


def test_snapshot_records_only_dirty_files(repo: Path, tmp_path: Path) -> None:
    snap = snapshot.take(repo, tmp_path / "snap", [])
    assert snap["kind"] == "git"
    manifest = snapshot.load_manifest(snap)
    assert sorted(manifest["entries"]) == ["notes.txt", "src/gone.py", "src/staged.py", "src/util.py"]
    assert manifest["entries"]["src/gone.py"]["kind"] == "absent"
    assert (
        tmp_path / "snap" / "files" / "src" / "util.py"
    ).read_text() == "def util():\n    return 3  # user edit\n"
    assert snapshot.changed_since(snap) == []


def test_rollback_restores_exactly_the_fixer_changes_and_keeps_user_edits(repo: Path, tmp_path: Path) -> None:
    before = digest(repo)
    snap = snapshot.take(repo, tmp_path / "snap", ["src/app.py"])
    # the fixer: edits a clean file, edits a user-edited file, creates one, deletes a clean tracked one,
    # and recreates the file the user had deleted
    (repo / "src" / "app.py").write_text("def app():\n    return 10\n")
    (repo / "src" / "util.py").write_text("def util():\n    return 3  # user edit, then fixer\n")
    (repo / "src" / "helper.py").write_text("new = 1\n")
    (repo / "run.sh").unlink()
    (repo / "src" / "gone.py").write_text("back\n")
    assert snapshot.changes_since(snap) == {
        "run.sh": "deleted",
        "src/app.py": "modified",
        "src/gone.py": "created",
        "src/helper.py": "created",
        "src/util.py": "modified",
    }
    # meanwhile the user changes an ignored file: not ours to touch
    (repo / "debug.log").write_text("still ignored\n")
    restored = snapshot.rollback(snap)
    assert restored == ["run.sh", "src/app.py", "src/gone.py", "src/helper.py", "src/util.py"]
    after = digest(repo)
    after.pop("debug.log")
    before.pop("debug.log")
    assert after == before
    assert (repo / "src" / "util.py").read_text() == "def util():\n    return 3  # user edit\n"
    assert os.stat(repo / "run.sh").st_mode & 0o111  # executable again
    assert not (repo / "src" / "gone.py").exists()
    assert (repo / "debug.log").read_text() == "still ignored\n"
    assert snapshot.changed_since(snap) == []
    status = git(repo, "status", "--porcelain")
    assert "A  src/staged.py" in status  # the user's staged file is still staged


def test_untouched_user_edits_are_not_part_of_the_change_set(repo: Path, tmp_path: Path) -> None:
    snap = snapshot.take(repo, tmp_path / "snap", [])
    (repo / "src" / "app.py").write_text("changed by the fixer\n")
    assert snapshot.changed_since(snap) == ["src/app.py"]
    snapshot.rollback(snap)
    assert (repo / "notes.txt").read_text() == "user notes, untracked\n"
    assert (repo / "src" / "util.py").read_text() == "def util():\n    return 3  # user edit\n"
    assert (repo / "src" / "app.py").read_text() == "def app():\n    return 1\n"


def test_fixloop_own_files_are_never_rolled_back(repo: Path, tmp_path: Path) -> None:
    (repo / ".gitignore").write_text("*.log\n")  # .claude/ no longer ignored
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "track .claude")
    state = repo / ".claude" / "fixloop" / "runs" / "abcd1234" / "state.json"
    state.parent.mkdir(parents=True)
    state.write_text("{}")
    snap = snapshot.take(repo, state.parent / "snapshots" / "round-1", [])
    state.write_text('{"changed": true}')
    (repo / ".claude" / "logs" / "fixloop").mkdir(parents=True)
    (repo / ".claude" / "logs" / "fixloop" / "x.jsonl").write_text("{}\n")
    assert snapshot.changed_since(snap) == []
    assert snapshot.rollback(snap) == []
    assert state.read_text() == '{"changed": true}'


def test_a_commit_by_the_fixer_is_still_rolled_back(repo: Path, tmp_path: Path) -> None:
    snap = snapshot.take(repo, tmp_path / "snap", [])
    (repo / "src" / "app.py").write_text("committed by the fixer\n")
    git(repo, "add", "src/app.py")
    git(repo, "commit", "-q", "-m", "fixer commit")
    assert snapshot.changed_since(snap) == ["src/app.py"]
    snapshot.rollback(snap)
    assert (repo / "src" / "app.py").read_text() == "def app():\n    return 1\n"


def test_project_in_a_subfolder_of_the_repository(repo: Path, tmp_path: Path) -> None:
    project = repo / "src"
    snap = snapshot.take(project, tmp_path / "snap", [])
    assert sorted(snapshot.load_manifest(snap)["entries"]) == ["gone.py", "staged.py", "util.py"]
    (project / "app.py").write_text("x\n")
    (repo / "run.sh").write_text("outside the project\n")
    assert snapshot.changed_since(snap) == ["app.py"]
    assert snapshot.rollback(snap) == ["app.py"]
    assert (repo / "run.sh").read_text() == "outside the project\n"


def test_named_ignored_file_is_snapshotted(repo: Path, tmp_path: Path) -> None:
    snap = snapshot.take(repo, tmp_path / "snap", ["debug.log", "build/out.log"])
    (repo / "debug.log").write_text("changed\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.log").write_text("created\n")
    assert snapshot.changes_since(snap) == {"build/out.log": "created", "debug.log": "modified"}
    snapshot.rollback(snap)
    assert (repo / "debug.log").read_text() == "ignored\n"
    assert not (repo / "build" / "out.log").exists()


def test_outside_git_only_named_files_are_tracked(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    (project / "a.py").write_text("a\n")
    (project / "b.py").write_text("b\n")
    snap = snapshot.take(project, tmp_path / "snap", ["a.py", "new.py"])
    assert snap["kind"] == "files"
    (project / "a.py").write_text("changed\n")
    (project / "new.py").write_text("created\n")
    (project / "b.py").write_text("not named: not tracked\n")
    assert snapshot.changes_since(snap) == {"a.py": "modified", "new.py": "created"}
    assert snapshot.rollback(snap) == ["a.py", "new.py"]
    assert (project / "a.py").read_text() == "a\n"
    assert not (project / "new.py").exists()
    assert (project / "b.py").read_text() == "not named: not tracked\n"


def test_missing_snapshot_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as missing:
        snapshot.changed_since({"dir": str(tmp_path / "nowhere")})
    assert missing.value.code == "SNAPSHOT_MISSING"


def test_a_named_file_through_a_link_out_of_the_project_is_never_recorded_nor_written(
    repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "ext").symlink_to(outside)
    git(repo, "add", "ext")
    git(repo, "commit", "-q", "-m", "a link out")
    snap = snapshot.take(repo, tmp_path / "snap", ["ext/data.txt", "src/app.py"])
    assert "ext/data.txt" not in snapshot.load_manifest(snap)["entries"]
    (outside / "data.txt").write_text("someone else's file\n")
    (repo / "src" / "app.py").write_text("changed\n")
    # The link itself now points elsewhere, and a file appears behind it.
    (repo / "ext").unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / "ext").symlink_to(elsewhere)
    assert snapshot.rollback(snap) == ["ext", "src/app.py"]
    assert (outside / "data.txt").read_text() == "someone else's file\n"
    assert os.readlink(repo / "ext") == str(outside)  # the link itself is the project's, and restored
    assert (repo / "src" / "app.py").read_text() == "def app():\n    return 1\n"


def test_rollback_never_writes_through_a_folder_that_leads_out(repo: Path, tmp_path: Path) -> None:
    snap = snapshot.take(repo, tmp_path / "snap", [])  # holds the user's src/util.py
    outside = tmp_path / "outside"
    shutil.move(repo / "src", outside)
    (outside / "util.py").write_text("not the project's any more\n")
    (repo / "src").symlink_to(outside)
    assert "src/util.py" in snapshot.changed_since(snap)
    snapshot.rollback(snap)  # the new link goes first; the user's file comes back inside the project
    assert (outside / "util.py").read_text() == "not the project's any more\n"
    assert not (repo / "src").is_symlink()
    assert (repo / "src" / "util.py").read_text() == "def util():\n    return 3  # user edit\n"


def test_rollback_skips_a_path_whose_folder_now_leads_out(repo: Path, tmp_path: Path) -> None:
    (repo / "data").mkdir()
    (repo / "data" / "f.txt").write_text("inside\n")
    (repo / "lnk.log").symlink_to("data")  # ignored (*.log): git never reports it
    snap = snapshot.take(repo, tmp_path / "snap", ["lnk.log/f.txt"])
    assert "lnk.log/f.txt" in snapshot.load_manifest(snap)["entries"]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("outside\n")
    (repo / "lnk.log").unlink()
    (repo / "lnk.log").symlink_to(outside)
    assert "lnk.log/f.txt" in snapshot.changed_since(snap)
    assert "lnk.log/f.txt" not in snapshot.rollback(snap)
    assert (outside / "f.txt").read_text() == "outside\n"
