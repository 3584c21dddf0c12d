"""fix-ci end to end on the engine: a noisy CI log file of several megabytes, and a GitHub Actions run through
the real gh, each reproduced locally, fixed red then green, reviewed and reported."""

from __future__ import annotations

from pathlib import Path

from fake_github import GITHUB_HOST, FakeGitHub
from workflows.bugfix_helpers import agents_of, clean_review, events, next_action, record, state
from workflows.ci.ci_helpers import FAILING, NOISY_LOG, analyst, entry, failed_run, implementer_fix, start

from fixloop.store import layout
from fixloop.workflows import driver

FIXED = "def divide(a, b):\n    return a / b\n"


def fix_and_review(root: Path, run_id: str) -> dict[str, object]:
    action = next_action(root, run_id)
    assert (agents_of(action), action["label"]) == (["implementer"], "implement the fix (fix)")
    (root / "calc.py").write_text(FIXED)
    assert record(root, run_id, "implementer", implementer_fix("calc.py"))["valid"]
    assert next_action(root, run_id)["label"] == "review round 1"
    clean_review(root, run_id)
    stop: dict[str, object] = next_action(root, run_id)
    return stop


def test_a_noisy_log_file_is_reproduced_fixed_reviewed_and_reported(project: Path) -> None:
    run_id = start(project, log_file=str(NOISY_LOG))
    assert agents_of(next_action(project, run_id)) == ["ci-analyst"]
    task = driver.task(project, run_id, "ci-analyst")
    assert len(task) < 4000 and "\x1b" not in task and "PASSED" not in task and "section_start" not in task
    assert "F1. tests/test_calc.py::test_divide (test) in step_script at tests/test_calc.py:5" in task
    cause = {"cause": "divide multiplies its arguments", "fix": "return a / b", "file": "calc.py", "line": 2}
    answer = analyst(entry("F1", "test", confidence=95, **cause))
    assert record(project, run_id, "ci-analyst", answer)["valid"]
    stop = fix_and_review(project, run_id)
    assert (stop["action"], stop["status"]) == ("stop", "success")
    assert stop["summary"] == {
        "errors_fixed": 1,
        "files_changed": 1,
        "review_issues_fixed": 0,
        "user_interactions": 0,
        "ci_failures": 1,
        "ci_reproduced": 1,
        "ci_not_fixed": 0,
    }
    run = state(project, run_id)
    assert [(r["phase"], r["status"]) for r in run["phase_results"]] == [
        (f"phase_{number}", "success") for number in range(7)
    ]
    assert run["changed_files"] == ["calc.py"]
    report = Path(layout.run_dir(project, run_id)) / "ci" / "report.md"
    lines = [
        f"CI log: {NOISY_LOG}",
        f"Log: {NOISY_LOG.stat().st_size} bytes, 26787 lines read, 7 kept; 1 failure(s), 0 left out.",
        "Categories: test 1.",
        "- F1 test (95%): divide multiplies: reproduced locally, fixed",
        f"Proven fixed (red, then green): {FAILING}.",
    ]
    assert report.read_text() == "# fix-ci report\n\n" + "\n".join(lines) + "\n"
    assert all(line in str(stop["message"]) for line in lines)
    kinds = [e["analysis_type"] for e in events(project, run_id, "ANALYSIS_RESULT")]
    assert kinds == ["ci_failure_classification", "ci_reproduction", "ci_report"]
    data = [e["data_type"] for e in events(project, run_id, "DATA_COLLECTED")]
    assert data[:3] == ["ci_source", "ci_log", "test_output"]


def test_a_github_actions_run_is_fetched_reproduced_and_fixed(github: FakeGitHub, checkout: Path) -> None:
    run = failed_run(github, checkout)
    run_id = start(checkout, run=str(run.id), job="test")
    assert agents_of(next_action(checkout, run_id)) == ["ci-analyst"]
    assert record(checkout, run_id, "ci-analyst", analyst())["valid"]
    stop = fix_and_review(checkout, run_id)
    assert (stop["status"], stop["summary"]["errors_fixed"]) == ("success", 1)  # type: ignore[index]
    url = f"https://{GITHUB_HOST}/octo/demo/actions/runs/{run.id}"
    assert f"CI: run {run.id} of 'CI', job 'test', commit {run.head_sha[:12]}: {url}" in str(stop["message"])
    raw = Path(layout.run_dir(checkout, run_id)) / "ci" / "failed.log"
    assert raw.read_text().startswith("test\tRun pytest\t")
    assert (checkout / "calc.py").read_text() == FIXED
