"""Fixtures for the hook tests (helpers live in hook_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hook_helpers import HookEnv, Run, make_hooks, start_run


@pytest.fixture
def hooks(tmp_path: Path) -> HookEnv:
    return make_hooks(tmp_path)


@pytest.fixture
def run(hooks: HookEnv, monkeypatch: pytest.MonkeyPatch) -> Run:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(hooks.project))
    return start_run(hooks)


@pytest.fixture
def review_run(hooks: HookEnv, monkeypatch: pytest.MonkeyPatch) -> Run:
    """A run of the `review` workflow, which `fixloop next` and `fixloop record` carry forward."""
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(hooks.project))
    return start_run(hooks, workflow="review")
