"""What fixloop's editing agents touched, so that a rollback undoes exactly their changes and nothing else.

Before the engine lets an editing agent (the review fixer, the bugfix implementer) change the project, it
opens a *touch window* of the run (`open_window`; store.edits.begin also snapshots the project). While a
window is the run's active one, the Edit/Write hooks (fixloop.hookside.file_touch) call `note` before
each edit by a fixloop agent and after it succeeded:

- the first touch of a path in the window keeps the path's prior content (or that it did not exist) in
  `<run_dir>/touches/<label>/priors/`: `<key>.json` says what was there, `<key>.<unique>.data` holds it;
- every touch is a ledger line (store.ledger) of kind `touch`, every completed write one of kind `wrote`,
  with the agent type and id, the tool, the tool_use_id, the window's label (null when none was open),
  the path and the content's kind and sha256 before (`touch`) or after (`wrote`).

Paths are resolved (symbolic links followed) and kept relative to the project, with `/`. A path that
resolves outside the project, or into fixloop's own files, is recorded with `refused` set and nothing of
it is kept: a rollback never writes there. store.edits reads all this back to undo a window.

Standard library only, at the os level: the hooks import this module on every edit of a fixloop agent.
"""

from __future__ import annotations

import os

from fixloop.core import jsoncodec
from fixloop.core.errors import FixloopError
from fixloop.store import file_state, ledger
from fixloop.store.file_state import TOO_LARGE, read_state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fixloop.store.file_state import FileState

    PathText = str | os.PathLike[str]

TOUCHES_DIR = "touches"
ACTIVE_FILE = "active.json"
WINDOW_FILE = "window.json"
PRIORS_DIR = "priors"
TOUCH_KINDS = ("touch", "wrote")
# fixloop's own files change while agents work (run state, logs): they are never an agent's edit to undo.
OWN_PREFIXES = (".claude/fixloop/", ".claude/logs/")
OUTSIDE_PROJECT = "outside_project"
FIXLOOP_FILE = "fixloop_file"
LABEL_MAX_LENGTH = 64
_LABEL_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


def check_label(label: str) -> str:
    if not (
        isinstance(label, str)
        and 0 < len(label) <= LABEL_MAX_LENGTH
        and _LABEL_CHARACTERS.issuperset(label)
        and label[0] not in "_-"
    ):
        raise FixloopError(
            "INVALID_LABEL", f"Invalid touch window label {label!r}: use letters, digits, '-' and '_'."
        )
    return label


def touches_dir(run_dir: PathText) -> str:
    return os.path.join(run_dir, TOUCHES_DIR)


def window_dir(run_dir: PathText, label: str) -> str:
    return os.path.join(run_dir, TOUCHES_DIR, check_label(label))


# ---- windows ---------------------------------------------------------------------------------------


def open_window(
    run_dir: PathText,
    project: PathText,
    label: str,
    *,
    baseline: Mapping[str, Any] | None = None,
    now_ms: int | None = None,
) -> dict[str, Any]:
    """Make `label` the run's active window (emptied first when it was used before) and return it.

    `baseline` is the snapshot (store.snapshot.take) of the project when the window opened: the rollback
    compares with it to name the files that changed without a recorded edit.
    """
    import shutil
    import time

    from fixloop.store.atomic import write_atomic

    directory = window_dir(run_dir, label)
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    os.makedirs(os.path.join(directory, PRIORS_DIR))
    window = {
        "label": label,
        "project": os.path.realpath(project),
        "dir": directory,
        "opened_at_ms": now_ms if now_ms is not None else time.time_ns() // 1_000_000,
        "baseline": dict(baseline) if baseline is not None else None,
    }
    data = jsoncodec.dumps(window, ensure_ascii=False).encode("utf-8") + b"\n"
    write_atomic(os.path.join(directory, WINDOW_FILE), data)
    write_atomic(os.path.join(touches_dir(run_dir), ACTIVE_FILE), data)
    return window


def close_window(run_dir: PathText, label: str) -> None:
    """Stop keeping prior contents for `label` (nothing happens when another window is the active one)."""
    active = active_window(run_dir)
    if active is not None and active.get("label") == label:
        try:  # noqa: SIM105 - contextlib costs an import on the hooks' path
            os.unlink(os.path.join(touches_dir(run_dir), ACTIVE_FILE))
        except FileNotFoundError:
            pass


