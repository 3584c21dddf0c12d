"""SessionStart hook: make the engine's dependencies available without a manual step.

1. Caches the real path of this interpreter in ${CLAUDE_PLUGIN_DATA}/python3-path, so hooks/run-hook
   starts later hooks without a version-manager shim (a pyenv shim costs ~0.2 s per hook process).
2. When the environment ${CLAUDE_PLUGIN_DATA}/venv is missing or stale (its stamp is not the sha256 of
   scripts/requirements.lock), starts `scripts/bootstrap.py ensure` in the background, detached, its
   output in ${CLAUDE_PLUGIN_DATA}/bootstrap.log. The session never waits for it: the entry point
   scripts/fixloop builds on demand too, and waits on the same lock when a build is under way.
3. Appends `export FIXLOOP_DATA=<data dir>` to $CLAUDE_ENV_FILE, so that scripts/fixloop run from the
   Bash tool (which has no CLAUDE_PLUGIN_DATA) finds the same environment.
Prints nothing; any failure is swallowed (exit 0).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
sys.path.insert(0, str(SCRIPTS))

import bootstrap  # noqa: E402

PYTHON_PATH_FILE = "python3-path"
BUILD_OUTPUT = "bootstrap.log"


def cache_interpreter(data: Path) -> None:
    if sys.version_info < bootstrap.MIN_PYTHON or not sys.executable:
        return
    target = data / PYTHON_PATH_FILE
    wanted = sys.executable + "\n"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if target.read_text(encoding="utf-8") == wanted:
            return
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    temp.write_text(wanted, encoding="utf-8")
    os.replace(temp, target)


def export_data_dir(data: Path) -> None:
    """Tell the Bash tool where the data directory is: `export FIXLOOP_DATA=...` in $CLAUDE_ENV_FILE, which
    Claude Code sources before Bash commands (the Bash tool has no CLAUDE_PLUGIN_DATA; without this, the
    entry point would build a second environment under ~/.cache/fixloop)."""
    env_file = os.environ.get("CLAUDE_ENV_FILE")
    if not env_file:
        return
    import shlex

    line = f"export FIXLOOP_DATA={shlex.quote(str(data))}\n"
    try:
        with open(env_file, encoding="utf-8") as handle:
            if line in handle.read():
                return
    except FileNotFoundError:
        pass
    with open(env_file, "a", encoding="utf-8") as handle:
        handle.write(line)


def build_running(data: Path) -> bool:
    """True when another process holds the build lock right now."""
    try:
        fd = os.open(data / "venv.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the lock if we took it
    return False


def start_build(data: Path) -> bool:
    """Start `bootstrap.py ensure` detached from this hook; True when one was started."""
    if os.environ.get("FIXLOOP_NO_BUILD") or os.environ.get("FIXLOOP_PYTHON"):
        return False
    if bootstrap.is_fresh(data) or build_running(data):
        return False
    with open(data / BUILD_OUTPUT, "ab") as output:
        subprocess.Popen(
            [sys.executable, str(SCRIPTS / "bootstrap.py"), "ensure", "--data", str(data)],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,  # outlives this hook; Claude Code does not wait for it
            close_fds=True,
        )
    return True


def main() -> int:
    try:
        with contextlib.suppress(OSError, ValueError):
            sys.stdin.buffer.read()  # the payload is not needed; drain it
        data = bootstrap.data_dir()
        data.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            cache_interpreter(data)
        with contextlib.suppress(OSError, UnicodeDecodeError):
            export_data_dir(data)
        start_build(data)
    except Exception:  # fail open: a session never breaks because of this hook
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
