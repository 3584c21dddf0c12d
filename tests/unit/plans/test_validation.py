from __future__ import annotations

import os
from pathlib import Path

import pytest

from fixloop.plans import Finding, Plan, Task, load, parse, validate

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "plans" / "csv_export.md"


def project(root: Path, *files: str) -> Path:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n", encoding="utf-8")
    return root


def test_the_seven_task_plan_only_creates_files(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        "src/reports/model.py",
        "src/reports/formats.py",
        "src/cli/report.py",
        "src/web/routes.py",
        "src/web/templates/report.html",
    )
    result = validate(load(FIXTURE), root)
    assert result.ok
    assert result.problems == ()
    assert result.warnings == (
        Finding(1, 17, "PLAN_FILE_TO_CREATE", "task 1 creates src/reports/csv_format.py"),
        Finding(1, 17, "PLAN_FILE_TO_CREATE", "task 1 creates tests/reports/test_csv_format.py"),
        Finding(3, 29, "PLAN_FILE_TO_CREATE", "task 3 creates docs/exports.md"),
    )


def test_a_missing_file_nothing_creates_is_a_problem(tmp_path: Path) -> None:
    plan = parse(
        "- [ ] Fix the parser\n  files: src/parser.py, README.md\n- [x] Done long ago\n  files: gone.py\n"
    )
    result = validate(plan, project(tmp_path, "README.md"))
    assert not result.ok
    assert result.problems == (
        Finding(1, 1, "PLAN_FILE_MISSING", "task 1 names src/parser.py, which does not exist"),
    )
    assert result.warnings == ()


@pytest.mark.parametrize("word", ["Create", "add", "New", "write", "Generate", "scaffold", "introduces"])
def test_words_that_say_a_task_creates_its_files(tmp_path: Path, word: str) -> None:
    plan = parse(f"- [ ] {word} the parser\n  files: src/parser.py\n")
    result = validate(plan, tmp_path)
    assert [finding.code for finding in result.warnings] == ["PLAN_FILE_TO_CREATE"]
    assert result.problems == ()


def test_the_body_can_say_it_creates_the_file(tmp_path: Path) -> None:
    plan = parse("- [ ] Parser\n  files: src/parser.py\n  A new module.\n")
    assert [finding.code for finding in validate(plan, tmp_path).warnings] == ["PLAN_FILE_TO_CREATE"]


def test_a_file_created_earlier_or_by_a_dependency_is_not_reported_again(tmp_path: Path) -> None:
    plan = parse(
        "1. Extend the parser\n   files: src/parser.py\n   depends: 2\n"
        "2. Create the parser\n   files: src/parser.py\n"
        "3. Use the parser\n   files: src/parser.py\n"
    )
    result = validate(plan, tmp_path)
    assert result.problems == ()
    assert result.warnings == (Finding(2, 4, "PLAN_FILE_TO_CREATE", "task 2 creates src/parser.py"),)


def test_paths_outside_the_project_are_problems(tmp_path: Path) -> None:
    root = project(tmp_path / "project", "a.py")
    (tmp_path / "secret.txt").write_text("s", encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    plan = parse(
        f"- [ ] Edit\n  files: ../secret.txt, {tmp_path / 'secret.txt'}, link.txt, {root / 'a.py'}, ./a.py\n"
    )
    result = validate(plan, root)
    assert [finding.message for finding in result.problems] == [
        "task 1 names ../secret.txt, which is outside the project",
        f"task 1 names {tmp_path / 'secret.txt'}, which is outside the project",
        "task 1 names link.txt, which is outside the project",
    ]
    assert {finding.code for finding in result.problems} == {"PLAN_FILE_OUTSIDE_ROOT"}


def test_globs_exist_when_they_match(tmp_path: Path) -> None:
    root = project(tmp_path, "src/a.py")
    plan = parse("- [ ] Tidy\n  files: src/*.py, docs/*.md\n")
    assert [finding.message for finding in validate(plan, root).problems] == [
        "task 1 names docs/*.md, which does not exist"
    ]


@pytest.mark.parametrize("title", ["TODO", "tbd.", "...", "**???**", "- -"])
def test_empty_tasks_are_problems(tmp_path: Path, title: str) -> None:
    plan = parse(f"- [ ] Real work\n- [ ] {title}\n")
    assert validate(plan, tmp_path).problems == (
        Finding(2, 2, "PLAN_TASK_EMPTY", f'task 2 says nothing to do: "{title}"'),
    )


def test_duplicate_tasks_are_warnings(tmp_path: Path) -> None:
    plan = parse("## A\n- [ ] Run the tests\n## B\n- [ ] Add docs\n- [ ] **run  the `tests`.**\n")
    result = validate(plan, tmp_path)
    assert result.problems == ()
    assert result.warnings == (
        Finding(3, 5, "PLAN_TASK_DUPLICATE", "task 3 repeats task 1 (line 2): **run  the `tests`.**"),
    )


def test_a_done_task_that_needs_a_pending_one_is_a_warning(tmp_path: Path) -> None:
    plan = parse("- [ ] a\n- [x] b\n  depends: 1\n")
    assert validate(plan, tmp_path).warnings == (
        Finding(
            2, 2, "PLAN_DONE_BEFORE_DEPENDENCY", "task 2 is done but task 1, which it depends on, is not"
        ),
    )


def test_cycles_among_pending_tasks_are_problems(tmp_path: Path) -> None:
    plan = parse(
        "- [ ] a\n  depends: 2\n- [ ] b\n  depends: 1\n- [x] c\n  depends: 4\n- [ ] d\n  depends: 3\n"
    )
    assert validate(plan, tmp_path).problems == (
        Finding(1, 1, "PLAN_DEPENDENCY_CYCLE", "tasks 1 and 2 depend on each other in a cycle"),
    )
    looped = Plan(title=None, tasks=(Task(id=4, title="a", line=2, depends=(4,)),))
    assert validate(looped, tmp_path).problems == (
        Finding(4, 2, "PLAN_DEPENDENCY_CYCLE", "task 4 depends on itself"),
    )


def test_words_that_only_look_like_creating_do_not_count(tmp_path: Path) -> None:
    plan = parse("- [ ] Fix the address parser\n  files: src/address.py\n")
    assert [finding.code for finding in validate(plan, tmp_path).problems] == ["PLAN_FILE_MISSING"]
