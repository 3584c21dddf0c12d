"""`fixloop next` and `fixloop answer` on review runs: dispatches re-issued until called, questions and their
answers, and errors inside a step, counted until the third ends the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers_review import reviewer_doc
from helpers_runs import FakeClock
from workflows.flow_helpers import (
    CHECK_FAILS,
    CR,
    FIXABLE,
    agents_of,
    error_of,
    events,
    fields,
    invoke,
    invoke_text,
    log_path,
    next_action,
    record,
    record_valid,
    review_project,
    review_round,
    run_files,
    start,
    state,
    task_file,
)

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.core.errors import FixloopError
from fixloop.store import layout, ledger
from fixloop.workflows.actions import render
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome
from fixloop.workflows.review_phase import ReviewPhase

START_MS = 1_765_000_000_000
GATE_QUESTION = (
    "Verification failed before the review: tests failed (exit code 3). How should the review go on?"
)
GATE_OPTIONS = [
    {
        "label": "continue",
        "description": "Review anyway, knowing the project does not verify cleanly (risky)",
    },
    {"label": "manual", "description": "Stop the review and keep everything as it is, to handle it by hand"},
    {"label": "cancel", "description": "Cancel the review"},
]
LABELS = ["continue", "manual", "cancel"]
NO_RUN_SUMMARY = {"errors_fixed": 0, "files_changed": 0, "review_issues_fixed": 0, "user_interactions": 0}


# ---- a dispatch inside Claude Code ---------------------------------------------------------------------


def hook_lines(run_dir: Path, agent: str, index: int, ts_ms: int, message: str) -> None:
    """The ledger lines the plugin's hooks write for one call of `agent` that ends with `message`."""
    common = {"agent_type": f"fixloop:{agent}", "agent": agent}
    ledger.append(
        run_dir,
        {"kind": "call", "ts_ms": ts_ms, **common, "tool_use_id": f"toolu_{index}", "parent_agent_id": None},
    )
    ledger.append(
        run_dir,
        {
            "kind": "stop",
            "ts_ms": ts_ms + 1,
            **common,
            "agent_id": f"agent-{index}",
            "message_sha256": ledger.message_sha256(message),
            "stop_hook_active": False,
            "attempt": 1,
        },
    )


def test_a_dispatch_is_reissued_until_its_agents_are_called(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project, use_verifier=False)
    run_id = start(git_project, session="session-1")
    issued = next_action(run_id)
    assert (issued["action"], issued["step"], agents_of(issued)) == ("agents", 1, list(REVIEWER_AGENTS))
    run_dir = Path(layout.run_dir(git_project, run_id))
    at_ms = state(git_project, run_id)["flow"]["dispatch"]["at_ms"]
    # a call from before the dispatch is no call of it
    ledger.append(run_dir, {"kind": "call", "ts_ms": at_ms - 1, "agent_type": f"fixloop:{CR}", "agent": CR})
    log = log_path(git_project, run_id).read_bytes()
    tasks = {agent: task_file(git_project, run_id, agent).read_bytes() for agent in REVIEWER_AGENTS}

    fake_clock.advance(1)
    assert next_action(run_id) == issued
    assert invoke_text("next", run_id, "--text") == (0, render(issued) + "\n")
    flow = state(git_project, run_id)["flow"]
    assert (flow["dispatches"], flow["dispatch"]["id"], flow["dispatch"]["closed"]) == (1, 1, False)
    assert log_path(git_project, run_id).read_bytes() == log
    assert {agent: task_file(git_project, run_id, agent).read_bytes() for agent in REVIEWER_AGENTS} == tasks

    # inside Claude Code only what a called agent said is recorded
    text = json.dumps(reviewer_doc(CR, [FIXABLE]))
    assert error_of(*record(run_id, CR, text)) == (2, "UNVERIFIED_AGENT_RESULT")

    for index, agent in enumerate(REVIEWER_AGENTS):
        text = json.dumps(reviewer_doc(agent, [FIXABLE] if agent == CR else []))
        hook_lines(run_dir, agent, index, at_ms + 1000, text)
        code, answer = record(run_id, agent, text)
        assert (code, answer["valid"]) == (0, True), answer
    fake_clock.advance(1)
    fix = next_action(run_id)
    assert (fix["action"], fix["step"], fix["label"], agents_of(fix)) == (
        "agent",
        2,
        "fix round 1",
        ["review-fixer"],
    )
    run = state(git_project, run_id)
    assert [(item["id"], item["at_ms"]) for item in run["flow"]["history"]] == [(1, at_ms), (2, at_ms + 2000)]
    records = run["review"]["rounds"][0]["records"]
    assert {records[agent]["provenance"] for agent in REVIEWER_AGENTS} == {"ledger"}


