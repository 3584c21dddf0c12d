"""fix-ci phase 1: the failed log through the real gh (local GitHub server) or the user's file, kept on disk
and cut down by the engine; only its bounded failures reach the run state and the analyst."""

from __future__ import annotations

import json
from pathlib import Path

from fake_github import FakeGitHub, Job, Step
from workflows.bugfix_helpers import agents_of, events, next_action, state
from workflows.ci.ci_helpers import PYTEST_LOG, RUFF_FAILURE, failed_run, start

from fixloop.store import layout
from fixloop.workflows import driver
from fixloop.workflows.ci.logfailures import MAX_CHARS, MAX_FAILURES


def raw_log(root: Path, run_id: str) -> Path:
    return Path(layout.run_dir(root, run_id)) / "ci" / "failed.log"


def fetched(root: Path, run_id: str) -> dict[str, object]:
    data: dict[str, object] = state(root, run_id)["flow"]["phases"]["1"]["data"]
    return data


def test_the_failed_log_is_kept_in_the_run_folder_and_cut_down(github: FakeGitHub, checkout: Path) -> None:
    run = failed_run(github, checkout)
    run_id = start(checkout, run=str(run.id))
    assert agents_of(next_action(checkout, run_id)) == ["ci-analyst"]
    text = raw_log(checkout, run_id).read_text()
    assert text.startswith("test\tRun pytest\t") and "E       assert 18 == 2" in text
    data = fetched(checkout, run_id)
    (failure,) = data["failures"]  # type: ignore[misc]
    assert (failure["id"], failure["test_id"], failure["kind"], failure["message"]) == (
        "F1",
        "tests/test_calc.py::test_divide",
        "test",
        "assert 18 == 2",
    )
    assert (failure["job"], failure["step"], failure["file"], failure["line"]) == (
        "test",
        "Run pytest",
        "tests/test_calc.py",
        5,
    )
    log = data["log"]
    assert log == {  # type: ignore[comparison-overlap]
        "path": str(raw_log(checkout, run_id)),
        "bytes": len(text.encode()),
        "lines_read": 14,
        "lines_kept": failure["details"].count("\n") + 2,
        "failures_dropped": 0,
        "notes": [],
    }
    (collected,) = [e for e in events(checkout, run_id, "DATA_COLLECTED") if e["data_type"] == "ci_log"]
    assert collected["summary"]["failures"] == 1 and collected["summary"]["source"] == "github"
    found = events(checkout, run_id)
    steps = [
        (e["type"], e["step"], e.get("status")) for e in found if e["type"] in ("STEP_START", "STEP_END")
    ]
    assert steps == [("STEP_START", "ci_log", None), ("STEP_END", "ci_log", "success")]
    task = driver.task(checkout, run_id, "ci-analyst")
    assert "F1. tests/test_calc.py::test_divide (test) in test / Run pytest at tests/test_calc.py:5" in task
    assert f"Whole log: {raw_log(checkout, run_id)}" in task and "Runner ready" not in task
    assert f"GitHub Actions run {run.id} of workflow 'CI'" in task


def test_a_named_job_fetches_that_jobs_log_only(github: FakeGitHub, checkout: Path) -> None:
    run = failed_run(
        github,
        checkout,
        Job("lint", [Step("Ruff", "failure", log="\n".join(RUFF_FAILURE))]),
        Job("test", [Step("Run pytest", "failure", log=PYTEST_LOG)]),
    )
    everything = start(checkout, run=str(run.id))
    next_action(checkout, everything)
    assert [f["test_id"] for f in fetched(checkout, everything)["failures"]] == [  # type: ignore[attr-defined]
        "calc.py:1:8 F401",
        "tests/test_calc.py::test_divide",
    ]
    one_job = start(checkout, run=str(run.id), job="lint")
    next_action(checkout, one_job)
    assert raw_log(checkout, one_job).read_text().startswith("lint\tRuff\t")
    (failure,) = fetched(checkout, one_job)["failures"]  # type: ignore[misc]
    assert (failure["test_id"], failure["kind"], failure["job"]) == ("calc.py:1:8 F401", "lint", "lint")


