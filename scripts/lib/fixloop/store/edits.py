"""An editing agent's changes to the project: begun before it works, rolled back exactly when they fail.

`begin` snapshots the project (store.snapshot) and opens a touch window (store.touches), so the hooks keep
the prior content of every file a fixloop agent edits with Edit/Write. `rollback` then undoes exactly those
edits, by these rules:

- a touched file whose content is still what the agent's last write left is restored to its prior
  content; a file the agent created is deleted (and the directories its creation made, when empty);
- a touched file that changed after the agent's last write, or between two of its writes (the user
  edited it too), keeps its current content: WARNING ROLLBACK_KEPT_USER_EDIT;
- a path that resolves outside the project (through a symbolic link), or through a symbolic link that was
  not there when the agent touched it, is never written: WARNING ROLLBACK_REFUSED;
- a file that changed since `begin` without a completed Edit/Write of the agent (a Bash command, the user)
  is left as it is: WARNING ROLLBACK_LEFT_AS_IS, with the files;
- a touch whose prior content could not be kept (the hook failed, or the file was over
  file_state.MAX_PRIOR_BYTES) leaves the file as it is: WARNING ROLLBACK_NO_PRIOR.

Every workflow whose agents edit the project uses this pair: `begin(project, run_dir, label, files)` before
the dispatch (keep what it returns in the run state), `rollback(that)` when the change must go.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from fixloop.core.errors import FixloopError
from fixloop.store import file_state, snapshot, touches

KEPT = "ROLLBACK_KEPT_USER_EDIT"
REFUSED = "ROLLBACK_REFUSED"
LEFT_AS_IS = "ROLLBACK_LEFT_AS_IS"
NO_PRIOR = "ROLLBACK_NO_PRIOR"
NO_TOUCHES = "ROLLBACK_NO_TOUCHES"


class RollbackWarning(TypedDict):
    code: str
    message: str
    files: list[str]


class KeptFile(TypedDict):
    path: str
    code: str
    reason: str


class RollbackReport(TypedDict):
    """What a rollback did: files restored or deleted, and the ones it kept, refused or left as is."""

    label: str | None
    restored: list[str]
    deleted: list[str]
    kept: list[KeptFile]
    refused: list[KeptFile]
    left_as_is: list[str]
    warnings: list[RollbackWarning]


def begin(
    project: Path, run_dir: Path, label: str, files: Sequence[str] = (), now_ms: int | None = None
) -> dict[str, Any]:
    """Snapshot the project into `<run_dir>/snapshots/<label>/` (with `files` named by the task) and open the
    touch window `label`. Returns the snapshot summary, plus `run_dir` and `touches` (the label)."""
    touches.check_label(label)
    summary = snapshot.take(project, run_dir / "snapshots" / label, files, now_ms=now_ms)
    touches.open_window(run_dir, project, label, baseline=summary, now_ms=summary["taken_at_ms"])
    return {**summary, "run_dir": str(run_dir), "touches": label}


def end(begun: Mapping[str, Any]) -> None:
    """Stop recording edits for `begun` (what `begin` returned); a later rollback still works."""
    label = begun.get("touches")
    if isinstance(label, str):
        touches.close_window(str(begun["run_dir"]), label)


def changed_since(begun: Mapping[str, Any]) -> list[str]:
    """Every project file changed since `begin`, by anyone (store.snapshot.changed_since)."""
    return snapshot.changed_since(begun)


def touched_since(begun: Mapping[str, Any]) -> list[str]:
    """The project files a fixloop agent wrote (a `wrote` ledger line) in the touch window of `begin`."""
    label = begun.get("touches")
    if not isinstance(label, str):
        return []
    lines = touches.window_lines(str(begun["run_dir"]), label)
    wrote = (line for line in lines if line.get("kind") == "wrote" and not line.get("refused"))
    return sorted({str(line["path"]) for line in wrote})


def _report(label: str | None) -> RollbackReport:
    return {
        "label": label,
        "restored": [],
        "deleted": [],
        "kept": [],
        "refused": [],
        "left_as_is": [],
        "warnings": [],
    }


def rollback(begun: Mapping[str, Any]) -> RollbackReport:
    """Undo the agents' recorded edits since `begin` (see the module's rules); touch nothing else."""
    label = begun.get("touches")
    if not isinstance(label, str):
        report = _report(None)
        report["warnings"].append(
            {
                "code": NO_TOUCHES,
                "message": "No edits were recorded for this change (it began without a touch window); "
                "nothing was rolled back.",
                "files": [],
            }
        )
        return report
    run_dir = str(begun["run_dir"])
    window = touches.read_window(run_dir, label)
    touches.close_window(run_dir, label)
    report = _report(label)
    lines = touches.window_lines(run_dir, label)
    priors = touches.read_priors(window)
    touched = sorted(set(priors) | {str(line["path"]) for line in lines if line.get("refused") is None})
    for path in touched:
        _undo(window, path, priors.get(path), [line for line in lines if line.get("path") == path], report)
    refused_paths = sorted({str(line["path"]) for line in lines if line.get("refused") is not None})
    for path in refused_paths:
        _refuse(report, path, "it resolves outside the project or into fixloop's own files")
    _left_as_is(window, set(touched) | set(refused_paths), report)
    report["restored"].sort()
    report["deleted"].sort()
    return report


# ---- one path --------------------------------------------------------------------------------------


def _refuse(report: RollbackReport, path: str, why: str) -> None:
    reason = f"not rolled back: {why}"
    report["refused"].append({"path": path, "code": REFUSED, "reason": reason})
    report["warnings"].append({"code": REFUSED, "message": f"{path} was {reason}.", "files": [path]})


def _keep(report: RollbackReport, path: str, code: str, why: str) -> None:
    report["kept"].append({"path": path, "code": code, "reason": why})
    report["warnings"].append({"code": code, "message": f"{path}: {why}.", "files": [path]})


def _target(project: str, path: str) -> tuple[str | None, str]:
    """The absolute path to write for `path`, or None and why it must not be written."""
    target = os.path.normpath(os.path.join(project, path))
    real = os.path.realpath(target)
    if not touches.inside(os.path.realpath(project), real):
        return None, f"it resolves outside the project, to {real}"
    if real != target:
        return None, f"a symbolic link now stands in its path (it resolves to {real})"
    return target, ""


def _undo(
    window: Mapping[str, Any],
    path: str,
    prior: Mapping[str, Any] | None,
    lines: list[dict[str, Any]],
    report: RollbackReport,
) -> None:
    project = str(window["project"])
    target, why = _target(project, path)
    if target is None:
        _refuse(report, path, why)
        return
    if prior is None:
        _keep(report, path, NO_PRIOR, "its content before the edit was not kept, so it stays as it is")
        return
    kind, sha256, _mode = file_state.read_state(target)
    if sha256 == file_state.TOO_LARGE:
        _keep(
            report,
            path,
            KEPT,
            "it is now too large to compare with the agent's last edit, so it stays as it is",
        )
        return
    if (kind, sha256) == (prior["kind"], prior["sha256"]):
        return  # as it was: nothing to undo
    writes = [line for line in lines if line["kind"] == "wrote"]
    if not writes:
        report["left_as_is"].append(path)  # changed, but no edit of the agent completed on it
        return
    last = writes[-1]
    if (kind, sha256) != (last.get("after_kind"), last.get("after_sha256")) or _edited_between(lines):
        _keep(
            report,
            path,
            KEPT,
            "it changed after the agent's last edit or between its edits; the current version is kept",
        )
        return
    if prior["kind"] == "absent":
        os.unlink(target)
        _remove_new_dirs(project, target, prior.get("new_dirs"))
        report["deleted"].append(path)
    elif prior["kind"] == "file":
        touches.restore_prior(window, prior, target)
        report["restored"].append(path)
    else:
        _refuse(report, path, "it was not a regular file before the edit")


def _edited_between(lines: list[dict[str, Any]]) -> bool:
    """Whether a touch found the file other than the agent's previous write had left it."""
    last_write: dict[str, Any] | None = None
    for line in lines:
        if line["kind"] == "wrote":
            last_write = line
        elif last_write is not None and (line.get("before_kind"), line.get("before_sha256")) != (
            last_write.get("after_kind"),
            last_write.get("after_sha256"),
        ):
            return True
    return False


