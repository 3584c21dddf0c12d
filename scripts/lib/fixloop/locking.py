"""An exclusive advisory lock on `<file>.lock`, shared by every process that writes `<file>`."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fixloop.errors import FixloopError


def lock_path_for(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


@contextmanager
def file_lock(path: Path, timeout: float = 10.0, poll: float = 0.01) -> Iterator[None]:
    """Hold an exclusive flock on `<path>.lock` for the body of the `with`.

    The lock belongs to the open file description, so it is not re-entrant: a second file_lock on the
    same path in the same process waits for the first and times out.
    """
    lock_path = lock_path_for(path)
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as error:
        raise FixloopError(
            "LOCK_FAILED",
            f"Cannot open lock file {lock_path}: {error.strerror or error}.",
            path=str(lock_path),
        ) from None
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise FixloopError(
                        "LOCK_TIMEOUT",
                        f"Timed out after {timeout:g}s waiting for {lock_path}.",
                        path=str(lock_path),
                        timeout_s=timeout,
                    ) from None
                time.sleep(poll)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
