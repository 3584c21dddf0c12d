"""The first step of execute-plan on large plans: wall time and peak memory (resident set) of one process
that starts the run and asks for its first action.

Cases: 100,000 one-line tasks (1.6 MB, refused at task MAX_PLAN_TASKS + 1 with PLAN_INVALID), exactly
MAX_PLAN_TASKS one-line tasks, and MAX_PLAN_TASKS tasks whose bodies fill the file to nearly MAX_PLAN_BYTES.
Run from the repository root: `python tests/benchmarks/bench_plan.py`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "scripts" / "lib"

# Runs in a fresh interpreter per case, so each peak is that case's alone.
CHILD = """
import json, resource, sys, time
from pathlib import Path
from fixloop.runs import creation
from fixloop.workflows import driver

root = Path(sys.argv[1])
started = time.perf_counter()
run_id = creation.start_run("execute-plan", root=root, inputs={"plan": "plan.md"}, claude_session_id="")[
    "state"
]["run_id"]
action = driver.next_action(root, run_id)
seconds = time.perf_counter() - started
outcome = action.get("error", {}).get("code") or action["action"]
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak_mb, "outcome": outcome}))
"""


def one_line_tasks(count: int) -> str:
    return "# Plan\n\n" + "".join(f"- [ ] Task {number}\n" for number in range(1, count + 1))


def tasks_with_bodies(count: int, max_bytes: int) -> str:
    body_chars = (max_bytes - 4096) // count - 40
    body = "  " + "x" * body_chars + "\n"
    return "# Plan\n\n" + "".join(f"- [ ] Task {number}\n{body}" for number in range(1, count + 1))


def run_case(plan: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        (root / "plan.md").write_text(plan)
        env = {**os.environ, "PYTHONPATH": str(LIB), "CLAUDE_PROJECT_DIR": str(root)}
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(root)], env=env, capture_output=True, text=True, check=True
        )
        figures: dict[str, object] = json.loads(done.stdout)
        figures["plan_bytes"] = len(plan.encode())
        return figures


def main() -> int:
    sys.path.insert(0, str(LIB))
    from fixloop.plans import MAX_PLAN_BYTES, MAX_PLAN_TASKS

    cases = {
        "100,000 tasks": one_line_tasks(100_000),
        f"{MAX_PLAN_TASKS:,} tasks": one_line_tasks(MAX_PLAN_TASKS),
        f"{MAX_PLAN_TASKS:,} tasks, long bodies": tasks_with_bodies(MAX_PLAN_TASKS, MAX_PLAN_BYTES),
    }
    print(f"{'plan':28} {'bytes':>10} {'seconds':>8} {'peak MB':>8}  outcome")
    for label, plan in cases.items():
        figures = run_case(plan)
        print(
            f"{label:28} {figures['plan_bytes']:>10,} {figures['seconds']:8.2f} {figures['peak_mb']:8.1f}"
            f"  {figures['outcome']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