# ---- questions -------------------------------------------------------------------------------------------


def gate_action(run_id: str) -> dict[str, Any]:
    return {
        "action": "ask_user",
        "run_id": run_id,
        "context": "initial_verification_failed",
        "question": GATE_QUESTION,
        "options": GATE_OPTIONS,
        "default": "manual",
        "answer": f"/fixloop:answer {run_id} LABEL",
    }


def test_a_run_that_asks_waits_for_a_valid_answer(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project, test_command=CHECK_FAILS, questions="ask")
    run_id = start(git_project)  # not interactive, but the config says: ask
    fake_clock.advance(1)
    assert next_action(run_id) == gate_action(run_id)
    log = log_path(git_project, run_id).read_bytes()
    fake_clock.advance(1)
    assert next_action(run_id) == gate_action(run_id)  # asked again, not logged again
    assert log_path(git_project, run_id).read_bytes() == log
    assert events(git_project, run_id)[-1]["type"] == "USER_INTERACTION"

    before = run_files(git_project, run_id)

    code, refused = invoke("answer", run_id, "bogus")
    assert (code, refused["error"]) == (
        2,
        {
            "code": "INVALID_CHOICE",
            "message": "Invalid choice 'bogus' for this question.",
            "valid_values": LABELS,
            "received": "bogus",
        },
    )
    code, refused = invoke("answer", run_id, "continue", "--default")
    assert (code, refused["error"]["code"], refused["error"]["message"]) == (
        2,
        "INVALID_CHOICE",
        "--default chooses 'manual' here, not 'continue'.",
    )
    code, refused = invoke("answer", run_id)
    assert (code, refused["error"]["code"], refused["error"]["valid_values"]) == (2, "MISSING_CHOICE", LABELS)
    assert run_files(git_project, run_id) == before

    fake_clock.advance(1)
    code, answered = invoke("answer", run_id, "continue")
    assert (code, answered) == (
        0,
        {
            "status": "answered",
            "run_id": run_id,
            "choice": "continue",
            "default": False,
            "context": "initial_verification_failed",
            "restored_files": [],
        },
    )
    code, refused = invoke("answer", run_id, "continue")
    assert (code, refused["error"]) == (
        2,
        {"code": "NO_PENDING_QUESTION", "message": "The run is not waiting for an answer."},
    )
    asked, chosen = events(git_project, run_id, "USER_INTERACTION")
    assert fields(asked) == {
        "context": "initial_verification_failed",
        "question": GATE_QUESTION,
        "iteration": 0,
    }
    assert fields(chosen) == {
        "context": "initial_verification_failed",
        "user_response": "continue",
        "wait_duration_ms": 2000,
        "default": False,
        "iteration": 0,
    }
    assert state(git_project, run_id)["flow"]["interactions"] == [
        {
            "phase": "phase_0",
            "context": "initial_verification_failed",
            "question": GATE_QUESTION,
            "options": LABELS,
            "user_response": "continue",
            "default": False,
            "wait_duration_ms": 2000,
        }
    ]
    assert agents_of(next_action(run_id)) == list(REVIEWER_AGENTS)


