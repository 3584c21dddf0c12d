"""Snapshots taken before a fix, so that a rollback restores exactly the files the fixer changed.

In a git work tree the snapshot records the HEAD commit and, for every file that is not clean (modified,
staged, deleted or untracked-but-not-ignored), its content (copied into the snapshot directory) and hash.
Clean tracked files need no copy: their content is HEAD's. Files named by the caller that git does not
track (ignored ones, or ones that do not exist yet) are recorded the same way as dirty files. Outside git
only the named files are recorded.

`changes_since` compares the project with the snapshot; `rollback` puts back what changed: earlier content
is restored, files the fixer created are deleted. A user's own uncommitted edits that the fixer did not
touch are not in the change set, so a rollback leaves them exactly as they are.

Paths are relative to the project directory, with `/`. fixloop's own files (`.claude/fixloop/`,
`.claude/logs/`) are never part of a snapshot: the run state changes while the fixer works. A named file
that resolves outside the project (through a symbolic link) is not recorded, and `rollback` never writes
or deletes through a directory that resolves outside the project.

This rollback undoes every change since the snapshot, whoever made it. The loop's fix rounds roll back
through store.edits instead, which undoes exactly the agent's recorded edits.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.store import gitfiles

MANIFEST = "manifest.json"
FILES_DIR = "files"
EXCLUDED_PREFIXES = (".claude/fixloop/", ".claude/logs/")

Entry = dict[str, Any]


def _excluded(path: str) -> bool:
    return any(path.startswith(prefix) for prefix in EXCLUDED_PREFIXES)


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _current(absolute: Path) -> Entry:
    """{"kind": "absent"|"file"|"symlink"|"other", "sha256", "mode"} of what is at `absolute` now."""
    try:
        info = absolute.lstat()
    except FileNotFoundError:
        return {"kind": "absent", "sha256": None, "mode": None}
    except NotADirectoryError:
        return {"kind": "absent", "sha256": None, "mode": None}
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(absolute)
        return {
            "kind": "symlink",
            "sha256": _sha256_bytes(os.fsencode(target)),
            "mode": None,
            "target": target,
        }
    if stat.S_ISREG(info.st_mode):
        digest = hashlib.sha256()
        with absolute.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        return {"kind": "file", "sha256": digest.hexdigest(), "mode": stat.S_IMODE(info.st_mode)}
    return {"kind": "other", "sha256": None, "mode": None}


def _inside(project: Path, path: Path) -> bool:
    """Whether `path` (symbolic links resolved) is the project or inside it."""
    real = os.path.realpath(path)
    base = os.path.realpath(project)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _normalize(path: str) -> str:
    value = path.replace("\\", "/")
    while value.startswith("./"):
        value = value[2:]
    return value


# ---- git -----------------------------------------------------------------------------------------


def _git_layout(project: Path) -> tuple[Path, str] | None:
    """(repository root, the project's prefix inside it such as "" or "sub/"), or None outside git."""
    try:
        root = gitfiles.repo_root(project).resolve()
    except FixloopError:
        return None
    relative = project.resolve().relative_to(root).as_posix()
    return root, "" if relative == "." else relative + "/"


def _git(root: Path, *args: str) -> bytes:
    return gitfiles.run_git(root, *args).stdout


def _head(root: Path) -> str | None:
    return (
        gitfiles.run_git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
        .stdout.decode("ascii", "replace")
        .strip()
        or None
    )


def _dirty(root: Path, prefix: str) -> set[str]:
    """Project-relative paths that differ in any way from HEAD (index or work tree), or are untracked."""
    output = _git(
        root,
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--no-renames",
        "--ignore-submodules=all",
        "--",
        prefix or ".",
    )
    paths: set[str] = set()
    for item in output.decode("utf-8", "surrogateescape").split("\0"):
        if len(item) < 4:
            continue
        name = item[3:]
        if name.endswith("/") or not name.startswith(prefix):
            continue
        relative = name[len(prefix) :]
        if not _excluded(relative):
            paths.add(relative)
    return paths


def _tracked(root: Path, prefix: str, files: Iterable[str]) -> set[str]:
    names = [prefix + name for name in files]
    if not names:
        return set()
    output = _git(root, "ls-files", "-z", "--cached", "--", *names)
    return {name[len(prefix) :] for name in output.decode("utf-8", "surrogateescape").split("\0") if name}


def _diff_names(root: Path, prefix: str, old: str, new: str) -> set[str]:
    output = _git(root, "diff", "--name-only", "-z", "--no-renames", old, new, "--", prefix or ".")
    return {
        name[len(prefix) :]
        for name in output.decode("utf-8", "surrogateescape").split("\0")
        if name and name.startswith(prefix) and not _excluded(name[len(prefix) :])
    }


def _head_blob(root: Path, head: str | None, repo_path: str) -> tuple[bytes, str] | None:
    """(content, git mode) of `repo_path` in commit `head`, or None when it is not there."""
    if head is None:
        return None
    listing = gitfiles.run_git(root, "ls-tree", "-z", head, "--", repo_path, check=False).stdout
    entry = listing.decode("utf-8", "surrogateescape").split("\0")[0]
    if not entry or "\t" not in entry:
        return None
    mode, kind, _rest = entry.split(" ", 2)
    if kind != "blob":
        return None
    content = _git(root, "cat-file", "blob", f"{head}:{repo_path}")
    return content, mode


# ---- taking a snapshot ---------------------------------------------------------------------------


def take(
    project: Path, snapshot_dir: Path, files: Sequence[str] = (), now_ms: int | None = None
) -> dict[str, Any]:
    """Snapshot the project into `snapshot_dir` (emptied first). Returns the summary kept in the run state."""
    project = project.resolve()
    if snapshot_dir.exists():
        shutil.rmtree(snapshot_dir)
    (snapshot_dir / FILES_DIR).mkdir(parents=True)
    named = sorted(
        {
            _normalize(name)
            for name in files
            if name and not _excluded(_normalize(name)) and _inside(project, project / _normalize(name))
        }
    )
    layout = _git_layout(project)
    entries: dict[str, Entry] = {}
    head: str | None = None
    if layout is not None:
        root, prefix = layout
        head = _head(root)
        recorded = _dirty(root, prefix)
        recorded.update(set(named) - _tracked(root, prefix, named))
    else:
        recorded = set(named)
    for path in sorted(recorded):
        entries[path] = _save(project, snapshot_dir, path)
    manifest = {
        "kind": "git" if layout is not None else "files",
        "project": str(project),
        "repo_root": str(layout[0]) if layout else None,
        "prefix": layout[1] if layout else "",
        "head": head,
        "entries": entries,
        "taken_at_ms": now_ms if now_ms is not None else round(time.time() * 1000),
    }
    (snapshot_dir / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
    return {
        "kind": manifest["kind"],
        "dir": str(snapshot_dir),
        "head": head,
        "entries": len(entries),
        "taken_at_ms": manifest["taken_at_ms"],
    }


def _save(project: Path, snapshot_dir: Path, path: str) -> Entry:
    absolute = project / path
    entry = _current(absolute)
    if entry["kind"] == "file":
        copy = snapshot_dir / FILES_DIR / path
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(absolute, copy)
        entry["copy"] = f"{FILES_DIR}/{path}"
    return entry


def load_manifest(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    directory = Path(str(snapshot.get("dir", "")))
    try:
        manifest: dict[str, Any] = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise FixloopError(
            "SNAPSHOT_MISSING", f"Cannot read the snapshot in {directory}: {error}.", path=str(directory)
        ) from None
    return manifest


# ---- comparing and rolling back ------------------------------------------------------------------


def changes_since(snapshot: Mapping[str, Any]) -> dict[str, str]:
    """Path -> "modified" | "created" | "deleted", for every project file changed since `snapshot`."""
    manifest = load_manifest(snapshot)
    project = Path(manifest["project"])
    entries: dict[str, Entry] = manifest["entries"]
    candidates = set(entries)
    root: Path | None = None
    prefix = str(manifest.get("prefix") or "")
    head = manifest.get("head")
    if manifest["kind"] == "git":
        root = Path(str(manifest["repo_root"]))
        candidates |= _dirty(root, prefix)
        now_head = _head(root)
        if head and now_head and now_head != head:
            candidates |= _diff_names(root, prefix, head, now_head)
    changes: dict[str, str] = {}
    for path in sorted(candidates):
        before = entries.get(path)
        if before is None:
            assert root is not None
            before = _clean_entry(root, head, prefix + path)
        after = _current(project / path)
        if (before["kind"], before["sha256"]) == (after["kind"], after["sha256"]):
            continue
        if before["kind"] == "absent":
            changes[path] = "created"
        elif after["kind"] == "absent":
            changes[path] = "deleted"
        else:
            changes[path] = "modified"
    return changes


def _clean_entry(root: Path, head: str | None, repo_path: str) -> Entry:
    blob = _head_blob(root, head, repo_path)
    if blob is None:
        return {"kind": "absent", "sha256": None, "mode": None}
    content, mode = blob
    if mode == "120000":
        return {"kind": "symlink", "sha256": _sha256_bytes(content), "mode": None}
    return {"kind": "file", "sha256": _sha256_bytes(content), "mode": 0o755 if mode == "100755" else 0o644}


def changed_since(snapshot: Mapping[str, Any]) -> list[str]:
    """The files modified, created or deleted since `snapshot` (sorted)."""
    return sorted(changes_since(snapshot))


def rollback(snapshot: Mapping[str, Any]) -> list[str]:
    """Restore every file changed since `snapshot` to its content then; delete the ones created since.

    Returns the restored paths (sorted). Files that did not change are not touched, nor are paths whose
    directory resolves outside the project.
    """
    manifest = load_manifest(snapshot)
    project = Path(manifest["project"])
    directory = Path(str(snapshot["dir"]))
    entries: dict[str, Entry] = manifest["entries"]
    root = Path(str(manifest["repo_root"])) if manifest.get("repo_root") else None
    prefix = str(manifest.get("prefix") or "")
    changes = changes_since(snapshot)
    restored: list[str] = []
    for path in sorted(changes):
        target = project / path
        if not _inside(project, target.parent):
            continue  # a directory that now leads out of the project: never written through
        restored.append(path)
        entry = entries.get(path)
        if entry is not None:
            _restore_entry(target, entry, directory)
            continue
        assert root is not None
        blob = _head_blob(root, manifest.get("head"), prefix + path)
        _remove(target)
        if blob is None:
            continue
        content, mode = blob
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            os.symlink(os.fsdecode(content), target)
        else:
            target.write_bytes(content)
            os.chmod(target, 0o755 if mode == "100755" else 0o644)
    return restored


def _remove(target: Path) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)


def _restore_entry(target: Path, entry: Mapping[str, Any], directory: Path) -> None:
    _remove(target)
    if entry["kind"] == "absent":
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if entry["kind"] == "symlink":
        os.symlink(str(entry["target"]), target)
        return
    if entry["kind"] == "file":
        shutil.copyfile(directory / str(entry["copy"]), target)
        if entry.get("mode") is not None:
            os.chmod(target, int(entry["mode"]))
