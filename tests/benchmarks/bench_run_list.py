"""CPU time and peak memory of `fixloop run list` and `fixloop review report latest` over many runs.

    python3 tests/benchmarks/bench_run_list.py [--runs 1000] [--issues 480] [--repeat 3] [--lib DIR]

Builds a project in a temporary directory with RUNS review runs, each a real review state whose first
round is closed with ISSUES findings (six reviewers), then runs each command in its own process and prints
its CPU seconds (user + system) and peak RSS (child_usage: a launcher's child, so the benchmark's own
memory does not count). The first call after the runs are written builds the run index; the later calls
read it. Then one run is ended and one deleted by hand, and `run list` runs again: it reads the ended run's
state again until that state is RACY_NS old (store.runindex), then reads none. --lib runs the commands
with another copy of scripts/lib (an earlier version, to compare). Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "scripts" / "lib"
sys.path.insert(0, str(LIB))

from child_usage import Launcher  # noqa: E402

from fixloop.contracts.coordinator import LoopConfig  # noqa: E402
from fixloop.core.agent_names import REVIEWER_AGENTS  # noqa: E402
from fixloop.core.timekeeping import utc_timestamp_ms  # noqa: E402
from fixloop.review.gate import attach_verification  # noqa: E402
from fixloop.review.machine import decide_next  # noqa: E402
from fixloop.review.record import record_agent_result  # noqa: E402
from fixloop.store import layout, runindex  # noqa: E402
from fixloop.store.statestore import encode_state  # noqa: E402

START_MS = 1_765_000_000_000
ENGINE = LIB  # the engine the measured commands run (--lib)
PASSED = {"tests": {"status": "passed"}, "lint": {"status": "passed"}, "typecheck": {"status": "passed"}}


def finding(agent_index: int, number: int) -> dict[str, Any]:
    return {
        "id": f"{agent_index}-{number}",
        "severity": ("critical", "high", "medium", "low")[number % 4],
        "confidence": 60 + number % 40,
        "file": f"src/module_{number % 37}.py",
        "line": 1 + (number * 7 + agent_index) % 900,
        "category": ("bug", "error-handling", "style", "types")[number % 4],
        "description": f"Problem {number} seen by reviewer {agent_index} in `func_{number}`",
        "suggestion": "Handle the case.",
        "auto_fixable": number % 3 != 0,
    }


def review_state(root: Path, issues: int) -> dict[str, Any]:
    """A review run whose first round is closed with `issues` findings (before the fixer)."""
    state: dict[str, Any] = {
        "run_id": "00000000",
        "workflow": "review",
        "status": "running",
        "created_at": utc_timestamp_ms(START_MS / 1000),
        "started_at_ms": START_MS,
        "ended_at_ms": None,
        "project_dir": str(root),
        "changed_files": [f"src/module_{index}.py" for index in range(37)],
        "config": LoopConfig().model_dump(mode="json"),
        "phases": [0],
        "logging": {"enabled": False, "level": "info", "session_id": "00000000", "log_files": None},
        "errors": [],
        "error_count": 0,
        "review": {},
    }
    state = decide_next(state, None, 1).state
    attach_verification(state, PASSED)
    state = decide_next(state, None, 2).state
    per_agent = max(1, issues // len(REVIEWER_AGENTS))
    for index, agent in enumerate(REVIEWER_AGENTS):
        document = {
            "status": "success",
            "agent": agent,
            "issues": [finding(index, number) for number in range(per_agent)],
            "positive_observations": [],
        }
        state = record_agent_result(state, agent, document, now_ms=3, inplace=True).state
    return decide_next(state, None, 4, inplace=True).state


def write_runs(root: Path, count: int, issues: int) -> list[str]:
    template = review_state(root, issues)
    ids = [f"{number:08x}" for number in range(1, count + 1)]
    for number, run_id in enumerate(ids):
        started = START_MS + number * 60_000
        state = {
            **template,
            "run_id": run_id,
            "created_at": utc_timestamp_ms(started / 1000),
            "started_at_ms": started,
            "status": "running" if number % 3 else "partial",
            "ended_at_ms": None if number % 3 else started + 30_000,
            "logging": {**template["logging"], "session_id": run_id},
        }
        path = Path(layout.state_path(root, run_id))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode_state(state))
    return ids


LAUNCHER: Launcher | None = None


def report(label: str, root: Path, *args: str) -> None:
    """One line: CPU seconds and peak RSS of `python -m fixloop ARGS` in its own process."""
    env = {**os.environ, "PYTHONPATH": str(ENGINE), "CLAUDE_PROJECT_DIR": str(root)}
    env.pop("CLAUDE_CODE_SESSION_ID", None)
    assert LAUNCHER is not None
    cpu, peak, code = LAUNCHER.measure([sys.executable, "-m", "fixloop", *args], root, env)
    print(f"{label:44s} cpu {cpu:6.2f} s   peak {peak:7.1f} MB   exit {code}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--issues", type=int, default=480)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lib", type=Path, default=LIB, help="the scripts/lib the commands run")
    args = parser.parse_args()
    global ENGINE, LAUNCHER
    ENGINE = args.lib.resolve()
    LAUNCHER = Launcher()
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        (root / ".git").mkdir()
        ids = write_runs(root, args.runs, args.issues)
        size = Path(layout.state_path(root, ids[0])).stat().st_size
        print(f"{args.runs} runs, {args.issues} findings each, state.json {size / 1000:.0f} kB each")
        report("fixloop --version (start-up alone)", root, "--version")
        for number in range(args.repeat):
            report(f"run list (call {number + 1})", root, "run", "list")
        for number in range(args.repeat):
            report(f"review report latest (call {number + 1})", root, "review", "report", "latest")
        ended = Path(layout.state_path(root, ids[-2]))
        ended.write_bytes(ended.read_bytes().replace(b'"status": "running"', b'"status": "success"', 1))
        os.remove(layout.state_path(root, ids[0]))
        report("run list after one run ended, one deleted", root, "run", "list")
        report("run list again (the ended state still fresh)", root, "run", "list")
        time.sleep(runindex.RACY_NS / 1e9 + 0.5)
        report("run list once the ended state is 2 s old", root, "run", "list")
        report("run list again", root, "run", "list")
    LAUNCHER.close()


if __name__ == "__main__":
    main()
