"""Run one of the project's commands through the shell, the way every verification and test run does.

The command runs in the project directory with no standard input, its output (and errors) going to a file
the caller holds (so a background child that keeps the output open cannot hang us), in a process group of
its own: when the command ends, times out or we are interrupted, the whole group is killed, so nothing it
started outlives it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path
from typing import BinaryIO


def run_in_own_group(command: str, cwd: Path, timeout_seconds: float, output: BinaryIO) -> int | None:
    """The command's exit code, or None when it timed out. OSError when it cannot start."""
    process = subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        return process.wait(timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        return None
    finally:
        # Whatever the command left running in its group (a timed-out run, a stray background job).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
