"""kill -9 at any moment: the state always loads, no log or ledger line is torn, nothing stale is left."""

from __future__ import annotations

import json
import multiprocessing
import random
import time
from pathlib import Path

from helpers_workers import write_forever

from fixloop.store import ledger
from fixloop.store.statestore import StateStore, minimal_run_state_errors

KILLS = 15


def initial_state() -> dict[str, object]:
    return {
        "run_id": "a1b2c3d4",
        "workflow": "review",
        "status": "running",
        "created_at": "2026-01-01T00:00:00.000Z",
        "error_count": 0,
        "errors": [],
        "config": {},
        "phases": [0],
        "review": {},
        "logging": {},
    }


def whole_json_lines(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    raw = path.read_bytes()
    assert raw == b"" or raw.endswith(b"\n"), f"{path.name} ends in a torn line"
    return [json.loads(line) for line in raw.splitlines()]


def tick(line: str) -> int:
    return int(line.split(" n=", 1)[1].split()[0])


def is_subsequence(part: list[int], whole: list[int]) -> bool:
    rest = iter(whole)
    return all(any(item == other for other in rest) for item in part)


def log_size(directory: Path) -> int:
    path = directory / "run.log"
    return path.stat().st_size if path.exists() else 0


def wait_for_writes(directory: Path, before: int, worker: multiprocessing.process.BaseProcess) -> None:
    """Until the worker has written its first timeline line (bounded: a worker that died fails the test)."""
    deadline = time.monotonic() + 300
    while log_size(directory) <= before:
        assert worker.is_alive(), "the worker ended before it wrote"
        assert time.monotonic() < deadline, "the worker wrote nothing in 300 s"
        time.sleep(0.01)


def test_kill_9_at_random_moments_never_corrupts_anything(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.json", validate=minimal_run_state_errors, lock_timeout=120)
    store.create(initial_state())
    chance = random.Random(20261123)
    context = multiprocessing.get_context("spawn")
    counters: list[int] = []
    for kills in range(1, KILLS + 1):
        worker = context.Process(target=write_forever, args=(str(tmp_path),))
        written = log_size(tmp_path)
        worker.start()
        wait_for_writes(tmp_path, written, worker)  # however long the start-up takes on this machine
        time.sleep(chance.random() * 0.3)  # then a random moment among its writes
        worker.kill()
        worker.join(timeout=30)
        state = store.read()  # never corrupt (a damaged state would be restored from its backup)
        assert minimal_run_state_errors(state) == []
        counters.append(int(state["review"].get("counter") or 0))
        events = whole_json_lines(tmp_path / "run.jsonl")
        timeline = (tmp_path / "run.log").read_text(encoding="utf-8").splitlines()
        # Each event is appended to the JSONL, then to the timeline, under one lock: a kill between the two
        # appends leaves that one event out of the timeline, never a line of its own or one out of order.
        assert 0 <= len(events) - len(timeline) <= kills
        assert is_subsequence([tick(line) for line in timeline], [event["summary"]["n"] for event in events])
        assert all(line["kind"] == "stop" for line in ledger.read(str(tmp_path)))
        whole_json_lines(Path(ledger.ledger_path(str(tmp_path))))
    assert all(value > 0 for value in counters)  # every worker got to write before it was killed
    store.update(lambda state: state.update(status="ended"))
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.endswith(".tmp")) == []
