from __future__ import annotations

import functools
import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest
from helpers_workers import increment_many

from fixloop.core.errors import FixloopError
from fixloop.store.atomic import write_atomic
from fixloop.store.locking import file_lock
from fixloop.store.statestore import StateStore, minimal_run_state_errors

T0 = 1733495452.123  # 2024-12-06T14:30:52.123Z


def fixed_clock() -> float:
    return T0


def run_state(**overrides: Any) -> dict[str, Any]:
    state: dict[str, Any] = {
        "run_id": "a1b2c3d4",
        "workflow": "bugfix",
        "status": "running",
        "created_at": "2024-12-06T14:30:52.123Z",
        "error_count": 0,
        "errors": [],
        "config": {"max_review_iterations": 3},
        "phases": [],
        "review": {},
        "logging": {"enabled": True, "level": "info", "session_id": "a1b2c3d4"},
    }
    state.update(overrides)
    return state


def encoded(doc: dict[str, Any]) -> bytes:
    """The state file's text: one line per top-level key, its value compact."""
    lines = [f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}" for key, value in doc.items()]
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8")


def history_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (path.parent / "state-history.jsonl").read_text().splitlines()]


@pytest.fixture
def store(tmp_path: Path) -> StateStore:
    return StateStore(tmp_path / "run" / "state.json", validate=minimal_run_state_errors, clock=fixed_clock)


# ---- minimal_run_state_errors ---------------------------------------------------------------------


def test_a_complete_run_state_has_no_errors() -> None:
    assert minimal_run_state_errors(run_state()) == []


def test_every_missing_key_is_reported() -> None:
    assert minimal_run_state_errors({}) == [
        "run_id: missing",
        "workflow: missing",
        "status: missing",
        "created_at: missing",
        "error_count: missing",
        "errors: missing",
        "config: missing",
        "phases: missing",
        "review: missing",
        "logging: missing",
    ]


def test_wrong_types_are_reported() -> None:
    doc = run_state(run_id="XYZ", error_count=True, errors={}, config=[], phases=None, logging="on")
    assert minimal_run_state_errors(doc) == [
        "error_count: expected integer, got boolean",
        "errors: expected array, got object",
        "config: expected object, got array",
        "phases: expected array, got null",
        "logging: expected object, got string",
        "run_id: expected 8 lowercase hex characters",
    ]


# ---- create / read ----------------------------------------------------------------------------------


def test_create_writes_the_document_and_a_history_record(store: StateStore) -> None:
    doc = run_state()
    assert store.create(doc) == doc
    assert store.path.read_bytes() == encoded(doc)
    assert not store.backup_path.exists()
    assert history_lines(store.path) == [
        {"ts": "2024-12-06T14:30:52.123Z", "action": "create", "changed": sorted(doc)}
    ]
    assert store.read() == doc


def test_create_refuses_an_existing_state(store: StateStore) -> None:
    store.create(run_state())
    with pytest.raises(FixloopError) as caught:
        store.create(run_state(status="other"))
    assert caught.value.code == "RUN_EXISTS"
    assert store.read()["status"] == "running"


def test_a_creation_that_fails_half_way_leaves_no_run(store: StateStore) -> None:
    store.history_path.mkdir(parents=True)  # its history cannot be read nor written
    with pytest.raises(FixloopError) as caught:
        store.create(run_state())
    assert caught.value.code == "STATE_UNREADABLE"
    assert not store.path.exists()
    assert sorted(path.name for path in store.path.parent.iterdir()) == [
        store.history_path.name,
        "state.json.lock",
    ]


def test_create_refuses_an_invalid_document(store: StateStore) -> None:
    with pytest.raises(FixloopError) as caught:
        store.create(run_state(error_count="zero"))
    assert caught.value.code == "STATE_INVALID"
    assert caught.value.details["errors"] == ["error_count: expected integer, got string"]
    assert not store.path.exists()


def test_read_of_a_missing_state(store: StateStore) -> None:
    with pytest.raises(FixloopError) as caught:
        store.read()
    assert caught.value.code == "RUN_NOT_FOUND"


# ---- update ------------------------------------------------------------------------------------------


def test_update_by_mutation_saves_backs_up_and_records(store: StateStore) -> None:
    store.create(run_state())
    before = store.path.read_bytes()

    def advance(state: dict[str, Any]) -> None:
        state["status"] = "reviewing"
        state["phases"].append({"phase": 0, "status": "success"})

    result = store.update(advance, action="phase_done")
    expected = run_state(status="reviewing", phases=[{"phase": 0, "status": "success"}])
    assert result == expected
    assert store.path.read_bytes() == encoded(expected)
    assert store.backup_path.read_bytes() == before
    assert history_lines(store.path)[-1] == {
        "ts": "2024-12-06T14:30:52.123Z",
        "action": "phase_done",
        "changed": ["phases", "status"],
    }


