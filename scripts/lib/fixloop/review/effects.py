"""The loop's effects on a real project: snapshots in `<run dir>/snapshots/round-<n>/` (store.snapshot)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fixloop.review.state import Snapshot
from fixloop.store import layout, snapshot


class ProjectEffects:
    """Snapshots of the run's project directory, kept in the run's directory."""

    def __init__(self, project: Path, run_dir: Path) -> None:
        self.project = project
        self.run_dir = run_dir

    def take_snapshot(self, round_number: int, files: Sequence[str]) -> Snapshot:
        return snapshot.take(self.project, self.run_dir / "snapshots" / f"round-{round_number}", files)

    def changed_since(self, snap: Mapping[str, Any]) -> list[str]:
        return snapshot.changed_since(snap)

    def rollback(self, snap: Mapping[str, Any]) -> list[str]:
        return snapshot.rollback(snap)


def project_effects(root: Path, state: Mapping[str, Any]) -> ProjectEffects:
    """The effects for run `state` of the project at `root` (its project_dir when it has one)."""
    project = Path(str(state.get("project_dir") or root))
    return ProjectEffects(project, Path(layout.run_dir(root, str(state["run_id"]))))
