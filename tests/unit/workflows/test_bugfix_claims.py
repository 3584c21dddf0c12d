"""The bugfix implementer's `files_modified` is a claim: the files the run changed are only the claimed ones a
recorded edit wrote or that differ from the snapshot the phase took before the implementer worked; the
others are named in a WARNING and in the final message."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_runs import FakeClock, git
from helpers_touches import agent_writes
from workflows.bugfix_helpers import (
    CALC_FIXED,
    NEW_TEST,
    RED_TEST,
    clean_review,
    events,
    implementer_fix,
    implementer_test,
    next_action,
    record,
    start,
    state,
    through_design,
    write_calc_project,
)

from fixloop.store import layout

NOTES = "notes.md"
NOT_CHANGED = (
    "The implementer said it modified notes.md, but no recorded edit wrote them and they do not differ from "
    "the snapshot taken before it worked: not counted as changed."
)


@pytest.fixture
def project(git_project: Path, fake_clock: FakeClock) -> Path:
    (git_project / NOTES).write_text("# Notes\n")
    git(git_project, "add", NOTES)
    git(git_project, "commit", "-q", "-m", "notes")
    write_calc_project(git_project)
    return git_project


def to_green(root: Path, run_id: str, *claimed: str) -> None:
    through_design(root, run_id)
    (root / NEW_TEST).write_text(RED_TEST)
    assert record(root, run_id, "implementer", implementer_test())["valid"]
    (root / "calc.py").write_text(CALC_FIXED)
    assert record(root, run_id, "implementer", implementer_fix(*claimed))["valid"]


def claim_warnings(root: Path, run_id: str) -> list[tuple[str, list[str]]]:
    return [
        (event["message"], event["files"])
        for event in events(root, run_id, "WARNING")
        if event["code"] == "FILES_CLAIMED_NOT_CHANGED"
    ]


def test_a_claimed_file_that_did_not_change_is_not_counted_and_is_named(project: Path) -> None:
    run_id = start(project)
    to_green(project, run_id, "calc.py", NOTES, "./calc.py")
    assert next_action(project, run_id)["label"] == "review round 1"
    run = state(project, run_id)
    assert run["flow"]["phases"]["4"]["data"]["files_changed"] == ["calc.py", NEW_TEST]
    assert run["flow"]["phases"]["4"]["data"]["unchanged_claims"] == [NOTES]
    assert run["changed_files"] == ["calc.py", NEW_TEST]
    assert claim_warnings(project, run_id) == [(NOT_CHANGED, [NOTES])]
    clean_review(project, run_id)
    stop = next_action(project, run_id)
    assert (stop["status"], stop["summary"]["files_changed"]) == ("success", 2)
    assert (
        "Claims not verified in phase 4: the implementer said it modified notes.md, but they did not change: "
        "not counted as changed."
    ) in stop["message"].splitlines()


def test_a_recorded_edit_counts_even_when_the_content_ends_as_it_was(project: Path) -> None:
    run_id = start(project)
    through_design(project, run_id)
    run_dir = Path(layout.run_dir(project, run_id))
    assert (run_dir / "touches" / "implement-4" / "window.json").is_file()
    agent_writes(project, run_dir, NOTES, "# Notes\n", agent="implementer")  # written back unchanged
    (project / NEW_TEST).write_text(RED_TEST)
    assert record(project, run_id, "implementer", implementer_test())["valid"]
    (project / "calc.py").write_text(CALC_FIXED)
    assert record(project, run_id, "implementer", implementer_fix("calc.py", NOTES))["valid"]
    data = state(project, run_id)["flow"]["phases"]["4"]["data"]
    assert data["files_changed"] == ["calc.py", NOTES, NEW_TEST]
    assert "unchanged_claims" not in data and claim_warnings(project, run_id) == []


def test_every_file_the_implementer_really_changed_is_kept(project: Path) -> None:
    run_id = start(project)
    to_green(project, run_id, "calc.py")
    data = state(project, run_id)["flow"]["phases"]["4"]["data"]
    assert data["files_changed"] == ["calc.py", NEW_TEST]
    assert claim_warnings(project, run_id) == []
