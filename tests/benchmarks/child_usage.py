"""CPU seconds and peak RSS of one child process, not inflated by the benchmark's own memory.

A process started from the benchmark (fork or vfork, then exec) inherits the benchmark's high-water RSS as
its own ru_maxrss: a command measured that way never reads below what the benchmark itself holds. So
commands are started by a small launcher process, whose memory is the floor instead (an interpreter that
runs `pass` reads about 14 MB).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_LAUNCHER = r"""
import json, os, subprocess, sys
for line in sys.stdin:
    argv, cwd, env = json.loads(line)
    with open(os.devnull, "wb") as sink:
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=sink, stderr=sink)
        _pid, status, usage = os.wait4(child.pid, 0)
    answer = [usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)]
    print(json.dumps(answer), flush=True)
"""


class Launcher:
    """`measure(argv, cwd, env)` -> (CPU seconds, peak RSS in MB, exit code) of that command."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def measure(self, argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(json.dumps([argv, str(cwd), env]) + "\n")
        self._process.stdin.flush()
        cpu, peak, code = json.loads(self._process.stdout.readline())
        return float(cpu), float(peak), int(code)

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait()
