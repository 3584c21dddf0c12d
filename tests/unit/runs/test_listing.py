"""Finding a project's runs: newest first, `latest`, and states that cannot be read."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_reports import START_MS, save_run
from helpers_review import make_state

from fixloop.core.errors import FixloopError
from fixloop.runs.listing import listed_runs, newest_run_id, resolve_alias, resolve_run, run_ids
from fixloop.store import layout


def test_no_runs(tmp_path: Path) -> None:
    assert run_ids(tmp_path) == []
    assert listed_runs(tmp_path).facts == []
    with pytest.raises(FixloopError) as caught:
        newest_run_id(tmp_path)
    assert caught.value.code == "NO_RUNS"
    with pytest.raises(FixloopError) as caught:
        resolve_run(tmp_path, "latest")
    assert caught.value.code == "NO_RUNS"


def test_newest_is_the_run_started_last_not_the_last_id(tmp_path: Path) -> None:
    save_run(tmp_path, make_state(), "ffffffff", started_ms=START_MS)
    save_run(tmp_path, make_state(), "00000001", started_ms=START_MS + 2000)
    save_run(tmp_path, make_state(), "aaaaaaaa", started_ms=START_MS + 1000)
    assert sorted(run_ids(tmp_path)) == ["00000001", "aaaaaaaa", "ffffffff"]
    assert [facts["run_id"] for facts in listed_runs(tmp_path).facts] == ["00000001", "aaaaaaaa", "ffffffff"]
    assert newest_run_id(tmp_path) == "00000001"
    assert resolve_run(tmp_path, "latest") == "00000001"
    assert resolve_run(tmp_path, "aaaaaaaa") == "aaaaaaaa"
    assert resolve_alias(tmp_path, "logs/x.jsonl") == "logs/x.jsonl"
    assert resolve_alias(tmp_path, "latest") == "00000001"


def test_a_bad_run_argument_names_both_forms(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        resolve_run(tmp_path, "../etc")
    assert caught.value.code == "INVALID_RUN_ID"
    assert caught.value.message == (
        "Invalid run id '../etc': expected 8 lowercase hex characters or 'latest'."
    )
    assert caught.value.details == {"received": "../etc"}


def test_an_unreadable_state_is_listed_apart(tmp_path: Path) -> None:
    save_run(tmp_path, make_state(), "aaaaaaaa", started_ms=START_MS)
    broken = Path(layout.state_path(tmp_path, "bbbbbbbb"))
    broken.parent.mkdir(parents=True)
    broken.write_text("{not json")
    Path(layout.runs_dir(tmp_path), "not-a-run").mkdir()
    Path(layout.runs_dir(tmp_path), "cccccccc").mkdir()  # no state file: not a run
    found = listed_runs(tmp_path)
    assert [facts["run_id"] for facts in found.facts] == ["aaaaaaaa"]
    assert [(item.run_id, item.code) for item in found.unreadable] == [("bbbbbbbb", "STATE_CORRUPT")]
    assert newest_run_id(tmp_path) == "aaaaaaaa"
