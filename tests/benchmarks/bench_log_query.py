"""CPU time and peak memory of `fixloop log timeline|summary|errors|show` on large JSONL logs.

    python3 tests/benchmarks/bench_log_query.py [--events 250000,500000,1000000] [--lib DIR]
                                                [--commands timeline,summary,errors,show] [--jq]
                                                [--order mostly|reversed]

Writes, in a temporary directory, a log of N events shaped like the engine's (agent calls and results,
phases, warnings, errors, decisions) in time order except for what concurrent writers cause: one line in
fifty a few milliseconds early, and one block of a thousand lines written late. Then runs each command in
its own process and prints its CPU seconds (user + system) and peak RSS (child_usage: a launcher's child,
so the benchmark's own memory does not count). With several sizes, the time per million events shows
whether the cost is linear. --jq also measures the logging skill's time-order recipe. --lib runs another
copy of scripts/lib (an earlier version, to compare). Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from child_usage import Launcher

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "scripts" / "lib"
SKILL = ROOT / "skills" / "workflow-logging" / "SKILL.md"
SESSION = "a1b2c3d4"
BASE_SECONDS = 1_765_000_000
COMMANDS = ("timeline", "summary", "errors", "show")


def timestamp(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    days, rest = divmod(seconds - BASE_SECONDS, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"2025-12-{6 + days:02d}T{hours:02d}:{minutes:02d}:{secs:02d}.{millis:03d}Z"


def event(number: int, ms: int) -> dict[str, object]:
    base: dict[str, object] = {"ts": timestamp(ms), "session_id": SESSION}
    kind = number % 10
    if number == 0:
        return {**base, "level": "I", "type": "SESSION_START", "workflow": "review", "stack": "backend"}
    if kind in (0, 1, 2):
        return {
            **base,
            "level": "I",
            "type": "AGENT_CALL",
            "agent": "code-reviewer",
            "prompt_summary": f"Review round {number // 1000}: src/module_{number % 97}.py and 12 more",
        }
    if kind in (3, 4, 5):
        return {
            **base,
            "level": "I",
            "type": "AGENT_RESULT",
            "agent": "code-reviewer",
            "status": "success",
            "duration_ms": 1000 + number % 9000,
            "output_summary": {"issues": number % 17, "note": "found null checks missing"},
        }
    if kind == 6:
        return {**base, "level": "I", "type": "PHASE_END", "phase": "phase_1", "status": "success",
                "duration_ms": number % 5000}  # fmt: skip
    if kind == 7:
        return {**base, "level": "W", "type": "WARNING", "code": "SLOW_AGENT", "message": f"{number} slow"}
    if kind == 8:
        return {**base, "level": "E", "type": "ERROR", "code": "TEST_FAILED", "message": f"test {number}"}
    return {
        **base,
        "level": "X",
        "type": "CONFIDENCE_DECISION",
        "phase": "phase_2",
        "confidence_score": number % 100,
        "decision": "auto_continue",
        "threshold": {"auto_continue": 60, "ask_user": 40, "stop": 0},
    }


def write_log(path: Path, count: int, order: str = "mostly") -> None:
    """`count` events 7 ms apart; one in fifty stamped 5 ms early; events 40% to 40% + 1000 written at the
    end (a writer that was held up). Order `reversed`: the same events newest first (every chunk of the
    log out of order: the worst case)."""
    late = range(count * 2 // 5, count * 2 // 5 + min(1000, count // 10))
    held: list[bytes] = []
    with path.open("wb") as out:
        for number in range(count):
            ms = BASE_SECONDS * 1000 + number * 7 - (5 if number % 50 == 49 else 0)
            line = json.dumps(event(number, ms), separators=(",", ":")).encode() + b"\n"
            (held.append if number in late or order == "reversed" else out.write)(line)
        out.writelines(reversed(held) if order == "reversed" else held)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", default="250000,500000,1000000")
    parser.add_argument("--commands", default=",".join(COMMANDS))
    parser.add_argument("--lib", type=Path, default=LIB, help="the scripts/lib the commands run")
    parser.add_argument("--jq", action="store_true", help="also time the skill's jq recipe")
    parser.add_argument("--order", choices=("mostly", "reversed"), default="mostly")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(args.lib.resolve())}
    env.pop("CLAUDE_CODE_SESSION_ID", None)
    launcher = Launcher()
    for count in (int(item) for item in args.events.split(",")):
        with tempfile.TemporaryDirectory() as temp:
            root = Path(temp)
            (root / ".git").mkdir()
            log = root / "run.jsonl"
            write_log(log, count, args.order)
            env["CLAUDE_PROJECT_DIR"] = str(root)
            print(f"{count} events ({args.order} in time order), {log.stat().st_size / 1e6:.0f} MB")
            for name in args.commands.split(","):
                extra = ["--type", "PHASE_END"] if name == "show" else []
                command = [sys.executable, "-m", "fixloop", "log", name, str(log), *extra]
                cpu, peak, code = launcher.measure(command, root, env)
                per_million = cpu / count * 1e6
                print(
                    f"  log {name + ' ' + ' '.join(extra):24s} cpu {cpu:7.2f} s ({per_million:5.2f} s per 1M)"
                    f"   peak {peak:7.1f} MB   exit {code}"
                )
            if args.jq and shutil.which("jq"):
                recipe = next(line for line in SKILL.read_text().splitlines() if "sort" in line)
                shell = recipe.replace("RUN.jsonl", str(log))
                cpu, peak, code = launcher.measure(["bash", "-c", shell], root, env)
                print(f"  skill recipe: {recipe}")
                print(f"  {'':28s} cpu {cpu:7.2f} s   peak {peak:7.1f} MB   exit {code}")

    launcher.close()


if __name__ == "__main__":
    main()
