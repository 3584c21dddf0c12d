"""The engine as it was at an earlier commit, for a benchmark's 'before' column: the commit checked out in a
temporary git worktree, removed when the benchmark is done."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def engine_at(commit: str) -> Iterator[Path]:
    """The scripts/lib directory of `commit`, checked out for the length of the `with` block."""
    worktree = Path(tempfile.mkdtemp(prefix="fixloop-before-")) / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), commit],
        capture_output=True,
        check=True,
    )
    try:
        yield worktree / "scripts" / "lib"
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)], check=False)
        worktree.parent.rmdir()
