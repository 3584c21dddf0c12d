"""Fixtures of the fix-ci tests: the calc project alone, and checked out from the local GitHub server."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_github import FakeGitHub, make_git_repo
from helpers_github import gh_env, github  # noqa: F401 -- fixtures
from helpers_runs import FakeClock
from workflows.bugfix_helpers import write_calc_project


@pytest.fixture
def project(git_project: Path, fake_clock: FakeClock) -> Path:
    """The calc project: tests/test_calc.py::test_divide fails (divide multiplies)."""
    write_calc_project(git_project)
    return git_project


@pytest.fixture
def checkout(github: FakeGitHub, gh_env: dict[str, str], tmp_path: Path, fake_clock: FakeClock) -> Path:  # noqa: F811
    """The calc project on main, its origin octo/demo on the local GitHub server; fixloop's files ignored."""
    root = make_git_repo(tmp_path / "checkout", github)
    (root / ".git" / "info" / "exclude").write_text(".claude/\n")
    write_calc_project(root)
    return root.resolve()
