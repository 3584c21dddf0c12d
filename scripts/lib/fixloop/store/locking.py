"""An exclusive advisory lock on `<file>.lock`, shared by every process that writes `<file>`.

Standard library only, without pathlib or contextlib: hooks take this lock on subagent calls.
"""

from __future__ import annotations

import fcntl
import os
import time

from fixloop.core.errors import FixloopError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType


def lock_path_for(path: str | os.PathLike[str]) -> str:
    return os.fspath(path) + ".lock"


class file_lock:
    """`with file_lock(path):` holds an exclusive flock on `<path>.lock` for the body of the `with`.

    The lock belongs to the open file description, so it is not re-entrant: a second file_lock on the
    same path in the same process waits for the first and times out.
    """

    def __init__(self, path: str | os.PathLike[str], timeout: float = 10.0, poll: float = 0.01) -> None:
        self.lock_path = lock_path_for(path)
        self.timeout = timeout
        self.poll = poll
        self._fd: int | None = None

    def __enter__(self) -> None:
        try:
            os.makedirs(os.path.dirname(self.lock_path) or ".", exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as error:
            raise FixloopError(
                "LOCK_FAILED",
                f"Cannot open lock file {self.lock_path}: {error.strerror or error}.",
                path=self.lock_path,
            ) from None
        try:
            deadline = time.monotonic() + self.timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise FixloopError(
                            "LOCK_TIMEOUT",
                            f"Timed out after {self.timeout:g}s waiting for {self.lock_path}.",
                            path=self.lock_path,
                            timeout_s=self.timeout,
                        ) from None
                    time.sleep(self.poll)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
