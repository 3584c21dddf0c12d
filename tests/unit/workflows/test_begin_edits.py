"""Beginning a phase's edits: a snapshot and touch window, or a SNAPSHOT_FAILED warning that says what the
phase does without one (the bugfix implementer's files, a plan batch's changes)."""

from __future__ import annotations

from pathlib import Path

from fixloop.workflows import claimed_files
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.plan.changes import take_snapshot


def context(root: Path) -> PhaseContext:
    return PhaseContext({"project_dir": str(root), "run_id": "abcd1234"}, 3, 0, None)


def test_the_snapshot_is_begun_in_the_windows_of_each_phase(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("A = 1\n")
    ctx = context(tmp_path)
    implement = claimed_files.begin(ctx, ["a.py", "a.py"])
    batch = take_snapshot(ctx, ["a.py"], 2)
    assert implement is not None and batch is not None
    assert Path(str(implement["dir"])).name == "implement-3"
    assert Path(str(batch["dir"])).name == "plan-batch-2"
    assert ctx.flow["warnings"] == []


def test_a_snapshot_that_cannot_be_taken_is_a_warning_naming_what_follows(tmp_path: Path) -> None:
    runs = tmp_path / ".claude" / "fixloop" / "runs"
    runs.parent.mkdir(parents=True)
    runs.write_text("not a directory")
    ctx = context(tmp_path)
    assert claimed_files.begin(ctx, ["a.py"]) is None
    assert take_snapshot(ctx, ["a.py"], 2) is None
    messages = [(item["code"], item["message"]) for item in ctx.flow["warnings"]]
    assert [code for code, _ in messages] == ["SNAPSHOT_FAILED", "SNAPSHOT_FAILED"]
    assert messages[0][1].startswith("The project could not be snapshotted before the implementer: ")
    assert messages[0][1].endswith(". The files it says it modified are taken at its word.")
    assert messages[1][1].startswith("The project could not be snapshotted before batch 2: ")
    assert messages[1][1].endswith(". The files changed are taken from the implementer's answer.")
