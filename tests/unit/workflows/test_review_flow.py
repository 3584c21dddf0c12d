"""A whole review run on the engine, driven as the coordinator drives it: `next`, `task`, `record`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers_review import all_fixed, reviewer_doc, verifier_doc
from helpers_runs import LIB, FakeClock
from workflows.flow_helpers import (
    CR,
    ENGINE,
    FIXABLE,
    FIXED_APP,
    NOT_FIXABLE,
    REPO,
    agents_of,
    error_of,
    events,
    fields,
    invoke,
    invoke_text,
    issues_in_task,
    log_path,
    next_action,
    prompt,
    record,
    record_valid,
    review_project,
    review_round,
    start,
    state,
    task_file,
)

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.workflows import driver

START_MS = 1_765_000_000_000  # the FakeClock's start, in ms
VERIFIER = "review-verifier"
FIXER = "review-fixer"


def reviewers_action(run_id: str, step: int, number: int) -> dict[str, object]:
    label = f"review round {number}"
    return {
        "action": "agents",
        "run_id": run_id,
        "step": step,
        "label": label,
        "calls": [
            {
                "subagent_type": f"fixloop:{agent}",
                "description": f"Review round {number}",
                "prompt": prompt(run_id, step, label, agent),
            }
            for agent in REVIEWER_AGENTS
        ],
    }


def one_agent_action(run_id: str, step: int, label: str, agent: str, description: str) -> dict[str, object]:
    call = {"subagent_type": f"fixloop:{agent}", "description": description}
    return {
        "action": "agent",
        "run_id": run_id,
        "step": step,
        "label": label,
        "calls": [{**call, "prompt": prompt(run_id, step, label, agent)}],
    }


def test_a_whole_review_run(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project, models={"reviewers": "haiku"})
    run_id = start(git_project)
    assert state(git_project, run_id)["changed_files"] == ["src/app.py"]

    # round 1: the initial verification runs inside `next`, then the six reviewers are called
    fake_clock.advance(1)
    assert next_action(run_id) == reviewers_action(run_id, 1, 1)
    for agent in REVIEWER_AGENTS:
        text = driver.task(git_project, run_id, agent)
        assert task_file(git_project, run_id, agent).read_text(encoding="utf-8") == text
        assert invoke_text("task", run_id, agent) == (0, text)
        assert text.startswith(f"fixloop run {run_id}: review round 1.\nWorking directory: {git_project}\n")
        assert "\n- src/app.py\n" in text
    dispatch = state(git_project, run_id)["flow"]["dispatch"]
    assert (dispatch["id"], dispatch["at_ms"], dispatch["closed"]) == (1, START_MS + 1000, False)
    assert {call["model"] for call in dispatch["calls"]} == {"haiku"}
    code, refused = invoke("task", run_id, FIXER)
    assert error_of(code, refused) == (2, "NO_TASK")
    review_round(run_id, {CR: [FIXABLE, NOT_FIXABLE]})

    # the verifier checks the one fixable finding
    fake_clock.advance(1)
    label = "verify the findings of round 1"
    assert next_action(run_id) == one_agent_action(run_id, 2, label, VERIFIER, "Verify round 1")
    handed = issues_in_task(driver.task(git_project, run_id, VERIFIER))
    assert handed == [
        {
            "id": "FL-001",
            "file": "src/app.py",
            "line": 1,
            "severity": "high",
            "confidence": 90,
            "category": "bug",
            "description": "Prints instead of logging",
            "suggestion": "Fix: Prints instead of logging",
            "auto_fixable": True,
            "agents": [CR],
        }
    ]
    record_valid(run_id, VERIFIER, verifier_doc(90))

    # the fixer gets the same issue, and fixes it
    fake_clock.advance(1)
    assert next_action(run_id) == one_agent_action(run_id, 3, "fix round 1", FIXER, "Fix round 1")
    assert issues_in_task(driver.task(git_project, run_id, FIXER)) == handed
    (git_project / "src" / "app.py").write_text(FIXED_APP)
    record_valid(run_id, FIXER, all_fixed(["FL-001"]))

    # round 2: verification after the fix, then the reviewers again (their tasks rewritten)
    fake_clock.advance(1)
    assert next_action(run_id) == reviewers_action(run_id, 4, 2)
    assert driver.task(git_project, run_id, CR).startswith(f"fixloop run {run_id}: review round 2.\n")
    review_round(run_id, {CR: [NOT_FIXABLE]})

    fake_clock.advance(1)
    stop = next_action(run_id)
    summary = {"errors_fixed": 0, "files_changed": 1, "review_issues_fixed": 1, "user_interactions": 0}
    message = stop.pop("message")
    assert stop == {
        "action": "stop",
        "run_id": run_id,
        "status": "partial",
        "reason": "no_fixable_issues",
        "error": None,
        "summary": summary,
    }
    assert message.splitlines() == [
        f"fixloop review {run_id}: partial (no_fixable_issues)",
        "Files changed: 1; review issues fixed: 1.",
        "Review: 2 round(s), 2 issue(s) found, 1 fixed, 1 remaining.",
        "- FL-002 (high) src/app.py:1: The module has no docstring",
        f'Report: "{ENGINE}" review report {run_id} --format markdown',
        f'Timeline: "{ENGINE}" log timeline {run_id}',
    ]

    run = state(git_project, run_id)
    assert (run["status"], run["ended_at_ms"], run["error_count"]) == ("partial", START_MS + 5000, 0)
    assert run["phases_completed"] == ["phase_0"]
    assert run["flow"]["outcome"] == {"status": "partial", "reason": "no_fixable_issues"}
    assert [
        (item["id"], item["label"], item["round"], item["agents"]) for item in run["flow"]["history"]
    ] == [
        (1, "review round 1", 1, list(REVIEWER_AGENTS)),
        (2, "verify the findings of round 1", 1, [VERIFIER]),
        (3, "fix round 1", 1, [FIXER]),
        (4, "review round 2", 2, list(REVIEWER_AGENTS)),
    ]
    assert [item["at_ms"] for item in run["flow"]["history"]] == [START_MS + 1000 * n for n in (1, 2, 3, 4)]

    logged = events(git_project, run_id)
    assert [event["type"] for event in logged] == [
        "SESSION_START",
        "PHASE_START",
        "REVIEW_VERIFICATION_START",
        "REVIEW_VERIFICATION_END",
        "REVIEW_FIX_ITERATION",
        "REVIEW_FIX_ITERATION",
        "REVIEW_VERIFICATION_START",
        "REVIEW_VERIFICATION_END",
        "REVIEW_COMPLETE",
        "PHASE_END",
        "SESSION_END",
    ]
    assert fields(logged[1]) == {"phase": "phase_0", "phase_name": "Review"}
    review_summary = {
        "total_iterations": 2,
        "initial_issues": 2,
        "final_issues": 1,
        "fixed_issues": 1,
        "termination_reason": "no_fixable_issues",
    }
    assert fields(logged[-2]) == {
        "phase": "phase_0",
        "status": "partial",
        "duration_ms": 4000,
        "summary": review_summary,
    }
    assert fields(logged[-1]) == {
        "status": "partial",
        "total_duration_ms": 5000,
        "phases_completed": ["phase_0"],
        "summary": summary,
    }

    # after the end: the same stop, nothing new in the log; agents and answers are refused
    before = log_path(git_project, run_id).read_bytes()
    fake_clock.advance(1)
    assert next_action(run_id) == {**stop, "message": message}
    code, refused = record(run_id, CR, reviewer_doc(CR))
    assert error_of(code, refused) == (2, "RUN_ALREADY_ENDED")
    code, refused = invoke("answer", run_id, "--default")
    assert error_of(code, refused) == (2, "RUN_ALREADY_ENDED")
    assert log_path(git_project, run_id).read_bytes() == before


def test_the_report_command_of_the_final_message_works(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project)
    run_id = start(git_project)
    next_action(run_id)
    review_round(run_id, {CR: [NOT_FIXABLE]})
    message = next_action(run_id)["message"]
    found = re.search(r'^Report: "(.+?)" (.+)$', message, re.MULTILINE)
    assert found is not None, message
    assert found.group(1) == str(ENGINE)  # the user's shell has no `fixloop` on its PATH
    assert f'\nTimeline: "{ENGINE}" log timeline {run_id}' in message
    code, report = invoke_text(*found.group(2).split())
    assert code == 0, report
    assert report.startswith(f"# fixloop review report — run {run_id}\n\n## Summary\n")  # the document


def test_a_dry_run_reports_and_changes_nothing(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project, use_verifier=False)
    run_id = start(git_project, dry_run=True)
    assert agents_of(next_action(run_id)) == list(REVIEWER_AGENTS)
    review_round(run_id, {CR: [FIXABLE]})

    stop = next_action(run_id)
    assert (stop["action"], stop["status"], stop["reason"], stop["error"]) == (
        "stop",
        "dry_run_complete",
        None,
        None,
    )
    assert stop["message"].splitlines()[:4] == [
        f"fixloop review {run_id}: dry_run_complete",
        "Files changed: 0; review issues fixed: 0.",
        "Review: 1 round(s), 1 issue(s) found, 0 fixed, 1 remaining.",
        "- FL-001 (high) src/app.py:1: Prints instead of logging",
    ]
    run = state(git_project, run_id)
    assert [item["label"] for item in run["flow"]["history"]] == ["review round 1"]  # no fixer
    assert (run["status"], run["phases_completed"]) == ("dry_run_complete", ["phase_0"])
    assert (git_project / "src" / "app.py").read_text() == "print('hello')\n"
    (phase_end,) = events(git_project, run_id, "PHASE_END")
    (session_end,) = events(git_project, run_id, "SESSION_END")
    assert (phase_end["status"], phase_end["summary"]["termination_reason"]) == ("success", None)
    assert session_end["status"] == "dry_run_complete"


def test_the_demo_and_its_report_agree() -> None:
    env = {**os.environ, "PYTHONPATH": str(LIB)}
    for name in ("CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "dev" / "demo_engine.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "engine says: stop (partial, no_fixable_issues)" in lines
    header = lines.index("| Status | Termination | Iterations | Initial issues | Fixed | Remaining |")
    assert lines[header + 2] == "| partial | no_fixable_issues | 2 | 3 | 2 | 1 |"
