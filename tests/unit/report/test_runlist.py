"""`fixloop run list`: one row per run, newest first, filtered and limited."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_reports import START_MS, save_run
from helpers_review import make_state, two_rounds

from fixloop.core.errors import FixloopError
from fixloop.report.runlist import list_runs, run_row, termination_reason


def projects_runs(root: Path) -> None:
    save_run(root, two_rounds().state, "aaaaaaaa", started_ms=START_MS)
    finished = two_rounds().state
    finished["review"]["outcome"] = {"status": "partial", "termination_reason": "max_iterations"}
    save_run(
        root,
        finished,
        "bbbbbbbb",
        started_ms=START_MS + 1000,
        ended_ms=START_MS + 61_000,
        status="partial",
    )
    bugfix = make_state()
    bugfix["flow"] = {"outcome": {"status": "failed", "reason": "NO_REPRODUCTION"}}
    save_run(
        root,
        bugfix,
        "cccccccc",
        started_ms=START_MS + 2000,
        ended_ms=START_MS + 3000,
        status="failed",
        workflow="bugfix",
    )


def test_rows_newest_first(tmp_path: Path) -> None:
    projects_runs(tmp_path)
    assert list_runs(tmp_path) == {
        "count": 3,
        "runs": [
            {
                "run_id": "cccccccc",
                "workflow": "bugfix",
                "status": "failed",
                "started": "2025-12-06T05:46:42.000Z",
                "ended": "2025-12-06T05:46:43.000Z",
                "termination_reason": "NO_REPRODUCTION",
                "remaining_issues": None,
            },
            {
                "run_id": "bbbbbbbb",
                "workflow": "review",
                "status": "partial",
                "started": "2025-12-06T05:46:41.000Z",
                "ended": "2025-12-06T05:47:41.000Z",
                "termination_reason": "max_iterations",
                "remaining_issues": 3,
            },
            {
                "run_id": "aaaaaaaa",
                "workflow": "review",
                "status": "running",
                "started": "2025-12-06T05:46:40.000Z",
                "ended": None,
                "termination_reason": None,
                "remaining_issues": 3,
            },
        ],
        "unreadable": [],
    }


def test_filters_and_limit(tmp_path: Path) -> None:
    projects_runs(tmp_path)
    ids = lambda answer: [row["run_id"] for row in answer["runs"]]  # noqa: E731
    assert ids(list_runs(tmp_path, workflow="review")) == ["bbbbbbbb", "aaaaaaaa"]
    assert ids(list_runs(tmp_path, status="running")) == ["aaaaaaaa"]
    assert ids(list_runs(tmp_path, workflow="review", limit=1)) == ["bbbbbbbb"]
    assert list_runs(tmp_path, workflow="ci-job") == {"count": 0, "runs": [], "unreadable": []}


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"workflow": "nope"}, "UNKNOWN_WORKFLOW"),
        ({"status": "done"}, "INVALID_STATUS"),
        ({"limit": 0}, "INVALID_ARGUMENT"),
    ],
)
def test_bad_filters(tmp_path: Path, arguments: dict[str, object], code: str) -> None:
    with pytest.raises(FixloopError) as caught:
        list_runs(tmp_path, **arguments)  # type: ignore[arg-type]
    assert caught.value.code == code


def test_a_run_before_its_review_has_no_remaining_count() -> None:
    state = {**make_state(), "created_at": "2025-01-01T00:00:00.000Z", "ended_at_ms": None}
    row = run_row(state)
    assert (row["termination_reason"], row["remaining_issues"]) == (None, None)
    assert termination_reason({"flow": {"outcome": {"reason": None}}, "review": {}}) is None
