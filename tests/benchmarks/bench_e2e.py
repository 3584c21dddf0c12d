"""End-to-end wall time of scenario 1 (the happy path of ``/fixloop:review``) and the share of it spent in
fixloop's own processes: its hooks and its engine calls.

    python3 tests/benchmarks/bench_e2e.py [--runs N] [--reviewer-delay S]

Each run is scenario 1 of tests/e2e/test_review_loop.py: the real pinned CLI, the scripted model of
tests/e2e/fixloop_model.py with the same scenario (``happy_path``: two seeded defects found in round 1,
verified, fixed by the fixer with two Edits, round 2 clean; every reviewer holds its answer
``--reviewer-delay`` seconds, 1.0 as in the test), in a fresh copy of the sample project.

How the time is attributed, without touching the shipped files: the plugin runs from a copy of the
repository (its files as a clone has them) in which ``hooks/run-hook`` and ``scripts/fixloop`` are thin
wrappers around the originals that append one line per process to a timings file (start and end, epoch
nanoseconds). Each wrapper costs about two ``date`` processes (a few ms) on top of what it measures. Engine
calls made inside a hook (SubagentStop records each answer with ``fixloop record``, SubagentStart and
PostToolUse ask for the next step with ``fixloop next``) are nested in that hook's time and not counted twice.

Printed per run and as medians: the CLI's wall time; hook processes by script (count, sum); engine calls
made outside the hooks (the command's ``fixloop start``: count, sum, by subcommand); the wall time during
which at least one fixloop process ran (the union of their intervals), as a share of the wall time; and the
time the scripted model held its answers (the reviewer delays). The plugin's environment is built once
beforehand in a temporary data directory (or, when that fails, the engine uses this interpreter through
FIXLOOP_PYTHON). Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / "tests" / "e2e"
sys.path[:0] = [str(E2E), str(ROOT / "scripts" / "lib")]

from claude_runner import SAMPLE_REPO, ClaudeRunner, require_claude_binary  # noqa: E402
from fixloop_model import CLI_PERMISSION_MODE, FixloopModel, happy_path  # noqa: E402
from scripted_api import ScriptedAPI  # noqa: E402

CHANGED = ("inventory/report.py", "inventory/stock.py")
TIMINGS_ENV = "FIXLOOP_BENCH_TIMINGS"
RUN_ID = re.compile(r"[0-9a-f]{8}")

HOOK_WRAPPER = """#!/bin/sh
# bench_e2e.py: times hooks/run-hook.real (one line per process in $FIXLOOP_BENCH_TIMINGS).
start=$(date +%s%N)
FIXLOOP_BENCH_IN_HOOK=1 sh "$(dirname "$0")/run-hook.real" "$@"
end=$(date +%s%N)
[ -n "${FIXLOOP_BENCH_TIMINGS:-}" ] &&
    printf 'hook\\t%s\\t%s\\t%s\\t0\\n' "${1:-}" "$start" "$end" >>"$FIXLOOP_BENCH_TIMINGS"
exit 0
"""

ENGINE_WRAPPER = """#!/usr/bin/env bash
# bench_e2e.py: times scripts/fixloop.real (one line per process in $FIXLOOP_BENCH_TIMINGS).
start=${EPOCHREALTIME/[.,]/}000
"$(dirname "${BASH_SOURCE[0]}")/fixloop.real" "$@"
status=$?
end=${EPOCHREALTIME/[.,]/}000
if [ -n "${FIXLOOP_BENCH_TIMINGS:-}" ]; then
    printf 'engine\\t%s %s\\t%s\\t%s\\t%s\\n' "${1:-}" "${2:-}" "$start" "$end" \\
        "${FIXLOOP_BENCH_IN_HOOK:-0}" >>"$FIXLOOP_BENCH_TIMINGS"
