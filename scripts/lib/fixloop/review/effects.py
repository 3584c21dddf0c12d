"""The loop's effects on a real project: each fix round begins with a snapshot and a touch window
(`<run dir>/snapshots/round-<n>/`, `<run dir>/touches/round-<n>/`) and rolls back through store.edits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fixloop.review.state import Snapshot
from fixloop.store import edits, layout
from fixloop.store.edits import RollbackReport


class ProjectEffects:
    """Snapshots and recorded edits of the run's project directory, kept in the run's directory."""

    def __init__(self, project: Path, run_dir: Path) -> None:
        self.project = project
        self.run_dir = run_dir

    def take_snapshot(self, round_number: int, files: Sequence[str]) -> Snapshot:
        return edits.begin(self.project, self.run_dir, f"round-{round_number}", files)

    def changed_since(self, snap: Mapping[str, Any]) -> list[str]:
        return edits.changed_since(snap)

    def rollback(self, snap: Mapping[str, Any]) -> RollbackReport:
        return edits.rollback(snap)

    def touched_since(self, snap: Mapping[str, Any]) -> list[str]:
        return edits.touched_since(snap)

    def line_counts(self, files: Sequence[str]) -> dict[str, int]:
        return {name: count_lines(self.project / name) for name in files}


# A file is counted up to this size: past it the file fills a shard alone anyway.
COUNTED_BYTES = 16 * 1024 * 1024
CHUNK = 1024 * 1024


def count_lines(path: Path) -> int:
    """The lines of a file (0 when it cannot be read: a deleted file has no lines to review)."""
    count = 0
    try:
        with path.open("rb") as handle:
            for _ in range(COUNTED_BYTES // CHUNK):
                chunk = handle.read(CHUNK)
                if not chunk:
                    break
                count += chunk.count(b"\n") + (0 if chunk.endswith(b"\n") or len(chunk) == CHUNK else 1)
    except OSError:
        return 0
    return count


def project_effects(root: Path, state: Mapping[str, Any]) -> ProjectEffects:
    """The effects for run `state` of the project at `root` (its project_dir when it has one)."""
    project = Path(str(state.get("project_dir") or root))
    return ProjectEffects(project, Path(layout.run_dir(root, str(state["run_id"]))))
