"""Fixed cost of the engine calls every agent of a review run pays: `fixloop record` of one reviewer's answer
and the `fixloop next` that closes a small round, as whole processes (CPU seconds and peak RSS, median of
REPEATS), at commit BEFORE and in this working tree.

    .venv/bin/python tests/benchmarks/bench_engine_calls.py [--repeats N] [--before COMMIT]

The findings are few (three per reviewer), so the figures are what every call costs whatever the work:
the interpreter, the imports, loading the run. Each measured call gets a run of its own, prepared beforehand
by the same engine version (`record`: a review run waiting for its six reviewers; `next`: the same run with
all six answers recorded). BEFORE is checked out in a temporary git worktree, removed afterwards. A bare
interpreter start is printed for scale. Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from before_tree import engine_at  # noqa: E402
from child_usage import Launcher  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts" / "lib"))
from fixloop.core.agent_names import REVIEWER_AGENTS as REVIEWERS  # noqa: E402

REPEATS = 7
BEFORE = "054e2ec"  # main when the issue that set the benchmark was filed

# Runs in a child with the engine version under test on its path: prepares `count` projects under `base`,
# each with one review run at the stage given, and prints [[project, run_id], ...].
PREPARE = r"""
import json, os, sys
from pathlib import Path
base, stage, count, reviewers = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")
from fixloop.runs import creation
from fixloop.workflows.driver import next_action
from fixloop.workflows.intake import record_answer

def answer(agent):
    issues = [
        {"id": f"X-{n}", "severity": "medium", "confidence": 80, "file": "src/app.py", "line": 1 + n,
         "category": "bug", "description": f"{agent} finds problem {n}", "suggestion": "Fix it.",
         "auto_fixable": True}
        for n in range(3)
    ]
    return {"status": "success", "agent": agent, "issues": issues, "positive_observations": []}

made = []
for index in range(count):
    project = base / f"{stage}-{index}"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("x = 1\ny = 2\nz = 3\n")
    (project / "answer.json").write_text(json.dumps(answer(reviewers[0])))
    os.environ["CLAUDE_PROJECT_DIR"] = str(project)
    os.environ["CLAUDE_PLUGIN_DATA"] = str(base / "data")
    run_id = creation.start_run("review", root=project, changed_files=["src/app.py"])["state"]["run_id"]
    action = next_action(project, run_id)
    assert action["action"] == "agents", action
    if stage == "next":
        for agent in reviewers:
            (project / "one.json").write_text(json.dumps(answer(agent)))
            assert record_answer(project, run_id, "one.json", agent, None)["valid"]
    made.append([str(project), run_id])
print(json.dumps(made))
"""


def prepare(lib: Path, base: Path, stage: str, count: int) -> list[tuple[Path, str]]:
    done = subprocess.run(
        [sys.executable, "-c", PREPARE, str(base), stage, str(count), ",".join(REVIEWERS)],
        env={**os.environ, "PYTHONPATH": str(lib)},
        capture_output=True,
        text=True,
        check=True,
    )
    return [(Path(project), run_id) for project, run_id in json.loads(done.stdout.strip().splitlines()[-1])]


def measure(launcher: Launcher, lib: Path, stage: str, repeats: int) -> tuple[float, float]:
    """Median CPU seconds and median peak RSS (MB) of `fixloop record`/`fixloop next` on prepared runs."""
    cpus, peaks = [], []
    with tempfile.TemporaryDirectory() as temp:
        for project, run_id in prepare(lib, Path(temp), stage, repeats):
            if stage == "record":
                command = ["record", run_id, "answer.json", "--agent", REVIEWERS[0]]
            else:
                command = ["next", run_id, "--text"]
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": temp,
                "PYTHONPATH": str(lib),
                "CLAUDE_PROJECT_DIR": str(project),
                "CLAUDE_PLUGIN_DATA": str(Path(temp) / "data"),
            }
            cpu, peak, code = launcher.measure([sys.executable, "-m", "fixloop", *command], project, env)
            if code != 0:
                raise SystemExit(f"fixloop {stage} exited {code} with engine {lib}")
            cpus.append(cpu)
            peaks.append(peak)
    return statistics.median(cpus), statistics.median(peaks)


def bare(launcher: Launcher, repeats: int) -> tuple[float, float]:
    figures = [launcher.measure([sys.executable, "-c", "pass"], ROOT, {}) for _ in range(repeats)]
    return statistics.median(f[0] for f in figures), statistics.median(f[1] for f in figures)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--before", default=BEFORE, help="the commit measured as 'before'")
    args = parser.parse_args()
    launcher = Launcher()
    try:
        with engine_at(args.before) as before_lib:
            libs = {"before": before_lib, "after": ROOT / "scripts" / "lib"}
            cpu, peak = bare(launcher, args.repeats)
            print(f"engine calls of a review run, median of {args.repeats}, python {sys.version.split()[0]}")
            print(f"bare interpreter start: {cpu:.3f} s CPU, {peak:.0f} MB peak")
            print(
                f"{'call':<40} {'before s':>9} {'after s':>8} {'after/before':>12} "
                f"{'before MB':>9} {'after MB':>8}"
            )
            for stage, label in (
                ("record", "fixloop record (one reviewer, 3 findings)"),
                ("next", "fixloop next (closes a 6x3 round)"),
            ):
                before = measure(launcher, libs["before"], stage, args.repeats)
                after = measure(launcher, libs["after"], stage, args.repeats)
                print(
                    f"{label:<40} {before[0]:>9.3f} {after[0]:>8.3f} {after[0] / before[0]:>12.2f} "
                    f"{before[1]:>9.0f} {after[1]:>8.0f}",
                    flush=True,
                )
    finally:
        launcher.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
