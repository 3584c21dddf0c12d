"""A run whose engine was stopped while it ran the project's commands: found and ended by the next start.

While the engine runs a run's verification or tests (after a fixer's edit, that is when the edit is
checked), `engine_busy` keeps `<run_dir>/engine-busy.json` with the engine's pid. The file goes when the
commands end, and stays when the engine is interrupted there (Ctrl-C, SIGTERM, SIGHUP: the command's
process group is killed first, runs.shell_command; or SIGKILL). The next `fixloop start` in the project
(`end_interrupted_runs`) ends every such run whose engine is gone: it rolls back the fixer's edits that
were never verified (store.edits: only what fixloop's agents wrote, files still as they left them), ends
the run `failed` (RUN_INTERRUPTED) and tells the new run what it did, so no unverified edit silently stays
and no run stays `running` forever.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from fixloop.core import timekeeping
from fixloop.core.errors import FixloopError
from fixloop.store import edits, layout
from fixloop.store.atomic import write_atomic

BUSY_FILE = "engine-busy.json"
CODE = "RUN_INTERRUPTED"


@contextlib.contextmanager
def engine_busy(run_dir: Path, doing: str) -> Iterator[None]:
    """Mark `run_dir` busy with `doing` while the block runs; the mark stays when it is interrupted."""
    path = run_dir / BUSY_FILE
    note = {"pid": os.getpid(), "doing": doing, "since_ms": timekeeping.now_ms(timekeeping.default_clock)}
    write_atomic(path, json.dumps(note).encode() + b"\n", durable=False)
    try:
        yield
    except KeyboardInterrupt:
        raise  # interrupted: the mark stays for the next start
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    path.unlink(missing_ok=True)


def _busy_note(run_dir: Path) -> dict[str, Any] | None:
    try:
        note = json.loads((run_dir / BUSY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return note if isinstance(note, dict) and isinstance(note.get("pid"), int) else None


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return True


def unverified_fixes(state: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The snapshots of the review rounds whose fix was never verified nor rolled back."""
    review = state.get("review")
    rounds = review.get("rounds") if isinstance(review, Mapping) else None
    found = []
    for rnd in rounds if isinstance(rounds, list) else []:
        fix = rnd.get("fix") if isinstance(rnd, Mapping) else None
        snapshot = fix.get("snapshot") if isinstance(fix, Mapping) else None
        if isinstance(snapshot, Mapping) and rnd.get("verification") is None and "rollback" not in rnd:
            found.append(snapshot)
    return found


def end_interrupted_runs(root: Path) -> list[dict[str, Any]]:
    """End every run of the project interrupted while its engine ran commands; a WARNING-shaped note
    ({"code", "message", "run_id", "restored", "kept"}) for each."""
    from fixloop.runs.ending import end_run
    from fixloop.runs.lifecycle import load_run

    runs = Path(layout.runs_dir(root))
    notes: list[dict[str, Any]] = []
    for run_dir in sorted(runs.iterdir()) if runs.is_dir() else []:
        busy = _busy_note(run_dir)
        if busy is None or _alive(int(busy["pid"])):
            continue
        try:
            state = load_run(root, run_dir.name)
        except FixloopError:
            continue
        if state.get("status") != "running":
            (run_dir / BUSY_FILE).unlink(missing_ok=True)
            continue
        restored: list[str] = []
        kept: list[str] = []
        for snapshot in unverified_fixes(state):
            report = edits.rollback(snapshot)
            restored += [*report["restored"], *report["deleted"]]
            kept += [str(item["path"]) for item in report["kept"]] + list(report["left_as_is"])
        summary = {"interrupted": str(busy.get("doing") or "commands"), "rolled_back": restored, "kept": kept}
        end_run(root, run_dir.name, "failed", summary)
        (run_dir / BUSY_FILE).unlink(missing_ok=True)
        notes.append(_note(run_dir.name, str(busy.get("doing") or "its commands"), restored, kept))
    return notes


def _note(run_id: str, doing: str, restored: list[str], kept: list[str]) -> dict[str, Any]:
    message = f"Run {run_id} was interrupted while the engine ran {doing}; it is ended failed."
    if restored:
        message += f" The fixer's unverified edits were rolled back: {', '.join(sorted(restored))}."
    if kept:
        message += f" Left as they are (changed since, or not fixloop's edits): {', '.join(sorted(kept))}."
    if not restored and not kept:
        message += " It left no unverified edit."
    return {"code": CODE, "message": message, "run_id": run_id, "restored": restored, "kept": kept}