def test_update_by_returning_a_new_document(store: StateStore) -> None:
    store.create(run_state())
    result = store.update(lambda state: {**state, "review": {"iteration": 1}, "extra": True})
    assert result == {**run_state(review={"iteration": 1}), "extra": True}
    assert store.read() == result
    assert history_lines(store.path)[-1]["changed"] == ["extra", "review"]


def test_update_that_changes_nothing_writes_nothing(store: StateStore) -> None:
    store.create(run_state())
    store.update(lambda state: None)
    assert not store.backup_path.exists()
    assert [record["action"] for record in history_lines(store.path)] == ["create"]


def test_update_whose_function_raises_leaves_the_state_alone(store: StateStore) -> None:
    store.create(run_state())
    before = store.path.read_bytes()

    def broken(state: dict[str, Any]) -> None:
        state["status"] = "half-done"
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        store.update(broken)
    assert store.path.read_bytes() == before
    assert store.read()["status"] == "running"


def test_update_producing_an_invalid_state_is_refused(store: StateStore) -> None:
    store.create(run_state())
    before = store.path.read_bytes()
    with pytest.raises(FixloopError) as caught:
        store.update(lambda state: {**state, "errors": "none"})
    assert caught.value.code == "STATE_INVALID"
    assert caught.value.details["errors"] == ["errors: expected array, got string"]
    with pytest.raises(FixloopError) as caught:
        store.update(lambda state: ["not", "a", "dict"])  # type: ignore[arg-type,return-value]
    assert caught.value.code == "STATE_INVALID"
    with pytest.raises(FixloopError) as caught:
        store.update(lambda state: {**state, "review": {"score": float("nan")}})
    assert caught.value.code == "STATE_INVALID"
    assert store.path.read_bytes() == before
    assert not store.backup_path.exists()


def test_lone_surrogates_survive_a_round_trip(store: StateStore) -> None:
    store.create(run_state())
    store.update(lambda state: {**state, "review": {"note": "bad \udc80 byte"}})
    json.loads(store.path.read_bytes().decode("utf-8"))  # still strict UTF-8 JSON on disk
    assert store.read()["review"] == {"note": "bad \udc80 byte"}


def _set_review(state: dict[str, Any], n: int) -> dict[str, Any]:
    return {**state, "review": {"n": n}}


def _replace_n(state: dict[str, Any], n: int) -> dict[str, Any]:
    return {"n": n}


def test_only_the_expected_files_are_left_in_the_run_directory(store: StateStore) -> None:
    store.create(run_state())
    for number in range(3):
        store.update(functools.partial(_set_review, n=number))
    assert sorted(os.listdir(store.path.parent)) == [
        "state-history.jsonl",
        "state.json",
        "state.json.bak",
        "state.json.lock",
    ]


