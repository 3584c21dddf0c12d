"""``/fixloop:fix-ci`` end to end: the real pinned Claude Code CLI, the real plugin (forked coordinator,
hooks, engine), the scripted model of tests/e2e/ci_model.py, the backend sample (tests/e2e/samples/backend)
with its real pytest, and for GitHub Actions runs the real ``gh`` against the local GitHub server
(fake_github).

Each scenario checks what every layer left behind: what each agent was handed (the request log), the run
state and its phases, the JSONL log, the engine's CI report, the raw log on disk and the project's files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ci_model import (
    BACKEND,
    CI_ANALYST,
    ESC,
    FAILING,
    IMPLEMENTER,
    PASSING,
    Seen,
    backend_project,
    big_step_log,
    fix_ci_session,
    gitlab_log,
    handed,
    log_failed,
    pytest_run,
)
from claude_runner import git
from fake_github import GITHUB_HOST, FakeGitHub, Job, Step
from fixloop_model import COORDINATOR
from fixloop_session import MakeRunner, RunRecord, Session, StartAPI, reply_text, reply_tool_uses
from pr_model import gh_env
from sample_projects import missing_requirements, read_outcome, run_tests

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.workflows.ci.logfailures import MAX_CHARS

JSON = dict[str, Any]

ALL_PHASES = [f"phase_{n}" for n in range(7)]
PYTEST = "python -m pytest -q"
FIXED_SUMMARY = {
    "errors_fixed": 1,
    "files_changed": 1,
    "review_issues_fixed": 0,
    "user_interactions": 0,
    "ci_failures": 1,
    "ci_reproduced": 1,
    "ci_not_fixed": 0,
}
FAILURE_BLOCK = "\n".join(
    [
        f"F1. {FAILING} (test) in {{where}} at tests/test_cart.py:13",
        "   AssertionError: assert 2500 == 2250",
        "   |     def test_ten_units_get_the_bulk_discount() -> None:",
        '   | >       assert line_total(Line("pen", 250, 10)) == 2250',
        "   | E       AssertionError: assert 2500 == 2250",
        "   | E        +  where 2500 = line_total(Line(sku='pen', unit_price_cents=250, quantity=10))",
        "   | ",
        "   | tests/test_cart.py:13: AssertionError",
    ]
)


@pytest.fixture(autouse=True)
def backend_runs() -> None:
    missing = missing_requirements("backend")
    if missing:
        pytest.skip("the backend sample cannot run its tests: " + "; ".join(missing))


# ------------------------------------------------------------------------------------------------
# What every scenario checks
# ------------------------------------------------------------------------------------------------


def phase_ends(run: RunRecord) -> list[tuple[str, str]]:
    return [(e["phase"], e["status"]) for e in run.of_type("PHASE_END")]


def local_runs(run: RunRecord) -> list[tuple[str, str, str, int]]:
    """The engine's local test runs: (purpose, status, command, exit code)."""
    found = [e["summary"] for e in run.of_type("DATA_COLLECTED", data_type="test_output")]
    return [(s["purpose"], s["status"], s["command"], s["exit_code"]) for s in found]


def check_layers(session: Session, status: str) -> None:
    """The coordinator only called agents and relayed the engine's final message; agents only read and
    edited (every test run is the engine's); the run ended with ``status``, its log framed and closed."""
    run = session.run
    coordinator = session.requests_of(COORDINATOR)
    assert {tuple(t["name"] for t in r["body"]["tools"]) for r in coordinator} == {("Agent",)}
    assert reply_text(coordinator[-1]) == session.result.result_text
    agent_tools = {
        u["name"] for r in session.requests if r["rule"] != COORDINATOR for u in reply_tool_uses(r)
    }
    assert agent_tools <= {"Read", "Edit"}
    assert {r["rule"] for r in session.requests} <= {COORDINATOR, CI_ANALYST, IMPLEMENTER, *REVIEWER_AGENTS}
    assert run.state["status"] == status
    assert run.state["ended_at_ms"] is not None and run.state["open_phases"] == {}
    types = [e["type"] for e in run.events]
    assert (types[0], types[-1]) == ("SESSION_START", "SESSION_END")
    assert run.of_type("SESSION_END")[0]["status"] == status
    starts = [e["phase"] for e in run.of_type("PHASE_START")]
    assert starts == [e["phase"] for e in run.of_type("PHASE_END")] == sorted(starts)


