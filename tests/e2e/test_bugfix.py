"""``/fixloop:fix-backend``, ``fix-frontend`` and ``fix-e2e`` end to end: the real pinned Claude Code CLI, the
real plugin (forked coordinator, hooks, engine), the scripted model of tests/e2e/bugfix_model.py, and each
stack's sample project (tests/e2e/samples) with its real test runner: pytest, Vitest, Playwright in Chromium.

Each scenario runs the command in a fresh git copy of a sample and checks what every layer left behind: the
request log (the coordinator only relays the engine's steps; the engine, never a model, runs the tests), the
run state, the JSONL and text logs, the project's files, and the sample's own test run afterwards.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from bugfix_model import (
    BUGFIX_AGENTS,
    CASES,
    IMPLEMENTER,
    MIDDLING,
    RED_PROVEN,
    SURE,
    UNSURE,
    BugCase,
    BugfixSession,
    bugfix_session,
    last_feedback,
    tree_files,
)
from claude_runner import REPO_ROOT, git
from fixloop_model import COORDINATOR, parse_next, start_context
from fixloop_session import (
    MakeRunner,
    RunRecord,
    StartAPI,
    duration_mismatches,
    read_run,
    reply_text,
    reply_tool_uses,
    run_ids,
)
from sample_projects import SAMPLE_NAMES, missing_requirements, read_outcome, run_tests

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.store.logtext import render_text

JSON = dict[str, Any]

ALL_PHASES = [f"phase_{n}" for n in range(6)]
THRESHOLDS = {"auto_continue": 60, "ask_user": 40, "stop": 0}
FRONTEND_CONFIG = {"detect_commands": False}  # see config_for()
HOSTILE = (
    "fails with `KeyError` when price is $0 and \"name\" is 'x' $(touch pwned) `touch pwned2`\n"
    "the total: prix élevé"
)


@pytest.fixture(params=SAMPLE_NAMES)
def case(request: pytest.FixtureRequest) -> BugCase:
    return needs(str(request.param))


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


def needs(name: str) -> BugCase:
    """The case of sample ``name``; its runner missing: skipped on a developer machine, failed in CI."""
    missing = missing_requirements(name)
    if missing:
        message = f"sample {name} cannot run its tests: " + "; ".join(missing)
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    return CASES[name]


def config_for(case: BugCase, **extra: Any) -> dict[str, Any]:
    """The frontend sample has a tsconfig.json but no TypeScript installed: left to detection, the review's
    verification would run `tsc` and fail. Only its test command is verified."""
    return {**(FRONTEND_CONFIG if case.sample == "frontend" else {}), **extra}


def factor_score(factors: dict[str, int], reproducibility: int = 100) -> int:
    """The engine's confidence: the mean of the three reported factors and the measured reproducibility,
    rounded half up (fixloop.workflows.bugfix.confidence)."""
    total = sum(factors.values()) + reproducibility
    return (total * 2 + 4) // 8


# ------------------------------------------------------------------------------------------------
# What every scenario checks
# ------------------------------------------------------------------------------------------------


def check_layers(session: BugfixSession, run: RunRecord, *, status: str) -> None:
    """The coordinator only relayed the engine's steps; the logs agree; the run ended with ``status``."""
    coordinator = session.requests_of(COORDINATOR)
    assert {r["rule"] for r in session.requests} <= {COORDINATOR, *BUGFIX_AGENTS, *REVIEWER_AGENTS}
    # The coordinator can only call agents: it never ran a test (or anything else) itself.
    assert {tuple(t["name"] for t in r["body"]["tools"]) for r in coordinator} == {("Agent",)}
    uses = [u for r in coordinator for u in reply_tool_uses(r)]
    assert uses and {u["name"] for u in uses} == {"Agent"}
    assert all(u["input"]["run_in_background"] is False for u in uses)
    # Nor did any agent: the bugfix agents only read and edit; every test run is the engine's.
    agent_tools = {
        u["name"] for r in session.requests if r["rule"] != COORDINATOR for u in reply_tool_uses(r)
    }
    assert agent_tools <= {"Read", "Edit", "Write"}
    # The final message is the one the engine gives for the run, verbatim, and the command's result.
    code, text = session.engine_text("next", run.run_id, "--text")
    ended = parse_next(text.strip())
    assert code == 0 and ended is not None and ended.final is not None, text
    assert reply_text(coordinator[-1]) == ended.final == session.result.result_text
    # The run state: ended, no phase open.
    state = run.state
    assert state["status"] == status
    assert state["ended_at_ms"] is not None and state["open_phases"] == {}
    # The JSONL log is framed by SESSION_START / SESSION_END; the .log renders the same events.
    types = [e["type"] for e in run.events]
    assert (types[0], types[-1]) == ("SESSION_START", "SESSION_END")
    assert run.of_type("SESSION_END")[0]["status"] == status
    assert run.text_log.splitlines() == [render_text(event) for event in run.events]
    assert duration_mismatches(run.events) == []
    # Every phase that started ended, in order.
    starts = [e["phase"] for e in run.of_type("PHASE_START")]
    assert starts == [e["phase"] for e in run.of_type("PHASE_END")] == sorted(starts)
    # Every hook finished cleanly; every agent call has its result.
    hooks = session.result.hook_responses()
    assert hooks and {(h.get("exit_code"), h.get("outcome")) for h in hooks} == {(0, "success")}, hooks
    results = {e["tool_use_id"] for e in run.of_type("AGENT_RESULT")}
    assert [e["agent"] for e in run.of_type("AGENT_CALL") if e["tool_use_id"] not in results] == []
    assert run.of_type("WARNING", code="HOOK_FAILED") == []


