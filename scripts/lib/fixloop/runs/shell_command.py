"""Run one of the project's commands through the shell (or, an argument list, without one), the way every
verification and test run does.

The command runs in the project directory with no standard input, its output (and errors) going to a file
the caller holds (so a background child that keeps the output open cannot hang us), in a process group of
its own: when the command ends, times out or we are interrupted, the whole group is killed, so nothing it
started outlives it. Interrupted means SIGINT (KeyboardInterrupt), and also SIGTERM and SIGHUP (how Claude
Code ends a hook that runs too long, or a closed terminal ends its jobs): while the command runs, those two
raise `Interrupted` instead of ending the interpreter at once, so the group is killed before we go.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import BinaryIO

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived while a project command ran (a KeyboardInterrupt, as SIGINT gives)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Interrupted inside the block (main thread only; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _raise_interrupted) for signum in ENDING_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run_in_own_group(
    command: str | Sequence[str], cwd: Path, timeout_seconds: float, output: BinaryIO
) -> int | None:
    """The command's exit code, or None when it timed out. OSError when it cannot start; Interrupted (or
    KeyboardInterrupt) when we are told to stop, after the command's group is killed. A string runs through
    the shell; an argument list runs as it is, with no shell."""
    with _signals_interrupt():
        process: subprocess.Popen[bytes] | None = None
        try:
            process = subprocess.Popen(
                command if isinstance(command, str) else list(command),
                shell=isinstance(command, str),
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            return process.wait(timeout=timeout_seconds)
        except subprocess.TimeoutExpired:
            return None
        finally:
            # Whatever the command left running in its group (a timed-out run, a stray background job).
            if process is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
