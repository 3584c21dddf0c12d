"""The bugfix workflows' sample projects themselves: each fresh copy is a clean git repository whose real test
runner reports exactly its one known failing test, and the known one-line fix makes the whole suite pass.
A missing runner or browser skips on a developer machine and fails in CI (CI=true)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from claude_runner import git
from sample_projects import (
    SAMPLE_NAMES,
    SAMPLES,
    apply_fix,
    make_sample,
    missing_requirements,
    read_outcome,
    run_tests,
    sample_test_command,
)

from fixloop.runs.config import read_config_file

EXPECTED_COMMANDS = {
    "backend": "python -m pytest -q",
    "frontend": "npx vitest run",
    "e2e": "npx playwright test",
}


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


def _require_runner(name: str) -> None:
    missing = missing_requirements(name)
    if missing:
        message = f"sample {name!r} cannot run its tests; missing: " + "; ".join(missing)
        if _in_ci():
            pytest.fail(message)
        pytest.skip(message)


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_config_names_the_test_command_and_loads(name: str) -> None:
    assert sample_test_command(name) == EXPECTED_COMMANDS[name]
    config = read_config_file(SAMPLES[name].source / ".claude" / "fixloop.json")
    assert config == {"test_command": EXPECTED_COMMANDS[name]}


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_copy_is_a_clean_repository_without_dependencies_in_git(name: str, tmp_path: Path) -> None:
    if SAMPLES[name].node and not (SAMPLES[name].source / "node_modules").is_dir():
        _require_runner(name)
    project = make_sample(name, tmp_path / name)
    assert git(project, "status", "--porcelain", "--ignored=no") == ""
    tracked = git(project, "ls-files").splitlines()
    assert ".claude/fixloop.json" in tracked
    assert SAMPLES[name].fix.file in tracked
    assert not [path for path in tracked if path.startswith("node_modules")]
    if SAMPLES[name].node:
        assert (project / "node_modules").is_symlink()
        assert (project / "package-lock.json").is_file()


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_one_known_failure_then_the_one_line_fix_passes_all(name: str, tmp_path: Path) -> None:
    _require_runner(name)
    sample = SAMPLES[name]
    project = make_sample(name, tmp_path / name)

    before = run_tests(name, project)
    outcome = read_outcome(name, before.stdout)
    assert before.returncode != 0, before.stdout
    assert outcome.failed_tests == [sample.failing_test], before.stdout
    assert (outcome.failed, outcome.passed) == (1, sample.passing), before.stdout

    apply_fix(name, project)
    assert git(project, "diff", "--numstat") == f"1\t1\t{sample.fix.file}\n"
    after = run_tests(name, project)
    outcome = read_outcome(name, after.stdout)
    assert after.returncode == 0, after.stdout
    assert outcome.failed_tests == [], after.stdout
    assert (outcome.failed, outcome.passed) == (0, sample.passing + 1), after.stdout


def test_a_fix_that_does_not_apply_is_an_error(tmp_path: Path) -> None:
    project = make_sample("backend", tmp_path / "backend")
    apply_fix("backend", project)
    with pytest.raises(ValueError, match="occurs 0 times"):
        apply_fix("backend", project)
