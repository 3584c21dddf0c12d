"""The lines around a finding, read from the project, only where reading is safe."""

from __future__ import annotations

from pathlib import Path

from helpers_reports import write_source

from fixloop.report.code_context import CodeLine, code_context, ignored_files


def numbers(root: Path, file: str, line: int | None, end_line: int | None = None) -> list[tuple[int, bool]]:
    return [(item.number, item.flagged) for item in code_context(root, file, line, end_line).lines]


def test_three_lines_either_side_and_the_range_flagged(git_project: Path) -> None:
    write_source(git_project, lines=40)
    context = code_context(git_project, "src/app.py", 10)
    assert context.note is None
    assert context.lines[0] == CodeLine(7, "line 7", False)
    assert numbers(git_project, "src/app.py", 10) == [
        (7, False), (8, False), (9, False), (10, True), (11, False), (12, False), (13, False),
    ]  # fmt: skip
    assert numbers(git_project, "src/app.py", 33, 35)[3:6] == [(33, True), (34, True), (35, True)]
    assert numbers(git_project, "src/app.py", 1)[0] == (1, True)
    assert numbers(git_project, "src/app.py", 40)[-1] == (40, True)


def test_notes_instead_of_lines(git_project: Path, tmp_path: Path) -> None:
    write_source(git_project, lines=5)
    (tmp_path / "secret.txt").write_text("outside\n")
    (git_project / "blob.bin").write_bytes(b"\x00\x01\x02\n")
    cases = {
        ("src/app.py", None): "no line given",
        ("src/app.py", 9): "line 9 is past the end of the file (5 lines now)",
        ("../secret.txt", 1): "not shown: the file is outside the project",
        ("/etc/passwd", 1): "not shown: the file is outside the project",
        (".git/config", 1): "not shown: the file is inside .git",
        ("src/gone.py", 1): "not shown: the file does not exist now",
        ("blob.bin", 1): "not shown: a binary file",
    }
    for (file, line), note in cases.items():
        assert code_context(git_project, file, line).note == note, file
        assert code_context(git_project, file, line).lines == ()


def test_files_git_ignores_are_not_read(git_project: Path) -> None:
    (git_project / "debug.log").write_text("API_TOKEN=abc\n")
    write_source(git_project, lines=3)
    (git_project / ".gitignore").write_text("*.log\nbuild/\n")
    (git_project / "build").mkdir()
    (git_project / "build" / "out.py").write_text("generated\n")
    (git_project / "alias.py").symlink_to(git_project / "debug.log")
    named = ["debug.log", "./src/app.py", "debug.log", "build/out.py", "alias.py", "[a-z]*.log"]
    hidden = ignored_files(git_project, named)
    assert hidden == {"debug.log", "build/out.py"}
    for file in ("debug.log", "./debug.log", "build/out.py", "alias.py"):
        context = code_context(git_project, file, 1, ignored=hidden)
        assert (context.lines, context.note) == ((), "not shown: git ignores the file"), file
    assert code_context(git_project, "./src/app.py", 1, ignored=hidden).lines[0].text == "line 1"


def test_outside_a_repository_nothing_counts_as_ignored(tmp_path: Path) -> None:
    assert ignored_files(tmp_path, ["a.log"]) == set()
    assert ignored_files(tmp_path, []) == set()


def test_secrets_on_the_lines_shown_are_masked(git_project: Path) -> None:
    (git_project / "settings.py").write_text('password = "hunter2-very-secret"\n')
    (line,) = code_context(git_project, "settings.py", 1).lines
    assert "hunter2" not in line.text
    assert "[REDACTED]" in line.text
