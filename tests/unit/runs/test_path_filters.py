"""review_include / review_exclude globs: which changed files a review looks at."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_runs import FakeClock, read_events

from fixloop.runs import changed_files, creation
from fixloop.runs.baseline import BASELINE_FILE
from fixloop.runs.config import PROJECT_CONFIG
from fixloop.runs.path_filters import PathFilter, matches


@pytest.mark.parametrize(
    ("path", "glob", "expected"),
    [
        ("a.py", "*.py", True),
        ("src/deep/a.py", "*.py", True),  # no slash: a name in any folder
        ("src/a.js", "*.py", False),
        ("src/a.py", "src/**/*.py", True),  # ** is zero or more folders
        ("src/x/y/a.py", "src/**/*.py", True),
        ("lib/src/a.py", "src/**/*.py", False),  # a slash anchors at the project root
        ("docs/a.md", "docs/*.md", True),
        ("docs/x/a.md", "docs/*.md", False),  # * stays inside one folder
        ("vendor/lib/x.js", "vendor", True),  # a folder matches everything in it
        ("app/vendor/x.js", "vendor", True),
        ("vendor/x.js", "/vendor/", True),
        ("app/vendor/x.js", "/vendor", False),  # a leading slash anchors
        ("setup.py", "/setup.py", True),
        ("pkg/setup.py", "/setup.py", False),
        ("gen/a_pb2.py", "*_pb2.py", True),
        ("a1.py", "a[0-9].py", True),
        ("ab.py", "a[0-9].py", False),
        ("ab.py", "a[!0-9].py", True),
        ("a?.py", "a?.py", True),
        ("a[.py", "a[.py", True),  # an unclosed set is a plain character
        ("src/a.py", "./src/*.py", True),
        ("src\\a.py", "src/a.py", False),  # paths are POSIX; only globs are normalized
        ("src/a.py", "src\\*.py", True),
    ],
)
def test_glob_syntax(path: str, glob: str, expected: bool) -> None:
    assert matches(path, glob) is expected


def test_a_file_is_kept_when_some_include_and_no_exclude_matches() -> None:
    rules = PathFilter.of(["src/**", "*.md"], ["*_test.py", "src/generated"])
    files = ["README.md", "src/a.py", "src/a_test.py", "src/generated/x.py", "tools/b.py"]
    assert rules.split(files) == (
        ["README.md", "src/a.py"],
        ["src/a_test.py", "src/generated/x.py", "tools/b.py"],
    )
    assert PathFilter().split(files) == (files, [])
    assert not PathFilter().active and rules.active


def test_fixloop_s_own_files_are_never_reviewed() -> None:
    files = [".claude/fixloop.json", ".fixloop/baseline.json", "a.py", "b/.claude/fixloop.json"]
    kept, left_out = changed_files.reviewable_files(files, {})
    assert (kept, left_out) == (["a.py", "b/.claude/fixloop.json"], [])
    assert {PROJECT_CONFIG.as_posix(), BASELINE_FILE.as_posix()} == changed_files.OWN_FILES


def test_a_run_starts_with_the_filtered_files_and_says_what_was_left_out(git_project: Path) -> None:
    (git_project / ".claude").mkdir()
    (git_project / ".claude" / "fixloop.json").write_text(
        '{"review_exclude": ["docs/**", "*.lock", "/.claude"]}'
    )
    for name in ("src/app.py", "docs/guide.md", "poetry.lock"):
        (git_project / name).parent.mkdir(exist_ok=True)
        (git_project / name).write_text("changed\n")
    started = creation.start_run("review", root=git_project, git_base="", clock=FakeClock())
    state = started["state"]
    assert state["changed_files"] == ["src/app.py"]
    left_out = ["docs/guide.md", "poetry.lock"]  # .claude/fixloop.json is never reviewed at all
    assert state["files_left_out"] == left_out
    assert creation.describe_run(state, git_project)["files_left_out"] == left_out
    events = read_events(state["logging"]["log_files"]["jsonl"])
    collected = [event for event in events if event["type"] == "DATA_COLLECTED"]
    assert [(event["data_type"], event["summary"]) for event in collected] == [
        ("path_filters", {"kept": 1, "left_out": left_out})
    ]


def test_set_files_applies_the_filters_and_says_so(git_project: Path) -> None:
    (git_project / ".claude").mkdir()
    (git_project / ".claude" / "fixloop.json").write_text('{"review_include": ["src"]}')
    run_id = creation.start_run("review", root=git_project, changed_files=["src/app.py"], clock=FakeClock())[
        "state"
    ]["run_id"]
    answer = changed_files.set_files(git_project, run_id, ["README.md", "src/app.py"], clock=FakeClock())
    assert answer == {
        "run_id": run_id,
        "changed_files": ["src/app.py"],
        "base_ref": None,
        "warnings": [],
        "files_left_out": ["README.md"],
    }
