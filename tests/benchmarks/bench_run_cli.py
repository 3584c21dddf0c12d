"""Wall time of the run-engine CLI calls a workflow makes (median of N process runs). Prints figures only.

Usage: python3 tests/benchmarks/bench_run_cli.py [N]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIB = Path(__file__).resolve().parents[2] / "scripts" / "lib"


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        (root / "a.py").write_text("x = 1\n")
        env = {**os.environ, "PYTHONPATH": str(LIB), "CLAUDE_PROJECT_DIR": str(root)}
        env.pop("CLAUDE_CODE_SESSION_ID", None)

        def fixloop(*args: str) -> tuple[float, str]:
            began = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "fixloop", *args], cwd=root, env=env, capture_output=True, text=True
            )
            return time.perf_counter() - began, done.stdout

        timings: dict[str, list[float]] = {}
        for _ in range(rounds):
            elapsed, out = fixloop("run", "start", "--workflow", "review", "--git-diff")
            timings.setdefault("run start --git-diff", []).append(elapsed)
            run_id = json.loads(out)["run_id"]
            for label, args in (
                ("run phase --start", ("run", "phase", run_id, "--start", "0")),
                ("run phase --end", ("run", "phase", run_id, "--end", "0", "--status", "success")),
                ("verify (nothing configured)", ("verify", run_id)),
                ("policy confidence", ("policy", "confidence", "70")),
                ("run show", ("run", "show", run_id)),
                ("run end", ("run", "end", run_id, "--status", "success")),
                ("log summary", ("log", "summary", run_id)),
            ):
                timings.setdefault(label, []).append(fixloop(*args)[0])
        for label, values in timings.items():
            print(f"{label:32s} median {statistics.median(values) * 1000:7.1f} ms  (n={len(values)})")


if __name__ == "__main__":
    main()