def test_a_log_too_large_to_pass_whole_reaches_the_analyst_cut_down(
    github: FakeGitHub, checkout: Path
) -> None:
    lines = [
        f"FAILED tests/test_app.py::test_case_{i:06d} - AssertionError: expected {i}" for i in range(60000)
    ]
    lines.append("##[error]Process completed with exit code 1.")
    run = failed_run(github, checkout, Job("test", [Step("Run pytest", "failure", log="\n".join(lines))]))
    run_id = start(checkout, run=str(run.id))
    assert agents_of(next_action(checkout, run_id)) == ["ci-analyst"]
    size = raw_log(checkout, run_id).stat().st_size
    assert size > 5_000_000
    data = fetched(checkout, run_id)
    failures = data["failures"]
    assert len(failures) == MAX_FAILURES  # type: ignore[arg-type]
    assert data["log"]["lines_read"] == 60001  # type: ignore[index]
    log = data["log"]
    # 1,500 failures kept by the reduction (its line budget), 599 more read there but not kept, 58,301 lines
    # near later failures not even read; of the 1,500, all but MAX_FAILURES left out of what an agent reads.
    assert log["failures_dropped"] == 599 + 1500 - MAX_FAILURES  # type: ignore[index]
    assert log["notes"] == [  # type: ignore[index]
        "test / Run pytest: 58301 lines near its later failures were not kept (of those, only the ones among "
        "its last 400 lines were read)",
        f"{1500 - MAX_FAILURES} more failure(s) were left out to keep what an agent reads under {MAX_CHARS} "
        "characters",
    ]
    dropped = 599 + 1500 - MAX_FAILURES
    task = driver.task(checkout, run_id, "ci-analyst")
    assert len(task) < MAX_CHARS and len(task) < size / 100
    assert f"{dropped} more failure(s) were left out." in task and "58301 lines near" in task
    assert "test_case_000039" in task and "test_case_000040" not in task
    stored = json.dumps(state(checkout, run_id))
    assert len(stored) < 100_000 and "test_case_059999" not in stored


def test_a_failed_step_without_a_log_is_a_failure_of_its_own(github: FakeGitHub, checkout: Path) -> None:
    run = failed_run(github, checkout, Job("test", [Step("Set up job", "failure", log="")]))
    run_id = start(checkout, run=str(run.id))
    assert agents_of(next_action(checkout, run_id)) == ["ci-analyst"]
    (failure,) = fetched(checkout, run_id)["failures"]  # type: ignore[misc]
    assert (failure["id"], failure["test_id"], failure["kind"], failure["message"]) == (
        "F1",
        "test / Set up job",
        "step",
        "The step failed and GitHub kept no log of it.",
    )


def test_a_log_file_that_shows_no_failure_ends_the_run(project: Path) -> None:
    path = project / "job.log"
    path.write_text("".join(f"2024-05-14T09:12:03Z step {n} done\n" for n in range(50)) + "Job succeeded\n")
    run_id = start(project, log_file=str(path))
    stop = next_action(project, run_id)
    assert (stop["status"], stop["reason"]) == ("success", "no_failure_found")
    (warning,) = events(project, run_id, "WARNING")
    assert warning["message"] == f"The log ({path}) shows no failure: there is nothing to fix."
    assert [r["status"] for r in state(project, run_id)["phase_results"]] == ["success"] + ["skipped"] * 6


def test_a_later_phase_takes_the_run_from_an_earlier_fix_ci_run(github: FakeGitHub, checkout: Path) -> None:
    run = failed_run(github, checkout)
    first = start(checkout, run=str(run.id), phase="0")
    assert next_action(checkout, first)["status"] == "success"
    run.status = "in_progress"  # GitHub gives no log of a run that is not over
    later = start(checkout, run=str(run.id), phase="1")
    stop = next_action(checkout, later)
    assert (stop["status"], stop["error"]["code"]) == ("failed", "CI_LOG_UNAVAILABLE")
    assert "pass it with --log-file PATH" in stop["error"]["message"]
    (resumed,) = [e for e in events(checkout, later, "DATA_COLLECTED") if e["data_type"] == "resumed_phase"]
    assert resumed["summary"] == {"phase": "phase_0", "run_id": first, "source": "earlier_run"}
    other = start(checkout, run="123", phase="1")  # another run was never fetched
    stop = next_action(checkout, other)
    assert stop["error"]["message"] == (
        "Phase 1 needs the CI run or log of phase 0: this run did not complete it and no earlier ci-job run "
        "of CI run 123 in this project did. Run phase 0 first (--phase=0)."
    )
