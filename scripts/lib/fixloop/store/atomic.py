"""The one way fixloop replaces a file: readers see the old content or the new, never a mix.

Standard library only, without tempfile or pathlib: hooks write their private state with it.
"""

from __future__ import annotations

import itertools
import os

_TEMP_NAMES = itertools.count()
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


def write_atomic(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data`, creating its directory if needed.

    `durable` also flushes the file and its directory to disk, so the new content survives a power cut:
    the run state needs that; the hooks' private state (rebuilt from the ledger when lost) does not.
    """
    target = os.fspath(path)
    directory, name = os.path.split(target)
    directory = directory or "."
    os.makedirs(directory, exist_ok=True)
    while True:
        temp = os.path.join(directory, f".{name}.{os.getpid()}.{next(_TEMP_NAMES)}.tmp")
        try:
            fd = os.open(temp, _CREATE_FLAGS, 0o644)
            break
        except FileExistsError:  # left by a killed process that had our pid
            continue
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        try:  # noqa: SIM105 - contextlib costs an import on the hooks' path
            os.unlink(temp)
        except OSError:
            pass
        raise
    if durable:
        fsync_directory(directory)


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sweep_stale_temps(directory: str | os.PathLike[str]) -> list[str]:
    """Remove the temporary files write_atomic left in `directory` when a process was killed mid-write (its
    pid is no longer alive); the names removed. Files of live processes are left alone."""
    removed: list[str] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        parts = name.split(".")
        # .<name>.<pid>.<n>.tmp
        if not (name.startswith(".") and name.endswith(".tmp") and len(parts) >= 5 and parts[-3].isdigit()):
            continue
        if _alive(int(parts[-3])):
            continue
        try:
            os.unlink(os.path.join(directory, name))
            removed.append(name)
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True