def _remove_new_dirs(project: str, target: str, new_dirs: object) -> None:
    """Remove the directories the agent's new file needed, up to `new_dirs`, while they are empty."""
    if not isinstance(new_dirs, str):
        return
    top = os.path.normpath(os.path.join(project, new_dirs))
    directory = os.path.dirname(target)
    while touches.inside(project, directory) and (directory == top or directory.startswith(top + os.sep)):
        try:
            if not stat.S_ISDIR(os.lstat(directory).st_mode):
                return
            os.rmdir(directory)
        except OSError:
            return
        directory = os.path.dirname(directory)


def _left_as_is(window: Mapping[str, Any], touched: set[str], report: RollbackReport) -> None:
    """Files that changed since the window opened without an Edit/Write of the agent: named, never undone."""
    baseline = window.get("baseline")
    changed: set[str] = set(report["left_as_is"])
    if isinstance(baseline, dict):
        try:
            changed |= set(snapshot.changed_since(baseline)) - touched
        except FixloopError as failure:
            report["warnings"].append(
                {
                    "code": failure.code,
                    "message": f"Cannot list the files changed without a recorded edit: {failure.message}",
                    "files": [],
                }
            )
    report["left_as_is"] = sorted(changed)
    if changed:
        report["warnings"].append(
            {
                "code": LEFT_AS_IS,
                "message": f"{len(changed)} file(s) changed without a recorded Edit/Write of the agent "
                f"(a command it ran, or the user) and were left as they are: {', '.join(sorted(changed))}.",
                "files": sorted(changed),
            }
        )
