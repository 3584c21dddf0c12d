"""The files an implementer says it modified, kept only when the facts say they changed.

Before its first call the phase begins the change (`begin`: store.edits.begin, a snapshot of the project and
a touch window). At green, `sort_claims` keeps a claimed file when a fixloop agent's recorded edit wrote it
in that window (a `wrote` ledger line), or when it differs from the snapshot. Outside git the snapshot holds
only the files the plan names: a claimed file it does not hold, and that exists, cannot be told unchanged
and is kept. Without a snapshot (it failed) every claim is kept.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.store import edits, snapshot
from fixloop.workflows.context import PhaseContext

UNCHANGED_CLAIMS = "FILES_CLAIMED_NOT_CHANGED"


def begin(ctx: PhaseContext, files: Iterable[str]) -> dict[str, Any] | None:
    """The phase's change, begun before its agent edits (window `implement-<phase>`); None (and a
    warning) when the project cannot be snapshotted."""
    otherwise = "The files it says it modified are taken at its word."
    return ctx.begin_edits(f"implement-{ctx.number}", files, "the implementer", otherwise)


def relative(root: Path, path: str) -> str:
    """`path` relative to the project, with `/` (as given when it lies outside)."""
    given = Path(path)
    if not given.is_absolute():
        return os.path.normpath(path).replace(os.sep, "/")
    try:
        return given.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path


def sort_claims(ctx: PhaseContext, begun: Mapping[str, Any] | None, claimed: Iterable[str]) -> list[str]:
    """The claimed files that changed (see the module's rules); the others are named in a WARNING
    FILES_CLAIMED_NOT_CHANGED and kept in the phase's `unchanged_claims`. Closes the touch window."""
    files = {relative(ctx.root, path) for path in claimed if path}
    if begun is None:
        return sorted(files)
    edits.end(begun)
    try:
        facts = set(edits.touched_since(begun)) | set(edits.changed_since(begun))
        held = set(snapshot.load_manifest(begun).get("entries") or {})
    except FixloopError as error:
        ctx.warn("SNAPSHOT_FAILED", f"Cannot compare the project with its snapshot: {error.message}")
        return sorted(files)
    if begun.get("kind") != "git":
        facts |= {path for path in files - held if (ctx.root / path).exists()}
    unchanged = sorted(files - facts)
    if unchanged:
        ctx.data["unchanged_claims"] = unchanged
        ctx.warn(
            UNCHANGED_CLAIMS,
            f"The implementer said it modified {', '.join(unchanged)}, but no recorded edit wrote them and "
            "they do not differ from the snapshot taken before it worked: not counted as changed.",
            files=unchanged,
        )
    return sorted(files & facts)