def check_fixed(session: Session, seen: Seen) -> None:
    """F1 reproduced locally (red), the implementer's Edit made it pass (green), reviewed, reported."""
    run, project = session.run, session.project
    assert phase_ends(run) == [(phase, "success") for phase in ALL_PHASES]
    assert session.dispatched()[:2] == [[CI_ANALYST], [IMPLEMENTER]]
    assert local_runs(run) == [
        ("reproduce", "test_failed", f"{PYTEST} {FAILING}", 1),
        ("green", "test_passed", f"{PYTEST} {FAILING}", 0),
    ]
    (reproduced,) = run.of_type("ANALYSIS_RESULT", analysis_type="ci_reproduction")
    assert reproduced["result"] == {"reproduced": ["F1"], "not_reproduced": []}
    # red before the implementer was called, green before its answer was taken
    order = [(e["type"], e.get("agent"), (e.get("summary") or {}).get("purpose")) for e in run.events]
    red = order.index(("DATA_COLLECTED", None, "reproduce"))
    call = order.index(("AGENT_CALL", IMPLEMENTER, None))
    green = order.index(("DATA_COLLECTED", None, "green"))
    assert red < call < green < order.index(("AGENT_RESULT", IMPLEMENTER, None))
    (task,) = seen.implementer_tasks
    assert "The engine reproduced them locally (red)" in task
    assert f"Tests that failed locally: {FAILING}." in task
    # the implementer's Read and Edit changed the one faulty line; the sample's whole suite passes now
    assert (
        git(project, "status", "--porcelain", "--untracked-files=no").split("\n")[0]
        == f" M {BACKEND.fix.file}"
    )
    assert BACKEND.fix.new in (project / BACKEND.fix.file).read_text(encoding="utf-8")
    done = run_tests("backend", project)
    outcome = read_outcome("backend", done.stdout)
    assert (done.returncode, outcome.failed, outcome.passed) == (0, 0, 3), done.stdout
    assert run.state["changed_files"] == [BACKEND.fix.file]
    assert run.of_type("SESSION_END")[0]["summary"] == FIXED_SUMMARY
    (report,) = run.of_type("ANALYSIS_RESULT", analysis_type="ci_report")
    assert report["result"] == {"ci_failures": 1, "ci_reproduced": 1, "ci_not_fixed": 0}
    final = session.result.result_text or ""
    assert final.startswith(f"fixloop ci-job {run.run_id}: success")
    assert f"- F1 test (92%): {FAILING} fails in CI: reproduced locally, fixed" in final
    assert f"Proven fixed (red, then green): {FAILING}." in final
    written = (project / ".claude" / "fixloop" / "runs" / run.run_id / "ci" / "report.md").read_text()
    assert (
        written.startswith("# fix-ci report\n\n") and f"Proven fixed (red, then green): {FAILING}." in written
    )


# ------------------------------------------------------------------------------------------------
# The scenarios
# ------------------------------------------------------------------------------------------------


