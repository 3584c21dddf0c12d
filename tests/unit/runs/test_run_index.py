"""The run index: `run list` and `latest` read a state only when the index cannot vouch for it, and the
index stays right when runs are created, end, are edited or deleted by hand, or two processes list at once."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers_reports import START_MS, save_run
from helpers_review import make_state, two_rounds
from helpers_runs import FakeClock

from fixloop.core.errors import FixloopError
from fixloop.report.runlist import list_runs, run_row
from fixloop.runs import creation, ending, lifecycle, listing
from fixloop.runs.listing import newest_run_id
from fixloop.store import layout, runindex
from fixloop.store.locking import file_lock

HOUR_NS = 3600 * 10**9


def age(root: Path, *run_ids: str) -> None:
    """Make the states an hour old, so the index may trust what it read of them."""
    for run_id in run_ids:
        path = layout.state_path(root, run_id)
        then = os.stat(path).st_mtime_ns - HOUR_NS
        os.utime(path, ns=(then, then))


def index_document(root: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(Path(runindex.index_path(root)).read_bytes())
    return document


def indexed_facts(root: Path) -> dict[str, dict[str, Any]]:
    return {run_id: entry["facts"] for run_id, entry in index_document(root)["runs"].items()}


class StateReads:
    """Counts the states the listing parses (runs.listing.load_run)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.run_ids: list[str] = []
        original = listing.load_run

        def counted(root: Path, run_id: str) -> dict[str, Any]:
            self.run_ids.append(run_id)
            return original(root, run_id)

        monkeypatch.setattr(listing, "load_run", counted)

    def take(self) -> list[str]:
        taken, self.run_ids = sorted(self.run_ids), []
        return taken


def three_runs(root: Path) -> None:
    save_run(root, two_rounds().state, "aaaaaaaa", started_ms=START_MS)
    finished = two_rounds().state
    finished["review"]["outcome"] = {"status": "partial", "termination_reason": "max_iterations"}
    save_run(
        root, finished, "bbbbbbbb", started_ms=START_MS + 1000, ended_ms=START_MS + 9000, status="partial"
    )
    save_run(root, make_state(), "cccccccc", started_ms=START_MS + 2000, workflow="bugfix")
    age(root, "aaaaaaaa", "bbbbbbbb", "cccccccc")


def rows_from_states(root: Path) -> list[dict[str, Any]]:
    """What run list must say, from every state read afresh, newest first."""
    states = [lifecycle.load_run(root, run_id) for run_id in listing.run_ids(root)]
    states.sort(
        key=lambda state: (state["started_at_ms"], state["created_at"], state["run_id"]), reverse=True
    )
    return [run_row(state) for state in states]


def test_the_first_listing_builds_the_index_and_the_next_reads_no_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    three_runs(tmp_path)
    reads = StateReads(monkeypatch)
    first = list_runs(tmp_path)
    assert reads.take() == ["aaaaaaaa", "bbbbbbbb", "cccccccc"]
    assert first["runs"] == rows_from_states(tmp_path)
    assert [row["run_id"] for row in first["runs"]] == ["cccccccc", "bbbbbbbb", "aaaaaaaa"]
    assert indexed_facts(tmp_path)["bbbbbbbb"] == {
        "run_id": "bbbbbbbb",
        "workflow": "review",
        "status": "partial",
        "created_at": "2025-12-06T05:46:41.000Z",
        "started_at_ms": START_MS + 1000,
        "ended_at_ms": START_MS + 9000,
        "extra": {"termination_reason": "max_iterations", "remaining_issues": 3},
    }
    assert index_document(tmp_path)["version"] == runindex.VERSION

    assert list_runs(tmp_path) == first
    assert newest_run_id(tmp_path) == "cccccccc"
    assert reads.take() == []


def test_latest_alone_keeps_the_listing_facts_of_unchanged_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    three_runs(tmp_path)
    reads = StateReads(monkeypatch)
    assert newest_run_id(tmp_path) == "cccccccc"
    assert "extra" not in indexed_facts(tmp_path)["cccccccc"]
    assert reads.take() == ["aaaaaaaa", "bbbbbbbb", "cccccccc"]
    list_runs(tmp_path)  # adds what run list needs
    assert reads.take() == ["aaaaaaaa", "bbbbbbbb", "cccccccc"]
    assert newest_run_id(tmp_path) == "cccccccc"
    assert list_runs(tmp_path)["runs"] == rows_from_states(tmp_path)
    assert reads.take() == []
    assert "extra" in indexed_facts(tmp_path)["cccccccc"]


