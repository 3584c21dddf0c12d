"""How well each failure parser reads real runs: precision and recall of the failing tests it finds against
those the runner's own machine-readable output of the same failures names, and the time it takes.

    python3 tests/benchmarks/bench_parsers.py

The runs are the checked-in captures of tests/fixtures/runners/capture.py (tests/fixtures/logs); the
comparison is tests/unit/failures/real_runs.py, which tests/unit/failures/test_real_runs.py asserts.
Prints a Markdown table; asserts nothing.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "scripts" / "lib"), str(ROOT / "tests" / "unit")]

from failures.logfixtures import LOGS  # noqa: E402
from failures.real_runs import REAL_RUNS, agreement  # noqa: E402

from fixloop.failures import parse  # noqa: E402

ROUNDS = 20


def main() -> int:
    print("| run | reference | parser | failing tests | found | precision | recall | parse ms |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for run in REAL_RUNS:
        result = agreement(run)
        text = (LOGS / run.output).read_text(encoding="utf-8")
        started = time.perf_counter()
        for _ in range(ROUNDS):
            parse(text)
        elapsed_ms = (time.perf_counter() - started) * 1000 / ROUNDS
        expected, found = sum(result.expected.values()), sum(result.found.values())
        print(
            f"| {run.name} | {run.reference} | {result.detected} | {expected} | {found} "
            f"| {result.precision:.2f} | {result.recall:.2f} | {elapsed_ms:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
