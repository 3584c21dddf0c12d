"""Process time of the CLI's lightest paths, next to a bare `python3 -c pass` (median of N runs).

Prints wall time and CPU time (user + system of the child) for each command. Run from the repository root:
`python tests/benchmarks/bench_cli_start.py [N]`.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "scripts" / "lib"


def measure(command: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _pid, status, usage = os.wait4(child.pid, 0)
        walls.append((time.perf_counter() - started) * 1000)
        cpus.append((usage.ru_utime + usage.ru_stime) * 1000)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"bench: {' '.join(command)} failed")
    return statistics.median(walls), statistics.median(cpus)


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    python = sys.executable
    with tempfile.TemporaryDirectory() as project:
        env = {**os.environ, "PYTHONPATH": str(LIB), "CLAUDE_PROJECT_DIR": project}
        cases = {
            "python3 -c pass": [python, "-c", "pass"],
            "fixloop --version": [python, "-m", "fixloop", "--version"],
            "fixloop phases bugfix": [python, "-m", "fixloop", "phases", "bugfix"],
            "fixloop policy confidence 65": [python, "-m", "fixloop", "policy", "confidence", "65"],
        }
        baseline_wall, baseline_cpu = measure(cases["python3 -c pass"], env, runs)
        print(f"{'command':32} {'wall ms':>9} {'cpu ms':>9} {'x bare':>7}   (median of {runs})")
        for label, command in cases.items():
            wall, cpu = measure(command, env, runs)
            print(f"{label:32} {wall:9.1f} {cpu:9.1f} {wall / baseline_wall:7.2f}")
        print(f"bare interpreter: {baseline_wall:.1f} ms wall, {baseline_cpu:.1f} ms cpu")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