def _read_json(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            doc = jsoncodec.loads(handle.read())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def active_window(run_dir: PathText) -> dict[str, Any] | None:
    """The run's open window, or None."""
    window = _read_json(os.path.join(touches_dir(run_dir), ACTIVE_FILE))
    if (
        window is None
        or not isinstance(window.get("label"), str)
        or not isinstance(window.get("project"), str)
        or not isinstance(window.get("dir"), str)
    ):
        return None
    return window


def read_window(run_dir: PathText, label: str) -> dict[str, Any]:
    window = _read_json(os.path.join(window_dir(run_dir, label), WINDOW_FILE))
    if window is None:
        raise FixloopError(
            "TOUCHES_MISSING",
            f"The run keeps no record of edits for {label!r} in {touches_dir(run_dir)}.",
            label=label,
        )
    return window


# ---- paths and contents ----------------------------------------------------------------------------


def inside(real_project: str, real_path: str) -> bool:
    """Whether `real_path` lies under `real_project` (both already resolved; the project itself is not)."""
    return real_path.startswith(real_project.rstrip(os.sep) + os.sep)


def resolve(project: str, file_path: str, cwd: str | None = None) -> tuple[str, str | None]:
    """(the project-relative path `file_path` resolves to, None) or (the resolved path, why it is refused:
    OUTSIDE_PROJECT or FIXLOOP_FILE)."""
    path = file_path if os.path.isabs(file_path) else os.path.join(cwd or project, file_path)
    real_project = os.path.realpath(project)
    real = os.path.realpath(path)
    if not inside(real_project, real):
        return real, OUTSIDE_PROJECT
    relative = os.path.relpath(real, real_project).replace(os.sep, "/")
    if any(relative.startswith(prefix) for prefix in OWN_PREFIXES):
        return relative, FIXLOOP_FILE
    return relative, None


def _write_new(path: str, data: bytes) -> None:
    fd = os.open(path, _CREATE, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def prior_key(relative: str) -> str:
    return ledger.message_sha256(relative)[:40]


def _first_new_dir(real_project: str, absolute: str) -> str | None:
    """The top directory above `absolute` that does not exist yet (relative), or None."""
    top: str | None = None
    directory = os.path.dirname(absolute)
    while inside(real_project, directory) and not os.path.exists(directory):
        top = directory
        directory = os.path.dirname(directory)
    return os.path.relpath(top, real_project).replace(os.sep, "/") if top is not None else None


def keep_prior(
    window: Mapping[str, Any],
    relative: str,
    absolute: str,
    *,
    agent_id: object,
    tool_use_id: object,
    ts_ms: int,
) -> tuple[bool, FileState]:
    """Keep what is at `absolute` as the prior content of `relative` unless the window already holds one:
    (whether this call kept it, the state it found). The `.json` record is created exclusively and after
    the content it names, so concurrent first touches keep exactly one prior and a record never names a
    missing or partial content. A file over MAX_PRIOR_BYTES is not kept (its state's sha256 is TOO_LARGE)."""
    priors = os.path.join(str(window["dir"]), PRIORS_DIR)
    key = prior_key(relative)
    record = os.path.join(priors, key + ".json")
    if os.path.exists(record):
        return False, read_state(absolute)
    os.makedirs(priors, exist_ok=True)
    data_name = f"{key}.{os.getpid()}.{ts_ms}.data"
    data_path = os.path.join(priors, data_name)
    try:
        state = read_state(absolute, copy_to=data_path)
    except BaseException:
        file_state.unlink_quietly(data_path)
        raise
    kind, sha256, mode = state
    if sha256 == TOO_LARGE:
        return False, state
    if kind != "file":
        file_state.unlink_quietly(data_path)
    project = str(window["project"])
    doc = {
        "path": relative,
        "kind": kind,
        "sha256": sha256,
        "mode": mode,
        "data": data_name if kind == "file" else None,
        "new_dirs": _first_new_dir(project, os.path.join(project, relative)) if kind == "absent" else None,
        "ts_ms": ts_ms,
        "agent_id": agent_id,
        "tool_use_id": tool_use_id,
    }
    try:
        _write_new(record, jsoncodec.dumps(doc, ensure_ascii=False).encode("utf-8") + b"\n")
    except FileExistsError:
        file_state.unlink_quietly(data_path)
        return False, state
    return True, state


def read_priors(window: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Path -> the prior record kept at its first touch in `window`."""
    priors = os.path.join(str(window["dir"]), PRIORS_DIR)
    try:
        names = sorted(os.listdir(priors))
    except FileNotFoundError:
        return {}
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        if name.endswith(".json"):
            doc = _read_json(os.path.join(priors, name))
            if doc is not None and isinstance(doc.get("path"), str):
                found[doc["path"]] = doc
    return found


def prior_path(window: Mapping[str, Any], prior: Mapping[str, Any]) -> str:
    """Where the prior content of a regular file is kept."""
    return os.path.join(str(window["dir"]), PRIORS_DIR, str(prior["data"]))


def restore_prior(window: Mapping[str, Any], prior: Mapping[str, Any], target: str) -> None:
    """Replace `target` with the prior content kept for it, with the prior's mode."""
    file_state.replace_with_copy(prior_path(window, prior), target, prior.get("mode"))


# ---- what the hooks record -------------------------------------------------------------------------


def note(
    run_dir: PathText,
    kind: str,
    window: Mapping[str, Any] | None,
    project: str,
    file_path: str,
    *,
    cwd: str | None,
    agent_type: object,
    agent: str,
    agent_id: object,
    tool: object,
    tool_use_id: object,
    ts_ms: int,
) -> dict[str, Any]:
    """Record one edit of a fixloop agent: kind "touch" before it (keeping the prior content on the
    window's first touch of the path) or "wrote" after it. `project` counts only when no window is open.
    Returns the ledger line."""
    if window is not None:
        project = str(window["project"])
    path, refused = resolve(project, file_path, cwd)
    line: dict[str, Any] = {
        "kind": kind,
        "ts_ms": ts_ms,
        "agent_type": agent_type,
        "agent": agent,
        "agent_id": agent_id,
        "tool": tool,
        "tool_use_id": tool_use_id,
        "window": window.get("label") if window is not None else None,
        "path": path,
        "refused": refused,
    }
    if refused is None:
        absolute = os.path.join(os.path.realpath(project), path)
        if kind == "touch" and window is not None:
            line["first"], state = keep_prior(
                window, path, absolute, agent_id=agent_id, tool_use_id=tool_use_id, ts_ms=ts_ms
            )
        else:
            state = read_state(absolute)
            if kind == "touch":
                line["first"] = False
        side = "before" if kind == "touch" else "after"
        line[f"{side}_kind"], line[f"{side}_sha256"] = state[0], state[1]
    ledger.append(run_dir, line)
    return line


def window_lines(run_dir: PathText, label: str) -> list[dict[str, Any]]:
    """The `touch` and `wrote` ledger lines of window `label`, in file order."""
    return [
        line
        for line in ledger.read(run_dir)
        if line.get("kind") in TOUCH_KINDS and line.get("window") == label
    ]
