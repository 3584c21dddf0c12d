"""The run index: a small file of facts read from each run's state, so listing the runs does not parse them.

`.claude/fixloop/run-index.json` maps each run id to the facts last read from its state.json and that file's
signature at the time (inode, size, modification and change times in nanoseconds). An entry is used only
while the state file still has that signature and it was already older than RACY_NS when it was read:
every write of a state replaces the file (store.atomic), so a later write gives a new signature unless it
lands within the file system's timestamp granularity of the read, which the age rule excludes. Anything
else (a new run, a changed, restored or hand-edited state, an entry too fresh to trust) is read again.

So the index is a cache that is never believed blindly: a run deleted by hand is gone from the listing, a
missing, corrupt or foreign index is rebuilt from the states, and two processes that write it at once
(each under the lock, each atomically) leave one of two valid caches. Standard library only.
"""

from __future__ import annotations

import json
import os
import time

from fixloop.core.errors import FixloopError
from fixloop.store import layout
from fixloop.store.atomic import write_atomic
from fixloop.store.locking import file_lock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INDEX_FILE = "run-index.json"
# Bump when the facts kept per run change (runs.listing.run_facts or the extra facts of report.runlist):
# an index of another version is rebuilt.
VERSION = 1
# Newer states than this, at the time they were read, are read again: a second write within the file
# system's timestamp granularity could leave the signature as it was (2 s covers the coarsest, FAT).
RACY_NS = 2_000_000_000
LOCK_TIMEOUT_S = 1.0

Signature = tuple[int, int, int, int]


def index_path(root: str | os.PathLike[str]) -> str:
    return os.path.join(layout.fixloop_dir(root), INDEX_FILE)


def signature(path: str) -> Signature | None:
    """(inode, size, mtime ns, ctime ns) of the file at `path`; None when it is not a regular file."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    if found.st_mode & 0o170000 != 0o100000:  # not a regular file
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def trusted(entry: dict[str, Any], current: Signature) -> bool:
    """Whether `entry` still describes the state whose signature is `current`."""
    recorded = entry.get("signature")
    read_at = entry.get("read_at_ns")
    return (
        isinstance(recorded, list)
        and tuple(recorded) == current
        and isinstance(read_at, int)
        and read_at - current[2] > RACY_NS
    )


def new_entry(current: Signature, read_at_ns: int, facts: dict[str, Any]) -> dict[str, Any]:
    return {"signature": list(current), "read_at_ns": read_at_ns, "facts": facts}


def load(root: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The index's entries by run id; empty when the file is missing, unreadable, corrupt or of another
    version (the caller then reads every state and saves a new index)."""
    try:
        with open(index_path(root), "rb") as handle:
            document = json.loads(handle.read())
    except (OSError, ValueError, RecursionError):
        return {}
    runs = document.get("runs") if isinstance(document, dict) and document.get("version") == VERSION else None
    if not isinstance(runs, dict):
        return {}
    return {
        run_id: entry
        for run_id, entry in runs.items()
        if isinstance(entry, dict) and isinstance(entry.get("facts"), dict)
    }


def save(root: str | os.PathLike[str], entries: dict[str, dict[str, Any]]) -> bool:
    """Replace the index with `entries`; False when another process holds its lock for LOCK_TIMEOUT_S or
    it cannot be written (the listing is still right: the next one reads the changed states again)."""
    path = index_path(root)
    data = json.dumps({"version": VERSION, "runs": entries}, ensure_ascii=True, separators=(",", ":"))
    try:
        layout.require_own_dir_inside(root, layout.fixloop_dir(root))
        with file_lock(path, timeout=LOCK_TIMEOUT_S):
            # A cache: it is rebuilt when lost, so it is not worth an fsync on every listing.
            write_atomic(path, data.encode("ascii"), durable=False)
    except (FixloopError, OSError):
        return False
    return True


def now_ns() -> int:
    return time.time_ns()