def test_default_takes_the_questions_default(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project, test_command=CHECK_FAILS)
    run_id = start(git_project, interactive=True)
    assert next_action(run_id) == gate_action(run_id)
    code, answered = invoke("answer", run_id, "--default")
    assert (code, answered["choice"], answered["default"]) == (0, "manual", True)
    stop = next_action(run_id)
    assert (stop["action"], stop["status"], stop["reason"]) == ("stop", "partial", "verification_failed")


@pytest.mark.parametrize(("questions", "interactive"), [("auto", False), ("default", True)])
def test_a_run_no_one_answers_takes_the_default_itself(
    git_project: Path, fake_clock: FakeClock, questions: str, interactive: bool
) -> None:
    review_project(git_project, test_command=CHECK_FAILS, questions=questions)
    run_id = start(git_project, interactive=interactive)
    stop = next_action(run_id)
    assert (stop["action"], stop["status"], stop["reason"]) == ("stop", "partial", "verification_failed")
    asked, chosen = events(git_project, run_id, "USER_INTERACTION")
    assert (asked["question"], chosen["user_response"], chosen["default"]) == (GATE_QUESTION, "manual", True)
    (interaction,) = state(git_project, run_id)["flow"]["interactions"]
    assert (interaction["user_response"], interaction["default"]) == ("manual", True)


def test_one_answer_is_one_user_interaction(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project, test_command=CHECK_FAILS, questions="ask")
    run_id = start(git_project)
    next_action(run_id)
    invoke("answer", run_id, "continue")
    next_action(run_id)
    review_round(run_id, {})
    stop = next_action(run_id)
    assert (stop["status"], stop["reason"]) == ("success", "no_fixable_issues")
    assert stop["summary"]["user_interactions"] == 1


def test_no_question_no_answer(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project)
    run_id = start(git_project)
    next_action(run_id)
    before = run_files(git_project, run_id)
    assert error_of(*invoke("answer", run_id, "--default")) == (2, "NO_PENDING_QUESTION")
    assert run_files(git_project, run_id) == before


# ---- errors ----------------------------------------------------------------------------------------------


def faulty_step(monkeypatch: pytest.MonkeyPatch, fault: Exception, times: int) -> list[int]:
    """Make the review phase's step raise `fault` its first `times` calls; the calls, counted."""
    calls: list[int] = []
    real_step = ReviewPhase.step

    def step(self: ReviewPhase, ctx: PhaseContext) -> Outcome:
        calls.append(len(calls) + 1)
        if len(calls) <= times:
            raise fault
        return real_step(self, ctx)

    monkeypatch.setattr(ReviewPhase, "step", step)
    return calls


@pytest.mark.parametrize(
    ("fault", "code", "message"),
    [
        (RuntimeError("boom"), "INTERNAL_ERROR", "RuntimeError: boom"),
        (FixloopError("SNAPSHOT_FAILED", "No room left."), "SNAPSHOT_FAILED", "No room left."),
    ],
)
def test_a_fault_in_a_step_is_counted_and_the_run_goes_on(
    git_project: Path,
    fake_clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    fault: Exception,
    code: str,
    message: str,
) -> None:
    review_project(git_project)
    run_id = start(git_project)
    calls = faulty_step(monkeypatch, fault, times=1)
    assert agents_of(next_action(run_id)) == list(REVIEWER_AGENTS)
    assert len(calls) == 3  # the fault, the initial verification, the dispatch
    run = state(git_project, run_id)
    assert run["error_count"] == 1
    assert [(item["action"], item["message"]) for item in run["errors"]] == [("next", message)]
    logged = events(git_project, run_id)
    assert [event["type"] for event in logged[:3]] == ["SESSION_START", "ERROR", "PHASE_START"]
    assert (logged[1]["level"], fields(logged[1])) == ("E", {"code": code, "message": message})


