"""What is at a path, read in bounded memory: its kind, sha256 and mode, and copies of a regular file.

Files are read and hashed in chunks of CHUNK_BYTES, so a hook's memory stays small whatever a file's size;
a copy shares the file's blocks where the file system can (a reflink), else it is written chunk by chunk
while it is hashed. A file over MAX_PRIOR_BYTES is neither hashed nor copied (doing so could outlast a
hook's timeout): its sha256 is TOO_LARGE.

Standard library only: the edit hooks import this module on every edit of a fixloop agent.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    FileState = tuple[str, str | None, int | None]

_READ = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
CHUNK_BYTES = 1 << 20
MAX_PRIOR_BYTES = 512 << 20
TOO_LARGE = "too_large"
_FICLONE = 0x40049409  # Linux ioctl: the copy shares the file's blocks (btrfs, XFS) and costs no time
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


def _sha256() -> Any:
    """A sha256 object from the C module hashlib itself falls back to (no OpenSSL load on the hooks'
    path; `_sha2` since Python 3.12), else hashlib's."""
    for name in ("_sha256", "_sha2"):
        try:
            return __import__(name).sha256()
        except (ImportError, AttributeError):
            continue
    import hashlib

    return hashlib.sha256()


def _open_regular(absolute: str) -> tuple[str, int | None, int | None, int]:
    """("absent" | "other" | "file", an open descriptor of the file or None, its mode, its size), never
    following a final symbolic link and never blocking on a FIFO."""
    try:
        info = os.lstat(absolute)
    except (FileNotFoundError, NotADirectoryError):
        return "absent", None, None, 0
    if not stat.S_ISREG(info.st_mode):
        return "other", None, None, 0
    try:
        fd = os.open(absolute, _READ)
    except (FileNotFoundError, NotADirectoryError):
        return "absent", None, None, 0
    except OSError:
        return "other", None, None, 0
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return "other", None, None, 0
    return "file", fd, stat.S_IMODE(info.st_mode), info.st_size


def _hash_and_copy(fd: int, out: int | None) -> str:
    """sha256 of what `fd` reads, copied to `out` on the way (unless None), in chunks."""
    digest = _sha256()
    while True:
        chunk = os.read(fd, CHUNK_BYTES)
        if not chunk:
            return str(digest.hexdigest())
        digest.update(chunk)
        if out is not None:
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view) :]


def _clone(source: int, out: int) -> bool:
    """Whether the kernel made `out` share `source`'s blocks (a copy-on-write file system)."""
    try:
        import fcntl

        fcntl.ioctl(out, _FICLONE, source)
    except (ImportError, OSError):
        return False
    return True


def read_state(absolute: str, copy_to: str | None = None) -> FileState:
    """(kind "absent" | "file" | "other", sha256, mode) of what is at `absolute`, not following a final
    symbolic link (a symlink is "other": fixloop writes none). With `copy_to`, a regular file's content is
    also copied to that new path, and the sha256 is the copy's. A file over MAX_PRIOR_BYTES is neither
    hashed nor copied: its sha256 is TOO_LARGE."""
    kind, fd, mode, size = _open_regular(absolute)
    if fd is None:
        return kind, None, None
    try:
        if size > MAX_PRIOR_BYTES:
            return kind, TOO_LARGE, mode
        if copy_to is None:
            return kind, _hash_and_copy(fd, None), mode
        out = os.open(copy_to, _CREATE, 0o600)
        try:
            if _clone(fd, out):
                return kind, _hash_and_copy(out, None), mode
            return kind, _hash_and_copy(fd, out), mode
        finally:
            os.close(out)
    finally:
        os.close(fd)


def unlink_quietly(path: str) -> None:
    try:  # noqa: SIM105 - contextlib costs an import on the hooks' path
        os.unlink(path)
    except FileNotFoundError:
        pass


def replace_with_copy(source: str, target: str, mode: object) -> None:
    """Replace `target` with a copy of `source` and give it `mode` (0o644 when not an int): readers see the
    old or the new file, never a partial one."""
    temp = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.{os.getpid()}.fixloop-copy")
    unlink_quietly(temp)
    fd = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
    try:
        out = os.open(temp, _CREATE, 0o600)
        try:
            if not _clone(fd, out):
                _hash_and_copy(fd, out)
        finally:
            os.close(out)
        os.chmod(temp, mode if isinstance(mode, int) else 0o644)
        os.replace(temp, target)
    except BaseException:
        unlink_quietly(temp)
        raise
    finally:
        os.close(fd)