def layout_dir(session: BugfixSession, run_id: str) -> Path:
    return session.project / ".claude" / "fixloop" / "runs" / run_id


def phase_ends(run: RunRecord) -> list[tuple[str, str]]:
    return [(e["phase"], e["status"]) for e in run.of_type("PHASE_END")]


def tool_uses(run: RunRecord) -> list[tuple[str, str | None, str]]:
    """The engine's TOOL_USE events: (tool, purpose of a test run, status)."""
    return [(e["tool"], e.get("purpose"), e["status"]) for e in run.of_type("TOOL_USE")]


def check_confidence(run: RunRecord, factors: dict[str, int], decision: str) -> None:
    (event,) = run.of_type("CONFIDENCE_DECISION")
    assert event["phase"] == "phase_1"
    assert event["confidence_score"] == factor_score(factors)
    assert event["decision"] == decision
    assert event["threshold"] == THRESHOLDS
    assert event["factors"] == {**factors, "reproducibility": 100}
    assert (event["measured"], event["reported"]) == (["reproducibility"], factors)


def check_collected(case: BugCase, run: RunRecord) -> None:
    """Phase 0: the engine ran the sample's test command and parsed its one failure."""
    collected = run.state["flow"]["phases"]["0"]["data"]
    assert (
        collected["test_run"]["command"]
        == json.loads((case.info.source / ".claude" / "fixloop.json").read_text(encoding="utf-8"))[
            "test_command"
        ]
    )
    assert collected["test_run"]["exit_code"] not in (0, None)
    assert [f["test_id"] for f in collected["failures"]] == [case.info.failing_test]
    assert collected["reproduced"] is True
    (analysis,) = run.of_type("ANALYSIS_RESULT")
    assert analysis["analysis_type"] == "failure_classification"
    assert analysis["result"] == {
        "errors_found": 1,
        "categories": {case.category: 1},
        "files_affected": [case.info.fix.file],
    }
    steps = [(e["type"], e["step"]) for e in run.events if e["type"] in ("STEP_START", "STEP_END")]
    assert steps[:2] == [("STEP_START", "tests_collect"), ("STEP_END", "tests_collect")]


def check_fixed(case: BugCase, session: BugfixSession, run: RunRecord, *, test_text: str) -> None:
    """Phase 4: red then green, proven by the engine's runs; the files are fixed; the suite passes."""
    project = session.project
    data = run.state["flow"]["phases"]["4"]["data"]
    label = f"{case.test_file}::{case.test_name}"
    assert data["red"]["test"] == {"file": case.test_file, "name": case.test_name, "line": None}
    assert data["red"]["run"]["exit_code"] not in (0, None)
    assert data["green"]["run"]["exit_code"] == 0
    assert data["green"]["tests"] == [label, case.info.failing_test]
    assert (data["errors_fixed"], data["files_changed"]) == (1, sorted([case.info.fix.file, case.test_file]))
    # Each proof is the engine's own run of the configured command, its whole output kept in the run.
    for proof in ("red", "green"):
        output = project / data[proof]["run"]["output_file"]
        assert output.is_file() and output.stat().st_size > 0
    assert read_outcome(case.sample, (project / data["red"]["run"]["output_file"]).read_text()).failed == 1
    # The implementer was told red was proven, with its test named.
    implementer = session.requests_of(IMPLEMENTER)
    feedback = last_feedback(implementer[-1]["body"]) or ""
    assert f"{RED_PROVEN} {label} fails before the fix" in feedback
    # On disk: the one-line fix, the new test, the fix plan; nothing else.
    source = (project / case.info.fix.file).read_text(encoding="utf-8")
    assert case.info.fix.new in source and case.info.fix.old not in source
    assert (project / case.test_file).read_text(encoding="utf-8") == test_text
    after = tree_files(project)
    changed = sorted(
        path for path in set(after) | set(session.before) if after.get(path) != session.before.get(path)
    )
    plan = run.state["flow"]["phases"]["3"]["data"]["document"]
    assert re.fullmatch(rf"docs/bugfix/\d{{4}}-\d{{2}}-\d{{2}}-{run.run_id}\.md", plan)
    assert changed == sorted([case.info.fix.file, case.test_file, plan])
    text = (project / plan).read_text(encoding="utf-8")
    assert f"Location: `{case.info.fix.file}:{case.root_line}`" in text and f"`{label}`" in text
    # The sample's own suite, run by the test: everything passes now.
    done = run_tests(case.sample, project)
    outcome = read_outcome(case.sample, done.stdout)
    assert (done.returncode, outcome.failed, outcome.passed) == (0, 0, case.info.passing + 2), done.stdout