def test_history_is_capped_at_the_limit(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.json", history_limit=5, clock=fixed_clock)
    store.create({"n": 0})
    for number in range(1, 11):
        store.update(functools.partial(_replace_n, n=number), action=f"step{number}")
    records = history_lines(store.path)
    assert [record["action"] for record in records] == ["step6", "step7", "step8", "step9", "step10"]
    assert store.read() == {"n": 10}
    assert json.loads(store.backup_path.read_text()) == {"n": 9}


def test_a_zero_history_limit_disables_the_history(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.json", history_limit=0)
    store.create({"n": 0})
    store.update(lambda state: {"n": 1})
    assert not (tmp_path / "state-history.jsonl").exists()


# ---- corruption and restore --------------------------------------------------------------------------


def _two_versions(store: StateStore) -> bytes:
    store.create(run_state())
    store.update(lambda state: {**state, "status": "reviewing"})
    return store.backup_path.read_bytes()


@pytest.mark.parametrize(
    "damage",
    [b"", b'{"run_id": "a1b2c3d4", "workf', b"\x00\xff\xfe garbage", b"[1, 2, 3]\n", b'{"run_id": 5}\n'],
    ids=["empty", "truncated", "binary", "not-an-object", "fails-validation"],
)
def test_read_restores_a_corrupt_state_from_the_backup(store: StateStore, damage: bytes) -> None:
    backup = _two_versions(store)
    store.path.write_bytes(damage)
    assert store.read() == run_state()
    assert store.path.read_bytes() == backup
    assert store.backup_path.read_bytes() == backup
    last = history_lines(store.path)[-1]
    assert last["action"] == "restore"
    assert last["reason"].startswith("corrupt: ")


def test_update_on_a_corrupt_state_restores_first(store: StateStore) -> None:
    _two_versions(store)
    store.path.write_text("{oops")
    result = store.update(lambda state: {**state, "status": "again"})
    assert result == run_state(status="again")
    assert json.loads(store.backup_path.read_text()) == run_state()
    assert [record["action"] for record in history_lines(store.path)][-2:] == ["restore", "update"]


def test_corrupt_state_and_corrupt_backup_is_an_error_not_an_empty_state(store: StateStore) -> None:
    _two_versions(store)
    store.path.write_text("{oops")
    store.backup_path.write_text("also broken")
    with pytest.raises(FixloopError) as caught:
        store.read()
    assert caught.value.code == "STATE_CORRUPT"
    assert caught.value.details["errors"][0].startswith("not valid JSON")
    assert store.path.read_text() == "{oops"


def test_corrupt_state_without_backup_is_an_error(store: StateStore) -> None:
    store.create(run_state())
    store.path.write_text("null")
    with pytest.raises(FixloopError) as caught:
        store.read()
    assert caught.value.code == "STATE_CORRUPT"
    assert caught.value.details["errors"] == ["expected a JSON object, got null"]


def test_restore_rolls_back_to_the_state_before_the_latest_write(store: StateStore) -> None:
    store.create(run_state())
    store.update(lambda state: {**state, "status": "one"})
    store.update(lambda state: {**state, "status": "two"})
    assert store.restore() == run_state(status="one")
    assert store.read() == run_state(status="one")
    assert history_lines(store.path)[-1] == {
        "ts": "2024-12-06T14:30:52.123Z",
        "action": "restore",
        "changed": ["status"],
        "reason": "requested",
    }


def test_restore_without_a_backup(store: StateStore) -> None:
    store.create(run_state())
    with pytest.raises(FixloopError) as caught:
        store.restore()
    assert caught.value.code == "NO_BACKUP"


# ---- record_error ------------------------------------------------------------------------------------


def test_record_error_counts_and_fails_the_run_at_three(store: StateStore) -> None:
    store.create(run_state())
    first = store.record_error("action-deep-review", "agent timed out")
    assert first["error_count"] == 1
    assert first["status"] == "running"
    assert first["errors"] == [
        {"ts": "2024-12-06T14:30:52.123Z", "action": "action-deep-review", "message": "agent timed out"}
    ]
    second = store.record_error("action-fix", "token=abc123 leaked")
    assert second["errors"][1]["message"] == "token=[REDACTED] leaked"
    assert second["status"] == "running"
    third = store.record_error("action-fix", "again")
    assert third["error_count"] == 3
    assert third["status"] == "failed"
    assert store.read() == third
    assert history_lines(store.path)[-1]["action"] == "record_error"


# ---- locking and concurrency -------------------------------------------------------------------------


def test_a_held_lock_makes_an_update_time_out(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.json", lock_timeout=0.05)
    store.create({"n": 0})
    with file_lock(store.path), pytest.raises(FixloopError) as caught:
        store.update(lambda state: {"n": 1})
    assert caught.value.code == "LOCK_TIMEOUT"
    assert store.read() == {"n": 0}


def test_concurrent_updates_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    store = StateStore(path, validate=minimal_run_state_errors)
    store.create(run_state())
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=increment_many, args=(str(path), 50)) for _ in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
    assert [worker.exitcode for worker in workers] == [0] * 6
    assert store.read()["review"]["counter"] == 300
    assert json.loads(store.backup_path.read_text())["review"]["counter"] == 299
    assert len(history_lines(path)) == 50


def test_atomic_write_creates_directories_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "file.txt"
    write_atomic(target, b"one")
    write_atomic(target, b"two")
    assert target.read_bytes() == b"two"
    assert os.listdir(target.parent) == ["file.txt"]


def test_temporary_files_of_killed_writers_are_removed(store: StateStore) -> None:
    import os
    import subprocess
    import sys

    store.create(run_state())
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(dead.stdout)
    left = store.path.parent / f".state.json.{dead_pid}.0.tmp"
    left.write_bytes(b"x" * 1_000_000)  # what a write killed half-way leaves
    live = store.path.parent / f".state.json.{os.getpid()}.7.tmp"
    live.write_bytes(b"in progress")
    other = store.path.parent / "notes.tmp"
    other.write_text("not ours")
    store.update(lambda state: state.update(status="ended"))
    assert not left.exists()
    assert live.exists() and other.exists()
