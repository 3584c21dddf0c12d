"""Fixtures of the failures tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from failures.logfixtures import write_github_log


@pytest.fixture
def github_log(tmp_path: Path) -> Path:
    path = tmp_path / "log_failed.txt"
    write_github_log(path)
    return path