# ------------------------------------------------------------------------------------------------
# Scenarios
# ------------------------------------------------------------------------------------------------


def test_happy_path_proves_red_then_green(
    case: BugCase, start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    """The whole run: the engine runs the tests, the agents diagnose and design, the implementer writes a
    test that the engine sees fail, fixes the code, the engine sees it pass, the review finds nothing."""
    session = bugfix_session(start_api, make_runner, shared_plugin_data, case, config=config_for(case))
    run = session.run
    check_layers(session, run, status="success")
    assert run.state["phases_completed"] == ALL_PHASES
    assert phase_ends(run) == [(phase, "success") for phase in ALL_PHASES]
    assert session.dispatched() == [
        ["failure-analyst"],
        ["root-cause-analyst"],
        ["fix-designer"],
        ["implementer"],
        list(REVIEWER_AGENTS),
    ]
    check_collected(case, run)
    check_confidence(run, SURE, "auto_continue")
    check_fixed(case, session, run, test_text=case.red_test)
    # The engine's steps and tools, in order: run the tests, write the plan, red, green, verification.
    steps = [e["step"] for e in run.of_type("STEP_START")]
    assert steps == ["tests_collect", "tests_red", "tests_green"]
    assert [e["status"] for e in run.of_type("STEP_END")] == ["success"] * 3
    assert tool_uses(run) == [
        ("Bash", "collect", "test_failed"),
        ("Write", None, "success"),
        ("Bash", "red", "test_failed"),
        ("Bash", "green", "test_passed"),
    ]
    for kind in ("STEP_START", "STEP_END", "TOOL_USE", "ANALYSIS_RESULT", "CONFIDENCE_DECISION"):
        assert f"| {kind} |" in run.text_log
    (end,) = run.of_type("SESSION_END")
    assert end["phases_completed"] == ALL_PHASES
    assert end["summary"] == {
        "errors_fixed": 1,
        "files_changed": 2,
        "review_issues_fixed": 0,
        "user_interactions": 0,
    }
    assert (session.result.result_text or "").startswith(f"fixloop bugfix {run.run_id}: success")


def test_dry_run_then_phases_3_and_4_with_a_refused_test(
    case: BugCase, start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    """A dry run diagnoses and designs, changes no file and says what it would do. ``--phase=3,4`` then
    takes phases 0-2 from it: the plan is written, and the implementer's first test, which passes before
    the fix, is refused (TEST_PASSES_BEFORE_FIX) until it fails; then the fix, proven green."""
    session = bugfix_session(
        start_api,
        make_runner,
        shared_plugin_data,
        case,
        arguments="--dry-run",
        passes_first=True,
        config=config_for(case),
    )
    dry = session.run
    check_layers(session, dry, status="dry_run_complete")
    assert dry.state["dry_run"] is True
    assert phase_ends(dry) == [
        ("phase_0", "success"),
        ("phase_1", "success"),
        ("phase_2", "success"),
        ("phase_3", "skipped"),
        ("phase_4", "skipped"),
        ("phase_5", "skipped"),
    ]
    assert [e["summary"] for e in dry.of_type("PHASE_END")[3:]] == [{"reason": "dry_run"}] * 3
    assert dry.state["phases_completed"] == ALL_PHASES[:3]
    assert session.dispatched() == [["failure-analyst"], ["root-cause-analyst"], ["fix-designer"]]
    assert tree_files(session.project) == session.before
    assert git(session.project, "status", "--porcelain") == ""
    assert dry.of_type("SESSION_END")[0]["summary"]["files_changed"] == 0
    report = session.result.result_text or ""
    assert report.startswith(f"fixloop bugfix {dry.run_id}: dry_run_complete\n")
    assert "Dry run: nothing was changed; the fix plan was not written to docs/bugfix/" in report
    assert f"- Root cause at {case.info.fix.file}:{case.root_line} (confidence 90)" in report
    assert f"- Would prove it with the test {case.test_file}::{case.test_name}" in report

    session.follow_up(f"/fixloop:{case.command} --phase=3,4")
    (later,) = [read_run(session.project, rid) for rid in run_ids(session.project) if rid != dry.run_id]
    check_layers(session, later, status="success")
    assert later.state["phases"] == [3, 4]
    assert later.state["phases_completed"] == ["phase_3", "phase_4"]
    assert phase_ends(later) == [("phase_3", "success"), ("phase_4", "success")]
    # Phases 0-2 are not run again: their data comes from the dry run, and the log says so.
    resumed = [e["summary"] for e in later.of_type("DATA_COLLECTED", data_type="resumed_phase")]
    assert sorted(item["phase"] for item in resumed) == ALL_PHASES[:3]
    assert {item["run_id"] for item in resumed} == {dry.run_id}
    assert session.dispatched()[3:] == [["implementer"]]
    # The refused test: the engine ran it, saw it pass, and sent the implementer back with the reason.
    assert [(e["tool"], e.get("purpose"), e["status"]) for e in later.of_type("TOOL_USE")] == [
        ("Write", None, "success"),
        ("Bash", "red", "test_passed"),
        ("Bash", "red", "test_failed"),
        ("Bash", "green", "test_passed"),
    ]
    attempts = session.requests_of(IMPLEMENTER)
    refusals = {last_feedback(r["body"]) for r in attempts} - {None}
    refused = [text for text in refusals if text and "TEST_PASSES_BEFORE_FIX" in text]
    assert len(refused) == 1
    assert f"The test {case.test_file}::{case.test_name} passes before the fix" in refused[0]
    record = later.state["flow"]["records"][IMPLEMENTER]
    assert record["invalid_attempts"] == 1
    check_fixed(case, session, later, test_text=case.red_test)
    (end,) = later.of_type("SESSION_END")
    assert end["summary"] == {
        "errors_fixed": 1,
        "files_changed": 2,
        "review_issues_fixed": 0,
        "user_interactions": 0,
    }


def test_low_confidence_stops_before_any_change(
    case: BugCase, start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    """Scores that put the engine's confidence below 40: decision stop, the run fails with
    CONFIDENCE_TOO_LOW after phase 1, nothing is designed or changed."""
    session = bugfix_session(
        start_api, make_runner, shared_plugin_data, case, factors=UNSURE, config=config_for(case)
    )
    run = session.run
    check_layers(session, run, status="failed")
    check_confidence(run, UNSURE, "stop")
    assert phase_ends(run) == [("phase_0", "success"), ("phase_1", "failed")]
    assert run.state["phases_completed"] == ["phase_0"]
    (error,) = run.of_type("ERROR")
    assert (error["phase"], error["code"], error["confidence_score"]) == ("phase_1", "CONFIDENCE_TOO_LOW", 35)
    assert session.dispatched() == [["failure-analyst"], ["root-cause-analyst"]]
    assert tree_files(session.project) == session.before
    assert run.of_type("SESSION_END")[0]["summary"]["files_changed"] == 0
    assert (session.result.result_text or "").startswith(
        f"fixloop bugfix {run.run_id}: failed (CONFIDENCE_TOO_LOW)\nError CONFIDENCE_TOO_LOW: "
    )


def test_ask_user_unattended_takes_the_default(
    case: BugCase, start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    """``claude -p`` runs unattended (CLAUDE_CODE_SESSION_ATTENDED=0): a confidence of 40 calls for the user,
    and the engine takes the question's default, `stop` (logged as a default answer), without asking."""
    session = bugfix_session(
        start_api, make_runner, shared_plugin_data, case, factors=MIDDLING, config=config_for(case)
    )
    run = session.run
    check_layers(session, run, status="failed")
    assert run.state["interactive"] is False
    check_confidence(run, MIDDLING, "ask_user")
    (asked,) = run.of_type("USER_INTERACTION")
    assert (asked["context"], asked["user_response"], asked["default"]) == ("low_confidence", "stop", True)
    (error,) = run.of_type("ERROR")
    assert error["code"] == "CONFIDENCE_TOO_LOW" and "default answer is stop" in error["message"]
    assert phase_ends(run) == [("phase_0", "success"), ("phase_1", "failed")]
    assert run.of_type("SESSION_END")[0]["summary"]["user_interactions"] == 0
    assert tree_files(session.project) == session.before


def test_ask_user_attended_is_answered_with_the_answer_command(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    """With ``questions: ask`` the run asks: the command ends with the engine's question, the run waits;
    ``/fixloop:answer RUN continue`` typed in the same conversation (``--resume``) answers it and the run
    goes on to a proven fix."""
    case = needs("backend")
    session = bugfix_session(
        start_api, make_runner, shared_plugin_data, case, factors=MIDDLING, config={"questions": "ask"}
    )
    waiting = session.run
    assert (waiting.state["status"], waiting.state["ended_at_ms"]) == ("running", None)
    question = waiting.state["flow"]["question"]
    assert (question["context"], question["default"]) == ("low_confidence", "stop")
    code, action = session.engine("next", waiting.run_id)
    assert code == 0 and action["action"] == "ask_user"
    assert action["answer"] == f"/fixloop:answer {waiting.run_id} LABEL"
    # The command's result is the question, exactly as the engine words it; the coordinator relayed it.
    question_text = session.result.result_text or ""
    assert question_text.startswith(f"fixloop needs your decision (run {waiting.run_id}): ")
    assert "- stop (default): " in question_text
    assert question_text.endswith(f"Answer with: /fixloop:answer {waiting.run_id} <label>")
    assert reply_text(session.requests_of(COORDINATOR)[-1]) == question_text
    check_confidence(waiting, MIDDLING, "ask_user")
    assert tree_files(session.project) == session.before

    session.follow_up(f"/fixloop:answer {waiting.run_id} continue", resume=True)
    run = session.run
    check_layers(session, run, status="success")
    asked, answered = run.of_type("USER_INTERACTION")
    assert "user_response" not in asked
    assert (answered["user_response"], answered["default"]) == ("continue", False)
    assert run.of_type("PHASE_END")[1]["summary"] == {
        "confidence_score": 40,
        "decision": "ask_user",
        "user_decision": "continue",
    }
    assert phase_ends(run) == [(phase, "success") for phase in ALL_PHASES]
    assert run.of_type("SESSION_END")[0]["summary"]["user_interactions"] == 1
    check_fixed(case, session, run, test_text=case.red_test)


def test_hostile_arguments_reach_the_engine_intact(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    """Backticks, `$0`, `$(...)`, quotes, a new line, non-ASCII and 10 KB of pasted stack trace: no shell
    ever sees them, and the run holds them exactly."""
    case = needs("backend")
    trace = "".join(
        f'  File "pricing/cart.py", line {n}, in line_total\n    $x = `y` "z"\n' for n in range(160)
    )
    text = f"{HOSTILE}\n{trace}KeyError: 'pen'"
    assert len(text.encode("utf-8")) > 10_000
    session = bugfix_session(start_api, make_runner, shared_plugin_data, case, arguments=f"--dry-run {text}")
    run = session.run
    check_layers(session, run, status="dry_run_complete")
    assert run.state["free_text"] == text
    (start,) = run.of_type("SESSION_START")
    assert start["command"] == f"/fixloop:{case.command} --dry-run {text}"
    assert run.state["flow"]["phases"]["0"]["data"]["description"] == text
    # The agents are handed the words exactly: the failure analyst's task holds them. Over Claude Code's
    # limit for a hook's context (10,000 characters), the context names the task's file to read whole (the
    # file itself, or a copy whose long lines are split), and ends with the task's own contract.
    task = (layout_dir(session, run.run_id) / "tasks" / "failure-analyst.md").read_text(encoding="utf-8")
    assert text in task
    (first,) = session.requests_of("failure-analyst")
    context = (start_context(first["body"]) or "").split("\n\n# Environment\n", 1)[0]
    assert len(context) <= 10_000 and not context.startswith("<persisted-output>"), context[:300]
    named = re.search(r"READ THE WHOLE TASK FIRST: (\S+) \(", context)
    assert named is not None, context[:300]
    readable = Path(named[1]).read_text(encoding="utf-8")
    assert readable.replace(" ↩\n", "") == task
    assert context.endswith(task.rstrip()[-200:])
    # Nothing ran them: no file appeared where the command ran, nor in the plugin's directory.
    for place in (session.project, session.runner.work_dir):
        assert not list(place.rglob("pwned*")), place
    assert not list(REPO_ROOT.glob("pwned*"))
    assert tree_files(session.project) == session.before
