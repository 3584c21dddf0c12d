"""Time and peak memory of `fixloop record` refusing (or taking) hostile reviewer answers.

    python3 tests/benchmarks/bench_record.py [--sizes 1K,1M,64M] [--shapes NAME,...] [--tracemalloc]
                                             [--timeout SECONDS] [--memory-limit MB]

Each case runs in its own process: a review run waiting for its reviewers, then `fixloop record` (the
function behind it, workflows.intake.record_answer) of one answer file of the given size and shape:

- empty-issues: `"issues": [{}, {}, ...]`
- empty-arrays: `"issues": [[], [], ...]`
- cut-off: prose, then `{..., "issues": [{}, {}, ...` never closed
- deep-nesting: `"issues": [[[[...]]]]`
- huge-string: one positive observation as long as the answer
- many-violations: issues whose every field has the wrong type
- many-keys: one issue with a great many unknown fields
- many-strings: `"positive_observations": ["x", "x", ...]`
- prose: text with no JSON document in it

Sizes: 1K, 1M, 4M (just under the largest message searched for a document) and 64M (the largest input read).

Prints per case: the answer's code (`valid` when taken), how many violations the answer lists and counts,
the wall and CPU time of the record, the process's peak RSS and what the record added to it (RSS before the
record is the interpreter with the engine imported and the run loaded). With --tracemalloc, the peak of
Python allocations during the record (slower; tracing costs time). A case that runs out of time or memory
(--timeout, --memory-limit: RLIMIT_AS of the case's process) says so. Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "scripts" / "lib"
AGENT = "code-reviewer"
HEAD = f'{{"status": "success", "agent": "{AGENT}", '
# 4M: just under the largest message that is searched for a JSON document (contracts.extract.MAX_INPUT_BYTES)
SIZES = {"1K": 1024, "1M": 1024 * 1024, "4M": 4 * 1024 * 1024 - 16, "64M": 64 * 1024 * 1024}
BAD_ISSUE = (
    '{"id": 1, "severity": 2, "confidence": "x", "file": 3, "line": "y", "category": 4, '
    '"description": 5, "suggestion": 6, "auto_fixable": "z"}'
)


def repeated(prefix: str, item: str, separator: str, suffix: str, size: int) -> bytes:
    """prefix + item (separator item)* + suffix, about `size` bytes long (at least one item)."""
    count = max(1, (size - len(prefix) - len(suffix)) // (len(item) + len(separator)))
    return (prefix + separator.join([item] * count) + suffix).encode()


def deep(size: int) -> bytes:
    depth = max(1, (size - len(HEAD) - 20) // 2)
    return (HEAD + '"issues": ' + "[" * depth + "]" * depth + "}").encode()


def many_keys(size: int) -> bytes:
    """One issue with as many distinct unknown fields as fit."""
    prefix, suffix = HEAD + '"issues": [{', "}]}"
    fields: list[str] = []
    room = size - len(prefix) - len(suffix)
    while room > 20:
        fields.append(f'"k{len(fields)}": 1')
        room -= len(fields[-1]) + 2
    return (prefix + ", ".join(fields) + suffix).encode()


SHAPES: dict[str, Callable[[int], bytes]] = {
    "empty-issues": lambda size: repeated(HEAD + '"issues": [', "{}", ", ", "]}", size),
    "empty-arrays": lambda size: repeated(HEAD + '"issues": [', "[]", ", ", "]}", size),
    "cut-off": lambda size: repeated("Here it is: " + HEAD + '"issues": [', "{}", ", ", "", size),
    "deep-nesting": deep,
    "huge-string": lambda size: (
        HEAD + '"issues": [], "positive_observations": ["' + "x" * max(1, size - 100) + '"]}'
    ).encode(),
    "many-violations": lambda size: repeated(HEAD + '"issues": [', BAD_ISSUE, ", ", "]}", size),
    "many-keys": lambda size: many_keys(size),
    "many-strings": lambda size: repeated(
        HEAD + '"issues": [], "positive_observations": [', '"x"', ", ", "]}", size
    ),
    "prose": lambda size: repeated("", "The change looks fine to me.", " ", "", size),
}


def child(answer_file: str, use_tracemalloc: bool) -> None:
    """Start a run in a fresh project, record the answer in `answer_file`, print the figures as JSON."""
    sys.path.insert(0, str(LIB))
    from fixloop.core.errors import FixloopError
    from fixloop.runs import creation
    from fixloop.workflows.driver import next_action
    from fixloop.workflows.intake import record_answer

    with tempfile.TemporaryDirectory() as temp:
        project = Path(temp) / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "app.py").write_text("x = 1\n")
        os.environ["CLAUDE_PROJECT_DIR"] = str(project)
        os.environ["CLAUDE_PLUGIN_DATA"] = str(Path(temp) / "data")
        state = creation.start_run("review", root=project, changed_files=["src/app.py"])["state"]
        run_id = state["run_id"]
        next_action(project, run_id)
        source = project / "answer.txt"
        shutil.copyfile(answer_file, source)
        if use_tracemalloc:
            import tracemalloc

            tracemalloc.start()
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        cpu_before = time.process_time()
        started = time.perf_counter()
        try:
            answer: dict[str, Any] = record_answer(project, run_id, "answer.txt", AGENT, None)
        except FixloopError as failure:
            answer = {"valid": False, "error": {"code": failure.code, "message": failure.message}}
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_before
        traced = tracemalloc.get_traced_memory()[1] if use_tracemalloc else None
        rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    error = answer.get("error") or {}
    print(
        json.dumps(
            {
                "code": "valid" if answer.get("valid") else error.get("code"),
                "listed": len(error.get("violations") or []),
                "counted": error.get("violation_count"),
                "wall_s": wall,
                "cpu_s": cpu,
                "rss_before_mb": rss_before / 1024,
                "rss_peak_mb": rss_peak / 1024,
                "traced_peak_mb": None if traced is None else traced / 1024 / 1024,
            }
        )
    )


def run_case(answer_file: Path, args: argparse.Namespace) -> dict[str, Any] | str:
    limit = args.memory_limit * 1024 * 1024

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    command = [sys.executable, __file__, "--child", str(answer_file)]
    if args.tracemalloc:
        command.append("--tracemalloc")
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=args.timeout,
            preexec_fn=limit_memory if args.memory_limit else None,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"over {args.timeout} s"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return f"exit {done.returncode}: {last[:70]}"
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default=",".join(SIZES))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument(
        "--memory-limit", type=int, default=4096, help="MB of address space per case; 0: none"
    )
    args = parser.parse_args()
    if args.child:
        child(args.child, args.tracemalloc)
        return 0

    print(f"fixloop record of hostile {AGENT} answers, python {sys.version.split()[0]}")
    header = f"{'size':>4} {'shape':<16} {'code':<20} {'listed':>6} {'counted':>8} {'wall s':>7} {'cpu s':>6}"
    header += f" {'peak RSS MB':>11} {'added MB':>8}"
    if args.tracemalloc:
        header += f" {'traced MB':>9}"
    print(header)
    with tempfile.TemporaryDirectory() as temp:
        for size_name in args.sizes.split(","):
            for shape in args.shapes.split(","):
                answer_file = Path(temp) / f"{shape}-{size_name}.txt"
                answer = SHAPES[shape](SIZES[size_name])
                assert len(answer) <= SIZES[size_name], (shape, size_name, len(answer))
                answer_file.write_bytes(answer)
                figures = run_case(answer_file, args)
                answer_file.unlink()
                if isinstance(figures, str):
                    print(f"{size_name:>4} {shape:<16} {figures}")
                    continue
                added = figures["rss_peak_mb"] - figures["rss_before_mb"]
                line = (
                    f"{size_name:>4} {shape:<16} {figures['code']!s:<20} {figures['listed']:>6} "
                    f"{figures['counted']!s:>8} {figures['wall_s']:>7.2f} {figures['cpu_s']:>6.2f} "
                    f"{figures['rss_peak_mb']:>11.0f} {added:>8.0f}"
                )
                if args.tracemalloc:
                    line += f" {figures['traced_peak_mb']:>9.1f}"
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
