from __future__ import annotations

from pathlib import Path

import pytest
from helpers_runs import git

from fixloop.core.errors import FixloopError
from fixloop.store import gitfiles


def write(root: Path, name: str, text: str = "x\n") -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_clean_repository_has_no_changes(git_project: Path) -> None:
    assert gitfiles.changed_files(git_project) == []


def test_modified_staged_and_untracked_but_not_ignored_or_deleted(git_project: Path) -> None:
    write(git_project, "src/app.py", "print('changed')\n")  # modified, unstaged
    write(git_project, "src/new.py")  # new, staged
    git(git_project, "add", "src/new.py")
    write(git_project, "notes/todo.md")  # untracked
    write(git_project, "debug.log")  # ignored by .gitignore
    (git_project / "README.md").unlink()  # deleted
    assert gitfiles.changed_files(git_project) == ["notes/todo.md", "src/app.py", "src/new.py"]


def test_staged_then_removed_from_the_work_tree_is_left_out(git_project: Path) -> None:
    write(git_project, "gone.py")
    git(git_project, "add", "gone.py")
    (git_project / "gone.py").unlink()
    assert gitfiles.changed_files(git_project) == []


def test_rename_lists_the_new_name(git_project: Path) -> None:
    git(git_project, "mv", "src/app.py", "src/main.py")
    assert gitfiles.changed_files(git_project) == ["src/main.py"]


def test_odd_file_names(git_project: Path) -> None:
    write(git_project, "with space.py")
    write(git_project, "ünïcode.py")
    write(git_project, 'quote"d.py')
    assert gitfiles.changed_files(git_project) == ['quote"d.py', "with space.py", "ünïcode.py"]


def test_fixloop_own_files_are_left_out(git_project: Path) -> None:
    write(git_project, ".claude/fixloop/runs/0123abcd/state.json", "{}")
    write(git_project, ".claude/logs/fixloop/bugfix/x.jsonl", "")
    write(git_project, ".claude/fixloop.json", "{}")
    write(git_project, ".claude/logs/other/x.txt")
    assert gitfiles.changed_files(git_project) == [".claude/fixloop.json", ".claude/logs/other/x.txt"]


def test_against_a_base_commit(git_project: Path) -> None:
    first = git(git_project, "rev-parse", "HEAD").strip()
    write(git_project, "src/committed.py")
    git(git_project, "add", ".")
    git(git_project, "commit", "-q", "-m", "second")
    write(git_project, "README.md", "edited\n")
    assert gitfiles.changed_files(git_project) == ["README.md"]
    assert gitfiles.changed_files(git_project, first) == ["README.md", "src/committed.py"]
    assert gitfiles.changed_files(git_project, "HEAD~1") == ["README.md", "src/committed.py"]


@pytest.mark.parametrize("base", ["no-such-branch", "--output=OUT", "", "HEAD~5", "a\nb"])
def test_bad_base_is_refused(git_project: Path, tmp_path: Path, base: str) -> None:
    target = tmp_path / "injected"
    with pytest.raises(FixloopError) as caught:
        gitfiles.changed_files(git_project, base.replace("OUT", str(target)))
    assert caught.value.code == "INVALID_GIT_BASE"
    assert caught.value.exit_code == 2
    assert not target.exists()


def test_repository_without_commits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    write(tmp_path, "a.py")
    git(tmp_path, "add", "a.py")
    write(tmp_path, "b.py")
    assert gitfiles.changed_files(tmp_path) == ["a.py", "b.py"]


def test_project_in_a_subfolder_gets_project_relative_paths(git_project: Path) -> None:
    write(git_project, "src/pkg/mod.py")
    write(git_project, "outside.py")
    assert gitfiles.changed_files(git_project / "src") == ["pkg/mod.py"]


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        gitfiles.changed_files(tmp_path)
    assert caught.value.code == "GIT_UNAVAILABLE"
    assert caught.value.message.startswith("Not a git repository")


def test_missing_project_directory(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        gitfiles.changed_files(tmp_path / "nope")
    assert caught.value.code == "GIT_UNAVAILABLE"


def test_git_not_installed(git_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(git_project / "no-bin"))
    with pytest.raises(FixloopError) as caught:
        gitfiles.changed_files(git_project)
    assert caught.value.code == "GIT_UNAVAILABLE"
    assert caught.value.message == "git is not installed (not found on PATH)."
    assert gitfiles.current_branch(git_project) is None


def test_git_dir_in_the_environment_is_ignored(
    git_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    write(git_project, "mine.py")
    assert gitfiles.changed_files(git_project) == ["mine.py"]


def test_current_branch(git_project: Path, tmp_path: Path) -> None:
    assert gitfiles.current_branch(git_project) == "main"
    git(git_project, "checkout", "-q", "-b", "feature/login")
    assert gitfiles.current_branch(git_project) == "feature/login"
    assert gitfiles.current_branch(tmp_path / "nowhere") is None
