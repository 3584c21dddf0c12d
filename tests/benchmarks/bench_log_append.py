"""Throughput of EventLog with several processes appending to the same two log files.

Run: python tests/benchmarks/bench_log_append.py [--processes 6] [--count 2000]
Prints lines/s and the number of corrupt JSONL lines (which must be 0); exits 1 if any line is lost
or corrupt.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
import time
from pathlib import Path

from fixloop.store.logwriter import EventLog


def append(directory: str, writer: int, count: int, start_at: float) -> None:
    root = Path(directory)
    log = EventLog(root / "bench.jsonl", root / "bench.log", "a1b2c3d4")
    while time.time() < start_at:  # line the writers up so they really contend
        time.sleep(0.001)
    for number in range(count):
        log.emit(
            "I",
            "AGENT_RESULT",
            agent=f"writer-{writer}",
            status="success",
            duration_ms=number,
            output_summary={"note": f'line {number} "quoted"\nsecond line é', "n": number},
        )
        if log.last_error is not None:
            raise SystemExit(f"writer {writer}: {log.last_error}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--processes", type=int, default=6)
    parser.add_argument("--count", type=int, default=2000, help="events per process")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory:
        context = multiprocessing.get_context("spawn")
        start_at = time.time() + 1.0
        workers = [
            context.Process(target=append, args=(directory, writer, args.count, start_at))
            for writer in range(args.processes)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        elapsed = time.time() - start_at

        expected = args.processes * args.count
        corrupt = 0
        seen: set[tuple[str, int]] = set()
        for raw in (Path(directory) / "bench.jsonl").read_bytes().split(b"\n")[:-1]:
            try:
                event = json.loads(raw)
                seen.add((event["agent"], event["duration_ms"]))
            except (ValueError, KeyError, TypeError):
                corrupt += 1
        text_lines = (Path(directory) / "bench.log").read_bytes().count(b"\n")

    failed_workers = sum(1 for worker in workers if worker.exitcode != 0)
    print(f"processes: {args.processes}  events per process: {args.count}")
    print(f"throughput: {expected / elapsed:,.0f} lines/s (each event = 1 JSONL line + 1 text line)")
    print(f"jsonl lines: {len(seen) + corrupt}/{expected}  text lines: {text_lines}/{expected}")
    print(f"corrupt jsonl lines: {corrupt}")
    ok = failed_workers == 0 and corrupt == 0 and len(seen) == expected and text_lines == expected
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