def test_the_third_error_ends_the_run_failed(
    git_project: Path, fake_clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    review_project(git_project)
    run_id = start(git_project)
    fake_clock.advance(1)
    next_action(run_id)
    review_round(run_id, {})
    calls = faulty_step(monkeypatch, RuntimeError("boom"), times=99)
    fake_clock.advance(2)
    stop = next_action(run_id)
    error = {"code": "TOO_MANY_ERRORS", "message": "The run met 3 errors and stops."}
    message = stop.pop("message")
    assert stop == {
        "action": "stop",
        "run_id": run_id,
        "status": "failed",
        "reason": "TOO_MANY_ERRORS",
        "error": error,
        "summary": NO_RUN_SUMMARY,
    }
    assert message.splitlines()[:2] == [
        f"fixloop review {run_id}: failed (TOO_MANY_ERRORS)",
        "Error TOO_MANY_ERRORS: The run met 3 errors and stops.",
    ]
    assert len(calls) == 3
    run = state(git_project, run_id)
    assert (run["status"], run["error_count"], run["phases_completed"]) == ("failed", 3, [])
    assert [item["message"] for item in run["errors"]] == ["RuntimeError: boom"] * 3 + [error["message"]]
    assert [(item["phase"], item["status"]) for item in run["phase_results"]] == [("phase_0", "failed")]
    tail = [(event["type"], fields(event)) for event in events(git_project, run_id)[-6:]]
    assert tail == [
        ("ERROR", {"code": "INTERNAL_ERROR", "message": "RuntimeError: boom"}),
        ("ERROR", {"code": "INTERNAL_ERROR", "message": "RuntimeError: boom"}),
        ("ERROR", {"code": "INTERNAL_ERROR", "message": "RuntimeError: boom"}),
        ("ERROR", error),
        ("PHASE_END", {"phase": "phase_0", "status": "failed", "duration_ms": 2000}),
        (
            "SESSION_END",
            {
                "status": "failed",
                "total_duration_ms": 3000,
                "phases_completed": [],
                "summary": NO_RUN_SUMMARY,
            },
        ),
    ]

    log = log_path(git_project, run_id).read_bytes()
    assert next_action(run_id) == {**stop, "message": message}
    assert len(calls) == 3
    assert log_path(git_project, run_id).read_bytes() == log


def test_a_failed_review_fails_the_phase_and_the_run(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project)
    run_id = start(git_project)
    next_action(run_id)
    for agent in REVIEWER_AGENTS[:3]:  # three reviewers answer; four are required
        record_valid(run_id, agent, reviewer_doc(agent))
    stop = next_action(run_id)
    coverage = "Only 3/6 review agents succeeded (at least 4 required)"
    assert (stop["status"], stop["reason"], stop["error"]) == (
        "failed",
        "INSUFFICIENT_COVERAGE",
        {"code": "INSUFFICIENT_COVERAGE", "message": coverage},
    )
    (phase_end,) = events(git_project, run_id, "PHASE_END")
    (session_end,) = events(git_project, run_id, "SESSION_END")
    assert (phase_end["status"], phase_end["summary"]) == ("failed", {"error": "INSUFFICIENT_COVERAGE"})
    assert (session_end["status"], session_end["phases_completed"]) == ("failed", [])


def test_a_failed_review_is_one_error(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project)
    run_id = start(git_project)
    next_action(run_id)
    for agent in REVIEWER_AGENTS[:3]:
        record_valid(run_id, agent, reviewer_doc(agent))
    next_action(run_id)
    assert len(events(git_project, run_id, "ERROR")) == 1
    assert state(git_project, run_id)["error_count"] == 1


def test_errors_about_the_run_itself_are_not_counted(git_project: Path, fake_clock: FakeClock) -> None:
    code, refused = invoke("next", "0badc0de")
    assert (code, refused["error"]["code"], refused["error"]["run_id"]) == (2, "RUN_NOT_FOUND", "0badc0de")
    assert error_of(*invoke("next", "nothex!!")) == (2, "INVALID_RUN_ID")
    assert error_of(*invoke("task", "0badc0de", CR)) == (2, "RUN_NOT_FOUND")