def test_a_gitlab_log_file_is_reproduced_and_fixed_red_then_green(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path, tmp_path: Path
) -> None:
    """`--log-file` of a GitLab job (timestamps, colours, section markers, pip's progress bars): the engine
    cuts it down to the one failing test, the analyst classifies it, the engine runs it locally (red), the
    implementer fixes the code, the engine runs it again (green), the review finds nothing."""
    project = backend_project(tmp_path / "project")
    log = tmp_path / "gitlab-job.log"
    log.write_text(gitlab_log(noise=2000), encoding="utf-8")
    lines = log.read_bytes().count(b"\n")
    session, seen = fix_ci_session(start_api, make_runner, shared_plugin_data, project, f"--log-file {log}")
    run = session.run
    check_layers(session, "success")
    check_fixed(session, seen)
    (source,) = run.of_type("DATA_COLLECTED", data_type="ci_source")
    assert source["summary"] == {"source": "log_file", "file": str(log), "bytes": log.stat().st_size}
    (collected,) = run.of_type("DATA_COLLECTED", data_type="ci_log")
    assert collected["summary"] == {
        "source": "log_file",
        "file": str(log),
        "bytes": log.stat().st_size,
        "lines": lines,
        "lines_kept": 7,
        "failures": 1,
        "failures_dropped": 0,
    }
    # the analyst read the engine's excerpt of the log, not the log
    (task,) = seen.analyst_tasks
    assert handed(task) == [("F1", FAILING, "test")]
    assert FAILURE_BLOCK.format(where="step_script") in task
    assert f"Whole log: {log} ({log.stat().st_size} bytes, {lines} lines); kept below: 7 lines." in task
    assert ESC not in task and "Downloading package_" not in task and "section_start" not in task
    assert "PASSED" not in task
    assert f"Log: {log.stat().st_size} bytes, {lines} lines read, 7 kept; 1 failure(s), 0 left out." in (
        session.result.result_text or ""
    )


@pytest.mark.usefixtures("gh_bin")
def test_a_github_actions_run_whose_log_is_too_large_to_pass_whole(
    github: FakeGitHub, start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path, tmp_path: Path
) -> None:
    """A failed run of the checkout's HEAD on the local GitHub server: the engine finds it and its job `test`
    with the real gh, downloads the failed step's log (megabytes of pip progress and coloured pytest output)
    into the run's folder, and hands the analyst only its excerpt; then red, fix, green as from a file."""
    project = backend_project(tmp_path / "project")
    git(project, "remote", "add", "origin", github.remote_url())
    head = git(project, "rev-parse", "HEAD").strip()
    failing_step = Step("Run pytest", "failure", log=big_step_log(noise=40_000))
    with github.model.lock:
        run = github.repo.add_run(
            jobs=[
                Job("lint", [Step("Set up job", log="Runner ready"), Step("Ruff", log="All checks passed!")]),
                Job("test", [Step("Set up job", log="Runner ready"), failing_step]),
            ],
            head_branch="main",
            head_sha=head,
        )
    # gh caches a run's logs under TMPDIR by run id: the server's own TMPDIR, so gh downloads them here
    env = gh_env(github, TMPDIR=github.env["TMPDIR"])
    session, seen = fix_ci_session(
        start_api, make_runner, shared_plugin_data, project, f"{run.id} --job test", env=env
    )
    run_record = session.run
    check_layers(session, "success")
    check_fixed(session, seen)
    # gh asked the server for the run, its jobs and its logs, as the server logged
    actions = [
        (r.method, r.path, r.status)
        for r in github.requests
        if "/actions/" in r.path or r.host != GITHUB_HOST
    ]
    base = f"/api/v3/repos/octo/demo/actions/runs/{run.id}"
    assert ("GET", base, 200) in actions
    assert [item for item in actions if item[1].endswith("/logs")] == [("GET", f"{base}/logs", 302)]
    blobs = [item for item in actions if item[1].endswith("logs.zip")]
    assert blobs == [("GET", f"/runs/{github.repo.database_id}/{run.id}/logs.zip", 200)]
    assert all(status < 400 for _method, _path, status in actions)
    assert not run_record.of_type("WARNING", code="CI_SHA_MISMATCH")
    # what gh wrote is the failed step's log, whole, in the run's folder: only the engine read it
    raw = project / ".claude" / "fixloop" / "runs" / run_record.run_id / "ci" / "failed.log"
    saved = raw.read_text(encoding="utf-8").splitlines()
    assert [line.split("\t", 2)[:2] for line in saved] == [["test", "Run pytest"]] * len(saved)
    assert [line.split("\t", 2)[2].split(" ", 1)[1] for line in saved] == failing_step.log.splitlines()
    size = raw.stat().st_size
    assert size > 3_000_000
    (collected,) = run_record.of_type("DATA_COLLECTED", data_type="ci_log")
    assert collected["summary"] == {
        "source": "github",
        "file": str(raw),
        "bytes": size,
        "lines": len(saved),
        "lines_kept": 7,
        "failures": 1,
        "failures_dropped": 0,
    }
    # the analyst's prompt holds the engine's excerpt, not the log
    (task,) = seen.analyst_tasks
    assert handed(task) == [("F1", FAILING, "test")]
    assert FAILURE_BLOCK.format(where="test / Run pytest") in task
    assert f"Whole log: {raw} ({size} bytes, {len(saved)} lines); kept below: 7 lines." in task
    assert ESC not in task and "Downloading package_" not in task and "PASSED" not in task
    for request in session.requests_of(CI_ANALYST):
        body = str(request["body"])
        assert len(body) < MAX_CHARS < size and "Downloading package_" not in body
    url = f"https://{GITHUB_HOST}/octo/demo/actions/runs/{run.id}"
    assert f"GitHub Actions run {run.id} of workflow 'CI' ({url}), job 'test'" in task
    final = session.result.result_text or ""
    assert f"CI: run {run.id} of 'CI', job 'test', commit {head[:12]}: {url}" in final


