"""Fixed cost of `fixloop next` and `fixloop record`: the CPU seconds of the imports they need, each
measured in a fresh interpreter (median of REPEATS).

`before` imports what the engine imported until the workflow registry loaded phases on demand: every
workflow's phases. `after` imports what a review run's `next`/`record` imports now: the driver, the answer
intake and the review workflow's phases only. A bare interpreter start is printed for scale.

    .venv/bin/python tests/benchmarks/bench_engine_imports.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

LIB = Path(__file__).resolve().parents[2] / "scripts" / "lib"
REPEATS = 7
COMMON = (
    "import fixloop.cli.flow, fixloop.workflows.driver, fixloop.workflows.intake\n"
    "from fixloop.workflows.registry import phases_of\n"
    "phases_of('review')\n"
)
EVERY_WORKFLOW = "for name in ('bugfix', 'pr-review', 'execute-plan', 'ci-job'):\n    phases_of(name)\n"
MEASURE = (
    "import resource\n{code}\nu = resource.getrusage(resource.RUSAGE_SELF)\nprint(u.ru_utime + u.ru_stime)\n"
)


def cpu_seconds(code: str) -> float:
    """Median CPU seconds of a fresh interpreter running `code`."""
    times = []
    for _ in range(REPEATS):
        done = subprocess.run(
            [sys.executable, "-c", MEASURE.format(code=code)],
            env={"PYTHONPATH": str(LIB), "PYTHONDONTWRITEBYTECODE": ""},
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(float(done.stdout.strip()))
    return statistics.median(times)


def main() -> None:
    bare = cpu_seconds("pass")
    before = cpu_seconds(COMMON + EVERY_WORKFLOW)
    after = cpu_seconds(COMMON)
    print(f"bare interpreter:                     {bare:.3f} s CPU")
    print(f"before (every workflow's phases):     {before:.3f} s CPU")
    print(f"after  (the review workflow's only):  {after:.3f} s CPU")
    print(f"fixed cost above a bare start: {before - bare:.3f} s -> {after - bare:.3f} s")


if __name__ == "__main__":
    main()
