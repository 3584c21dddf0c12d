"""SessionStart: make the engine's dependencies available without a manual step.

1. Caches the real path of this interpreter in <data dir>/python3-path, so hooks/run-hook starts later
   hooks without a version-manager shim (a pyenv shim costs ~0.2 s per hook process).
2. When the environment <data dir>/venv is missing or stale, starts `scripts/bootstrap.py ensure` in the
   background, detached, its output in <data dir>/bootstrap.log. The session never waits for it: the
   entry point scripts/fixloop builds on demand too, and waits on the same lock when a build is under way.
3. Appends `export FIXLOOP_DATA=<data dir>` to $CLAUDE_ENV_FILE, so that scripts/fixloop run from the
   Bash tool (which has no CLAUDE_PLUGIN_DATA) finds the same environment.
4. While the environment is being built (by this hook or another session's), prints one `systemMessage`
   that Claude Code shows the user: the first /fixloop command waits for the build, and says so, rather
   than a silent minute or two.
Prints nothing else; any failure is swallowed.

Whether the environment is fresh, and the oldest Python the engine runs on, are scripts/bootstrap.py's
to say: the hook passes them in.
"""

from __future__ import annotations

import os
import sys

from fixloop.core import datadir
from fixloop.hookside import PLUGIN_ROOT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

PYTHON_PATH_FILE = "python3-path"
BUILD_OUTPUT = "bootstrap.log"
BUILD_LOCK = "venv.lock"
BOOTSTRAP = os.path.join(PLUGIN_ROOT, "scripts", "bootstrap.py")


def cache_interpreter(data: str, min_python: tuple[int, int]) -> None:
    if sys.version_info < min_python or not sys.executable:
        return
    target = os.path.join(data, PYTHON_PATH_FILE)
    wanted = sys.executable + "\n"
    try:
        with open(target, encoding="utf-8") as handle:
            if handle.read() == wanted:
                return
    except (OSError, UnicodeDecodeError):
        pass
    temp = os.path.join(data, f".{PYTHON_PATH_FILE}.{os.getpid()}.tmp")
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(wanted)
    os.replace(temp, target)


def export_data_dir(data: str) -> None:
    """Tell the Bash tool where the data directory is: `export FIXLOOP_DATA=...` in $CLAUDE_ENV_FILE, which
    Claude Code sources before Bash commands (the Bash tool has no CLAUDE_PLUGIN_DATA; without this, the
    entry point would build a second environment under ~/.cache/fixloop)."""
    env_file = os.environ.get("CLAUDE_ENV_FILE")
    if not env_file:
        return
    import shlex

    line = f"export FIXLOOP_DATA={shlex.quote(data)}\n"
    try:
        with open(env_file, encoding="utf-8") as handle:
            if line in handle.read():
                return
    except FileNotFoundError:
        pass
    with open(env_file, "a", encoding="utf-8") as handle:
        handle.write(line)


def build_running(data: str) -> bool:
    """True when another process holds the build lock right now."""
    import fcntl

    try:
        fd = os.open(os.path.join(data, BUILD_LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the lock if we took it
    return False


def start_build(data: str, environment_fresh: Callable[[str], bool]) -> bool:
    """Start `bootstrap.py ensure` detached from this hook; True when one was started."""
    if os.environ.get("FIXLOOP_NO_BUILD") or os.environ.get("FIXLOOP_PYTHON"):
        return False
    if environment_fresh(data) or build_running(data):
        return False
    import subprocess

    with open(os.path.join(data, BUILD_OUTPUT), "ab") as output:
        subprocess.Popen(
            [sys.executable, BOOTSTRAP, "ensure", "--data", data],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,  # outlives this hook; Claude Code does not wait for it
            close_fds=True,
        )
    return True


def building_notice(data: str) -> str:
    """The `systemMessage` shown while the environment is built (JSON, one line)."""
    import json

    log = os.path.join(data, BUILD_OUTPUT)
    message = (
        "fixloop is building its Python environment in the background (the first session only: a minute or "
        f"two). A /fixloop command started meanwhile waits for it. Progress: {log}"
    )
    return json.dumps({"systemMessage": message})


def session_start(
    environment_fresh: Callable[[str], bool], min_python: tuple[int, int], stdin: BinaryIO | None = None
) -> int:
    """The whole hook; never raises, returns 0. `environment_fresh(data dir)` says whether the engine's
    environment is built for the current requirements."""
    import contextlib  # not at the top: hooks on the per-call paths import this package too

    try:
        with contextlib.suppress(OSError, ValueError):
            (stdin if stdin is not None else sys.stdin.buffer).read()  # the payload is not needed; drain it
        data = datadir.data_dir()
        os.makedirs(data, exist_ok=True)
        with contextlib.suppress(OSError):
            cache_interpreter(data, min_python)
        with contextlib.suppress(OSError, UnicodeDecodeError):
            export_data_dir(data)
        started = start_build(data, environment_fresh)
        if started or (not os.environ.get("FIXLOOP_PYTHON") and build_running(data)):
            sys.stdout.write(building_notice(data) + "\n")
    except Exception:  # fail open: a session never breaks because of this hook
        pass
    return 0
