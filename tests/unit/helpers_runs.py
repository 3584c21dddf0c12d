"""Helpers for the run-engine tests: git in a temp repo, a controllable clock, file digests, log events."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

LIB = Path(__file__).resolve().parents[2] / "scripts" / "lib"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(cwd)}
    result = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return result.stdout


class FakeClock:
    """Epoch seconds under the test's control; `step` seconds are added after every reading."""

    def __init__(self, now: float = 1_765_000_000.0, step: float = 0.0) -> None:
        self.now = now
        self.step = step
        self.calls = 0

    def __call__(self) -> float:
        value = self.now
        self.now += self.step
        self.calls += 1
        return value

    def advance(self, seconds: float) -> None:
        self.now += seconds


def sha256_tree(*roots: Path) -> dict[str, str]:
    """sha256 of every file under `roots` (missing roots are skipped), keyed by path."""
    digests: dict[str, str] = {}
    for root in roots:
        if not root.exists():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.name.endswith(".lock"):
                digests[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def read_events(path: Path | str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line]
