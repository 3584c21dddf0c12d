"""Where `--output` writes: anywhere the user names, never inside .git, atomically."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fixloop.core.errors import FixloopError
from fixloop.report.destination import report_destination, write_report


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / "reports").mkdir()
    return root


def test_relative_paths_are_taken_from_the_project_root(project: Path) -> None:
    assert report_destination(project, "reports/r.sarif") == project / "reports" / "r.sarif"
    assert report_destination(project, "new/dir/r.html") == project / "new" / "dir" / "r.html"


def test_a_path_outside_the_project_is_allowed(project: Path, tmp_path: Path) -> None:
    assert report_destination(project, "../r.json") == tmp_path / "r.json"
    elsewhere = tmp_path / "out" / "r.json"
    assert report_destination(project, str(elsewhere)) == elsewhere


def test_characters_a_shell_would_act_on_are_just_characters(project: Path) -> None:
    name = "reports/a;b $(x) `y` |z&.md"
    target = report_destination(project, name)
    write_report(target, "ok\n")
    assert (project / name).read_text() == "ok\n"


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("", "empty path"),
        ("  ", "empty path"),
        ("reports", "a directory"),
        (".git/hooks/pre-commit", "inside a .git directory"),
        (".git/config", "inside a .git directory"),
        ("reports/../.git/HEAD", "inside a .git directory"),
        (".GIT/config", "inside a .git directory"),
        ("a\x00b", "NUL character in the path"),
    ],
)
def test_refused(project: Path, output: str, reason: str) -> None:
    with pytest.raises(FixloopError) as caught:
        report_destination(project, output)
    assert (caught.value.code, caught.value.details["reason"]) == ("INVALID_OUTPUT", reason)


def test_a_link_into_git_is_refused(project: Path) -> None:
    (project / "reports" / "hooks").symlink_to(project / ".git" / "hooks")
    with pytest.raises(FixloopError) as caught:
        report_destination(project, "reports/hooks/pre-commit")
    assert caught.value.details["reason"] == "inside a .git directory"


def test_a_link_elsewhere_is_written_through(project: Path, tmp_path: Path) -> None:
    real = tmp_path / "published.html"
    real.write_text("old\n")
    (project / "reports" / "latest.html").symlink_to(real)
    target = report_destination(project, "reports/latest.html")
    assert target == real
    write_report(target, "new\n")
    assert real.read_text() == "new\n"
    assert (project / "reports" / "latest.html").is_symlink()


def test_the_write_replaces_the_file_whole_and_leaves_no_temporary_file(project: Path) -> None:
    target = project / "reports" / "r.json"
    target.write_text("x" * 10_000)
    write_report(target, "{}\n")
    assert target.read_text() == "{}\n"
    assert os.listdir(project / "reports") == ["r.json"]


def test_an_unwritable_place_is_a_clear_error(project: Path) -> None:
    (project / "blocker").write_text("a file, not a directory\n")
    with pytest.raises(FixloopError) as caught:
        write_report(project / "blocker" / "r.json", "{}\n")
    assert caught.value.code == "OUTPUT_UNWRITABLE"
