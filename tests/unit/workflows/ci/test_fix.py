"""fix-ci phase 4: red is the engine's local reproduction, green the same runs passing after the fix."""

from __future__ import annotations

from pathlib import Path

from helpers_runs import git
from workflows.bugfix_helpers import (
    agents_of,
    clean_review,
    events,
    next_action,
    record,
    state,
    tree_digest,
)
from workflows.ci.ci_helpers import (
    FAILING,
    LINT,
    NOISY_LOG,
    add_unused_import,
    analyst,
    entry,
    implementer_fix,
    pytest_and_ruff_log,
    start,
    through_classify,
)

FIXED = "def divide(a, b):\n    return a / b\n"


def implemented(root: Path, run_id: str) -> dict[str, object]:
    data: dict[str, object] = state(root, run_id)["flow"]["phases"]["4"]["data"]
    return data


def test_a_fix_that_leaves_the_test_failing_is_refused(project: Path) -> None:
    run_id = start(project, log_file=str(NOISY_LOG))
    through_classify(project, run_id)
    red = implemented(project, run_id)["red"]
    assert red["proven_by"] == "reproduction" and red["message"] == "assert 18 == 2"  # type: ignore[index]
    assert red["test"] == {"file": "tests/test_calc.py", "name": "test_divide", "line": None}  # type: ignore[index]
    refused = record(project, run_id, "implementer", implementer_fix("calc.py"))
    assert (refused["valid"], refused["retry"], refused["error"]["code"]) == (False, True, "STILL_FAILING")
    assert refused["error"]["failing"] == [FAILING]
    (project / "calc.py").write_text(FIXED)
    assert record(project, run_id, "implementer", implementer_fix("calc.py"))["valid"]
    data = implemented(project, run_id)
    assert (data["files_changed"], data["errors_fixed"], data["to_fix"]) == (["calc.py"], 1, ["F1"])
    assert data["green"]["tests"] == [FAILING] and data["green"]["checks"] == {}  # type: ignore[index]
    purposes = [
        e["summary"]["purpose"]
        for e in events(project, run_id, "DATA_COLLECTED")
        if "purpose" in e["summary"]
    ]
    assert purposes == ["reproduce", "green", "green"]


def test_an_implementer_that_cannot_work_fails_the_phase(project: Path) -> None:
    run_id = start(project, log_file=str(NOISY_LOG))
    through_classify(project, run_id)
    error = {"code": "NO_ACCESS", "message": "read-only checkout", "recoverable": False}
    assert record(
        project, run_id, "implementer", {"status": "failed", "agent": "implementer", "error": error}
    )["valid"]
    stop = next_action(project, run_id)
    assert (stop["status"], stop["error"]["code"]) == ("failed", "IMPLEMENTATION_FAILED")
    assert (
        stop["error"]["message"]
        == "The fix was not implemented: the implementer could not work: read-only checkout."
    )


def test_a_lint_fix_needs_no_test_command(project: Path) -> None:
    add_unused_import(project)
    git(project, "rm", "-q", "tests/test_calc.py")  # no test for the engine to find a test command by
    git(project, "commit", "-q", "-m", "no tests")
    run_id = start(project, log_file=pytest_and_ruff_log(project), lint_command=LINT, test_command=None)
    action = through_classify(project, run_id, analyst(entry("F1", "lint"), entry("F2", "infrastructure")))
    assert agents_of(action) == ["implementer"]
    (project / "calc.py").write_text((project / "calc.py").read_text().replace("import os\n", ""))
    assert record(project, run_id, "implementer", implementer_fix("calc.py"))["valid"]
    assert implemented(project, run_id)["errors_fixed"] == 1


def test_a_dry_run_reproduces_and_reports_but_changes_nothing(project: Path) -> None:
    before = tree_digest(project)
    run_id = start(project, log_file=str(NOISY_LOG), dry_run=True)
    stop = through_classify(project, run_id)
    assert (stop["action"], stop["status"]) == ("stop", "dry_run_complete")
    statuses = [r["status"] for r in state(project, run_id)["phase_results"]]
    assert statuses == ["success"] * 4 + ["skipped", "skipped", "success"]
    assert "- F1 test (90%): divide multiplies: reproduced locally, not fixed" in stop["message"]
    assert "Dry run: nothing was changed." in stop["message"]
    assert tree_digest(project) == before


def test_a_later_run_fixes_what_an_earlier_run_reproduced(project: Path) -> None:
    first = start(project, log_file=str(NOISY_LOG), phase="0,1,2,3")
    stop = through_classify(project, first)
    assert (stop["action"], stop["status"]) == ("stop", "success")
    later = start(project, log_file=str(NOISY_LOG), phase="4,5,6")
    action = next_action(project, later)
    assert (agents_of(action), action["label"]) == (["implementer"], "implement the fix (fix)")
    resumed = [
        e["summary"] for e in events(project, later, "DATA_COLLECTED") if e["data_type"] == "resumed_phase"
    ]
    phases = [(item["phase"], item["run_id"]) for item in resumed]
    assert phases == [("phase_2", first), ("phase_3", first), ("phase_1", first)]
    (project / "calc.py").write_text(FIXED)
    assert record(project, later, "implementer", implementer_fix("calc.py"))["valid"]
    assert next_action(project, later)["label"] == "review round 1"
    clean_review(project, later)
    done = next_action(project, later)
    assert (done["status"], done["summary"]["errors_fixed"]) == ("success", 1)
    assert "- F1 test (90%): divide multiplies: reproduced locally, fixed" in done["message"]
    other = start(project, log_file=str(project / "other.log"), phase="4")
    refused = next_action(project, other)
    assert (refused["status"], refused["error"]["code"]) == ("failed", "PREREQUISITE_MISSING")