def test_a_created_run_and_an_ended_run_are_read_again(
    git_project: Path, fake_clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = creation.start_run("review", root=git_project)["state"]["run_id"]
    fake_clock.advance(1)
    second = creation.start_run("bugfix", root=git_project, stack="backend")["state"]["run_id"]
    age(git_project, first, second)
    assert newest_run_id(git_project) == second
    list_runs(git_project)
    reads = StateReads(monkeypatch)
    fake_clock.advance(1)
    third = creation.start_run("review", root=git_project)["state"]["run_id"]
    ending.end_run(git_project, first, "failed")
    listed = list_runs(git_project)
    assert reads.take() == sorted([first, third])
    assert listed["runs"] == rows_from_states(git_project)
    assert [(row["run_id"], row["status"]) for row in listed["runs"]] == [
        (third, "running"),
        (second, "running"),
        (first, "failed"),
    ]
    assert indexed_facts(git_project)[first]["status"] == "failed"
    assert newest_run_id(git_project) == third


def test_a_state_still_fresh_when_read_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second write within the file system's timestamp granularity could keep the signature: an entry
    read less than RACY_NS after its state was written is not trusted."""
    save_run(tmp_path, make_state(), "aaaaaaaa")
    reads = StateReads(monkeypatch)
    list_runs(tmp_path)
    list_runs(tmp_path)
    assert reads.take() == ["aaaaaaaa", "aaaaaaaa"]
    age(tmp_path, "aaaaaaaa")
    list_runs(tmp_path)
    list_runs(tmp_path)
    assert reads.take() == ["aaaaaaaa"]


def test_a_hand_edit_that_keeps_size_and_time_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    three_runs(tmp_path)
    list_runs(tmp_path)
    path = Path(layout.state_path(tmp_path, "bbbbbbbb"))
    before = path.stat()
    path.write_bytes(path.read_bytes().replace(b'"status": "partial"', b'"status": "failed" '))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size, same mtime: a new ctime
    assert path.stat().st_size == before.st_size
    reads = StateReads(monkeypatch)
    assert list_runs(tmp_path, status="failed")["runs"][0]["run_id"] == "bbbbbbbb"
    assert reads.take() == ["bbbbbbbb"]


def test_a_run_deleted_by_hand_leaves_the_listing_and_the_index(tmp_path: Path) -> None:
    three_runs(tmp_path)
    assert newest_run_id(tmp_path) == "cccccccc"
    shutil.rmtree(layout.run_dir(tmp_path, "cccccccc"))
    os.remove(layout.state_path(tmp_path, "aaaaaaaa"))  # its folder stays: no state, no run
    assert newest_run_id(tmp_path) == "bbbbbbbb"
    assert [row["run_id"] for row in list_runs(tmp_path)["runs"]] == ["bbbbbbbb"]
    assert sorted(indexed_facts(tmp_path)) == ["bbbbbbbb"]
    shutil.rmtree(layout.run_dir(tmp_path, "bbbbbbbb"))
    with pytest.raises(FixloopError) as caught:
        newest_run_id(tmp_path)
    assert caught.value.code == "NO_RUNS"
    assert indexed_facts(tmp_path) == {}


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"version": 999, "runs": {}}',
        b'{"version": 1, "runs": []}',
        b'{"version": 1, "runs": {"aaaaaaaa": "x", "bbbbbbbb": {"facts": 3}}}',
    ],
)
def test_a_missing_or_damaged_index_is_rebuilt(tmp_path: Path, damage: bytes) -> None:
    three_runs(tmp_path)
    expected = list_runs(tmp_path)
    Path(runindex.index_path(tmp_path)).write_bytes(damage)
    assert list_runs(tmp_path) == expected
    assert sorted(indexed_facts(tmp_path)) == ["aaaaaaaa", "bbbbbbbb", "cccccccc"]
    os.remove(runindex.index_path(tmp_path))
    assert newest_run_id(tmp_path) == "cccccccc"
    assert sorted(indexed_facts(tmp_path)) == ["aaaaaaaa", "bbbbbbbb", "cccccccc"]


def test_facts_are_believed_only_for_the_state_they_were_read_from(tmp_path: Path) -> None:
    """An index that claims other facts, under another signature or another run's id, is not believed."""
    three_runs(tmp_path)
    list_runs(tmp_path)
    document = index_document(tmp_path)
    entries = document["runs"]
    entries["aaaaaaaa"]["facts"]["started_at_ms"] = START_MS + 99_000  # would make it the newest
    entries["aaaaaaaa"]["signature"][1] += 1
    entries["bbbbbbbb"]["facts"]["run_id"] = "cccccccc"
    entries["eeeeeeee"] = entries["cccccccc"]  # a run that does not exist
    Path(runindex.index_path(tmp_path)).write_text(json.dumps(document))
    assert newest_run_id(tmp_path) == "cccccccc"
    assert list_runs(tmp_path)["runs"] == rows_from_states(tmp_path)
    assert sorted(indexed_facts(tmp_path)) == ["aaaaaaaa", "bbbbbbbb", "cccccccc"]


def test_an_unreadable_state_is_listed_apart_and_never_indexed(tmp_path: Path) -> None:
    three_runs(tmp_path)
    broken = Path(layout.state_path(tmp_path, "dddddddd"))
    broken.parent.mkdir(parents=True)
    broken.write_text("{not json")
    damaged = two_rounds().state
    damaged["review"]["rounds"] = "not rounds"
    save_run(tmp_path, damaged, "eeeeeeee", started_ms=START_MS + 5000)
    listed = list_runs(tmp_path)
    assert [(item["run_id"], item["code"]) for item in listed["unreadable"]] == [
        ("dddddddd", "STATE_CORRUPT"),
        ("eeeeeeee", "STATE_CORRUPT"),
    ]
    assert sorted(indexed_facts(tmp_path)) == ["aaaaaaaa", "bbbbbbbb", "cccccccc"]
    assert newest_run_id(tmp_path) == "eeeeeeee"  # its run facts are whole; only the review is damaged
    broken.write_text(json.dumps({**lifecycle.load_run(tmp_path, "cccccccc"), "run_id": "dddddddd"}))
    assert list_runs(tmp_path)["unreadable"] == [
        {"run_id": "eeeeeeee", "code": "STATE_CORRUPT", "message": listed["unreadable"][1]["message"]}
    ]


def test_an_index_that_cannot_be_written_leaves_the_listing_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    three_runs(tmp_path)
    with file_lock(runindex.index_path(tmp_path)):  # another process holds the index's lock
        monkeypatch.setattr(runindex, "LOCK_TIMEOUT_S", 0.05)
        assert list_runs(tmp_path)["runs"] == rows_from_states(tmp_path)
    assert not os.path.exists(runindex.index_path(tmp_path))
    assert list_runs(tmp_path)["runs"] == rows_from_states(tmp_path)
    assert os.path.exists(runindex.index_path(tmp_path))


def _list_and_create(root: str, worker: int, rounds: int) -> None:
    for number in range(rounds):
        run_id = f"{worker:04x}{number:04x}"
        save_run(Path(root), make_state(), run_id, started_ms=START_MS + worker * 1000 + number)
        list_runs(Path(root))
        newest_run_id(Path(root))


def test_processes_that_create_and_list_at_once_leave_a_right_index(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_list_and_create, args=(str(tmp_path), worker, 8)) for worker in range(4)
    ]
    for process in workers:
        process.start()
    for process in workers:
        process.join(60)
    assert [process.exitcode for process in workers] == [0, 0, 0, 0]
    created = sorted(f"{worker:04x}{number:04x}" for worker in range(4) for number in range(8))
    listed = list_runs(tmp_path)
    assert listed["unreadable"] == []
    assert sorted(row["run_id"] for row in listed["runs"]) == created
    assert listed["runs"] == rows_from_states(tmp_path)
    assert newest_run_id(tmp_path) == "00030007"
    assert sorted(indexed_facts(tmp_path)) == created
    leftovers = [name for name in os.listdir(layout.fixloop_dir(tmp_path)) if name.endswith(".tmp")]
    assert leftovers == []
