"""Shared fixtures: a temporary git project (CLAUDE_PROJECT_DIR points at it) and a controllable clock."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers_runs import FakeClock, git


@pytest.fixture
def git_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A git repository with one commit (README.md, src/app.py, .gitignore ignoring *.log), as the project."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# demo\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / ".gitignore").write_text("*.log\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    for name in list(os.environ):
        if name.startswith("GIT_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    monkeypatch.chdir(root)
    yield root.resolve()


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """A FakeClock installed as timekeeping.default_clock (used by the CLI and by every run call)."""

    from fixloop.core import timekeeping

    clock = FakeClock()
    monkeypatch.setattr(timekeeping, "default_clock", clock)
    return clock


@pytest.fixture(autouse=True)
def plugin_data(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test has its own plugin data directory (approvals of verification commands live there), so
    no test reads or writes the user's."""
    data = tmp_path_factory.mktemp("plugin-data")
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    monkeypatch.delenv("FIXLOOP_DATA", raising=False)
    return data