def test_a_failure_that_does_not_reproduce_locally_changes_nothing(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path, tmp_path: Path
) -> None:
    """The CI log (`gh run view --log-failed` saved to a file) says a test failed that passes here: the
    engine runs exactly that test, records that it passed, and, unattended, takes the question's default
    (stop): the run ends partial, not_reproducible_locally, and nothing is changed."""
    project = backend_project(tmp_path / "project")
    log = tmp_path / "run-log-failed.txt"
    log.write_text(log_failed("test", "Run pytest", pytest_run(PASSING)), encoding="utf-8")
    session, seen = fix_ci_session(start_api, make_runner, shared_plugin_data, project, f"--log-file {log}")
    run = session.run
    check_layers(session, "partial")
    assert run.state["interactive"] is False
    assert phase_ends(run) == [
        ("phase_0", "success"),
        ("phase_1", "success"),
        ("phase_2", "success"),
        ("phase_3", "partial"),
        ("phase_4", "skipped"),
        ("phase_5", "skipped"),
        ("phase_6", "skipped"),
    ]
    assert session.dispatched() == [[CI_ANALYST]]
    (task,) = seen.analyst_tasks
    assert handed(task) == [("F1", PASSING, "test")]
    assert local_runs(run) == [("reproduce", "test_passed", f"{PYTEST} {PASSING}", 0)]
    (reproduced,) = run.of_type("ANALYSIS_RESULT", analysis_type="ci_reproduction")
    assert reproduced["result"] == {"reproduced": [], "not_reproduced": ["F1"]}
    warning = (
        "1 failure(s) did not fail locally (F1: it passes locally); fixloop does not fix what it cannot see "
        "failing."
    )
    assert [(w["code"], w["message"]) for w in run.of_type("WARNING")] == [
        ("NOT_REPRODUCIBLE_LOCALLY", warning)
    ]
    (asked,) = run.of_type("USER_INTERACTION")
    assert (asked["context"], asked["user_response"], asked["default"]) == ("not_reproduced", "stop", True)
    assert asked["options"] == ["write_a_test", "stop"]
    (ended,) = run.of_type("PHASE_END", phase="phase_3")
    assert ended["summary"] == {
        "fixable": ["F1"],
        "not_fixed": [],
        "reproduced": [],
        "not_reproduced": ["F1"],
    }
    end = run.of_type("SESSION_END")[0]
    assert end["summary"]["files_changed"] == 0 and end["summary"]["errors_fixed"] == 0
    assert git(project, "status", "--porcelain", "--untracked-files=no") == ""
    final = session.result.result_text or ""
    assert final.startswith(f"fixloop ci-job {run.run_id}: partial (not_reproducible_locally)\n")
    assert (
        "The failures did not reproduce locally, so nothing was changed: check out the CI's commit, or match "
        "its environment (versions, services, variables), and run fix-ci again." in final
    )
    assert f"Warning NOT_REPRODUCIBLE_LOCALLY: {warning}" in final