fi
exit $status
"""


def instrumented_plugin(dest: Path) -> Path:
    """A copy of the plugin (the repository's tracked and untracked, not ignored, files) whose hook launcher
    and entry point are timing wrappers around the originals."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file() and not name.startswith("tests/"):
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    for relative, wrapper in (("hooks/run-hook", HOOK_WRAPPER), ("scripts/fixloop", ENGINE_WRAPPER)):
        original = dest / relative
        original.rename(original.with_name(original.name + ".real"))
        original.write_text(wrapper, encoding="utf-8")
        original.chmod(0o755)
    return dest


def prepare_data(plugin: Path, data: Path) -> dict[str, str]:
    """Build the plugin's environment in ``data`` once, as SessionStart would; the extra environment for
    the runs (FIXLOOP_PYTHON when the build is not possible here)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(plugin / "scripts" / "bootstrap.py"), "ensure", "--data", str(data)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode == 0:
        print(f"plugin environment built in {time.monotonic() - started:.1f}s: {done.stdout.strip()}")
        return {}
    print(f"plugin environment not buildable here ({done.stdout.strip()}); FIXLOOP_PYTHON={sys.executable}")
    return {"FIXLOOP_PYTHON": sys.executable}


@dataclass(frozen=True)
class Span:
    kind: str  # hook | engine
    name: str  # hook script, or the engine's first two arguments
    start_ns: int
    end_ns: int
    nested: bool  # an engine call made inside a hook

    @property
    def ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6


def read_spans(path: Path) -> list[Span]:
    spans = []
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        kind, name, start, end, nested = line.split("\t")
        words = name.split()
        if len(words) == 2 and RUN_ID.fullmatch(words[1]):  # `verify RUN`: the subcommand is one word
            words = words[:1]
        spans.append(Span(kind, " ".join(words), int(start), int(end), nested == "1"))
    return spans


def union_ms(intervals: Sequence[tuple[float, float]]) -> float:
    """Total length of the union of [start, end) intervals (any unit)."""
    total = 0.0
    current_start: float | None = None
    current_end = 0.0
    for start, end in sorted(intervals):
        if current_start is None or start > current_end:
            if current_start is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_start is not None:
        total += current_end - current_start
    return total


def one_run(work: Path, plugin: Path, data: Path, extra_env: dict[str, str], delay: float) -> dict[str, Any]:
    timings = work / "timings.tsv"
    model = FixloopModel(happy_path(delay))
    with ScriptedAPI(model.script(), log_path=work / "requests.jsonl") as api:
        runner = ClaudeRunner(
            require_claude_binary(),
            work,
            plugin_dir=plugin,
            base_url=api.url,
            request_log=api.log_path,
            timeout=300.0,
            shared_plugin_data=data,
            env={**extra_env, TIMINGS_ENV: str(timings)},
        )
        project = runner.new_project(SAMPLE_REPO, uncommitted=CHANGED)
        result = runner.run(
            "/fixloop:review --trust-config", project_dir=project, permission_mode=CLI_PERMISSION_MODE
        )
        held = union_ms([(r.received_at * 1000, r.received_at * 1000 + r.delay * 1000) for r in api.requests])
    if result.exit_code != 0 or result.is_error or model.problems or api.unmatched:
        raise SystemExit(
            f"the run failed: {json.dumps(result.summary(), indent=2)}\nproblems: {model.problems}\n"
            f"unmatched: {len(api.unmatched)}"
        )
    spans = read_spans(timings)
    hooks = [s for s in spans if s.kind == "hook"]
    engine = [s for s in spans if s.kind == "engine" and not s.nested]
    nested = [s for s in spans if s.kind == "engine" and s.nested]
    covered = union_ms([(s.start_ns / 1e6, s.end_ns / 1e6) for s in [*hooks, *engine]])
    by_hook: dict[str, list[float]] = defaultdict(list)
    for span in hooks:
        by_hook[span.name].append(span.ms)
    by_command: dict[str, list[float]] = defaultdict(list)
    for span in engine:
        by_command[span.name].append(span.ms)
    by_nested: dict[str, list[float]] = defaultdict(list)
    for span in nested:
        by_nested[span.name].append(span.ms)
    return {
        "wall_ms": result.duration_s * 1000,
        "requests": len(result.message_requests()),
        "hook_count": len(hooks),
        "hook_ms": sum(s.ms for s in hooks),
        "engine_count": len(engine),
        "engine_ms": sum(s.ms for s in engine),
        "nested_count": len(nested),
        "nested_ms": sum(s.ms for s in nested),
        "covered_ms": covered,
        "held_ms": held,
        "by_hook": {name: (len(v), sum(v)) for name, v in sorted(by_hook.items())},
        "by_command": {name: (len(v), sum(v)) for name, v in sorted(by_command.items())},
        "by_nested": {name: (len(v), sum(v), min(v), max(v)) for name, v in sorted(by_nested.items())},
    }


def show(run: dict[str, Any], title: str) -> None:
    wall = run["wall_ms"]
    print(f"\n{title}: wall {wall / 1000:.2f}s, {run['requests']} model requests")
    print(
        f"  hooks:  {run['hook_count']:3} processes, {run['hook_ms']:8.0f} ms summed "
        f"(incl. {run['nested_count']} engine calls inside SubagentStop, {run['nested_ms']:.0f} ms)"
    )
    for name, (count, total) in run["by_hook"].items():
        print(f"    {name:22} {count:3} x {total / count:6.1f} ms = {total:7.0f} ms")
    for name, (count, total, low, high) in run["by_nested"].items():
        mean = total / count
        print(f"      engine {name:15} {count:3} x {mean:6.1f} ms = {total:7.0f} ms ({low:.0f}..{high:.0f})")
    print(f"  engine: {run['engine_count']:3} calls outside hooks, {run['engine_ms']:8.0f} ms summed")
    for name, (count, total) in run["by_command"].items():
        print(f"    {name:22} {count:3} x {total / count:6.1f} ms = {total:7.0f} ms")
    covered, held = run["covered_ms"], run["held_ms"]
    print(
        f"  fixloop processes running (union): {covered:.0f} ms = {100 * covered / wall:.1f}% "
        f"of the wall time; summed: {run['hook_ms'] + run['engine_ms']:.0f} ms"
    )
    print(f"  scripted model holding answers (union): {held:.0f} ms = {100 * held / wall:.1f}%")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reviewer-delay", type=float, default=1.0, help="seconds (the test uses 1.0)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fixloop-bench-e2e-"))
    try:
        plugin = instrumented_plugin(work / "plugin")
        data = work / "plugin-data"
        extra_env = prepare_data(plugin, data)
        runs = []
        for index in range(args.runs):
            run_dir = work / f"run-{index + 1}"
            run_dir.mkdir()
            runs.append(one_run(run_dir, plugin, data, extra_env, args.reviewer_delay))
            show(runs[-1], f"run {index + 1}")
        if len(runs) > 1:

            def median(key: str) -> float:
                return float(statistics.median(r[key] for r in runs))

            wall = median("wall_ms")
            print(f"\nmedian of {len(runs)} runs: wall {wall / 1000:.2f}s")
            print(
                f"  hooks {median('hook_ms'):.0f} ms summed, engine calls {median('engine_ms'):.0f} ms summed"
            )
            share = statistics.median(100 * r["covered_ms"] / r["wall_ms"] for r in runs)
            covered = median("covered_ms")
            print(f"  fixloop processes running (union): {covered:.0f} ms, {share:.1f}% of the wall")
            held = statistics.median(100 * r["held_ms"] / r["wall_ms"] for r in runs)
            print(f"  scripted model holding answers: {median('held_ms'):.0f} ms, {held:.1f}% of the wall")
    finally:
        if args.keep:
            print(f"work directory kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.pop(TIMINGS_ENV, None)
    sys.exit(main())
