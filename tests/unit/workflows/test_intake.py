"""`fixloop record`: agent answers refused, counted as invalid attempts, or taken, on a review run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers_review import fixer_doc, reviewer_doc
from helpers_runs import FakeClock
from workflows.flow_helpers import (
    CR,
    error_of,
    events,
    fields,
    invoke,
    next_action,
    record,
    review_project,
    run_files,
    start,
    state,
)

SFH = "silent-failure-hunter"


@pytest.fixture
def project(git_project: Path, fake_clock: FakeClock) -> Path:
    review_project(git_project)
    return git_project


def test_an_agent_of_another_plugin_is_unknown(project: Path) -> None:
    run_id = start(project)
    next_action(run_id)
    before = run_files(project, run_id)
    code, refused = record(run_id, "other-plugin:code-reviewer", reviewer_doc(CR))
    assert (code, refused) == (
        2,
        {
            "status": "failed",
            "error": {
                "code": "UNKNOWN_AGENT",
                "message": "Unknown agent 'other-plugin:code-reviewer'.",
                "received": "other-plugin:code-reviewer",
            },
        },
    )
    assert error_of(*record(run_id, " ", reviewer_doc(CR))) == (2, "UNKNOWN_AGENT")
    assert run_files(project, run_id) == before


def test_an_answer_no_phase_waits_for_is_refused(project: Path) -> None:
    run_id = start(project)
    before = run_files(project, run_id)
    code, refused = record(run_id, CR, reviewer_doc(CR))  # no phase has started yet
    assert (code, refused["error"]) == (
        2,
        {
            "code": "UNEXPECTED_AGENT_RESULT",
            "message": f"Result of {CR} not recorded: no phase of run {run_id} is waiting for it.",
            "agent": CR,
            "open_phase": None,
        },
    )
    assert run_files(project, run_id) == before

    next_action(run_id)  # the reviewers are called
    before = run_files(project, run_id)
    code, refused = record(run_id, "failure-analyst", "{}")  # an agent of another workflow
    assert (code, refused["error"]["code"], refused["error"]["open_phase"]) == (
        2,
        "UNEXPECTED_AGENT_RESULT",
        0,
    )
    code, refused = record(run_id, "fixloop:review-fixer", fixer_doc({"FL-001": "succeeded"}))
    assert (code, refused["error"]["code"], refused["error"]["message"]) == (
        2,
        "UNEXPECTED_AGENT_RESULT",
        "Result of review-fixer not recorded: round 1 is not waiting for the fixer.",
    )
    assert run_files(project, run_id) == before


def test_invalid_answers_are_attempts_until_the_contract_violation(project: Path) -> None:
    run_id = start(project)
    next_action(run_id)

    code, answer = record(run_id, CR, "I found nothing worth reporting.")
    error = answer["error"]
    assert (code, error["code"]) == (1, "JSON_PARSE_ERROR")
    assert answer == {
        "status": "recorded",
        "agent": CR,
        "round": 1,
        "valid": False,
        "retry": True,
        "attempt": 1,
        "error": error,
        "hint": error["hint"],
        "agent_status": None,
        "issues_count": None,
    }
    code, answer = record(run_id, CR, reviewer_doc(SFH))  # another agent's document
    assert (code, answer["error"]["code"], answer["retry"], answer["attempt"]) == (
        1,
        "AGENT_MISMATCH",
        True,
        2,
    )
    assert answer["hint"] == f'Set "agent": "{CR}" in the JSON document.'
    assert events(project, run_id, "CONTRACT_VIOLATION") == []

    broken = json.dumps({"status": "success", "agent": CR, "issues": [{"id": 1}]})
    code, answer = record(run_id, CR, broken)
    assert (code, answer["error"]["code"], answer["retry"], answer["attempt"]) == (
        1,
        "SCHEMA_VIOLATION",
        False,
        3,
    )
    (violation,) = events(project, run_id, "CONTRACT_VIOLATION")
    assert violation["level"] == "E"
    assert fields(violation) == {
        "agent": CR,
        "error_code": "SCHEMA_VIOLATION",
        "attempts": 3,
        "violations": answer["error"]["violations"],
        "iteration": 1,
    }

    # a valid answer is still taken after the retries ran out, and no second violation is logged
    code, answer = record(run_id, CR, reviewer_doc(CR))
    assert (code, answer["valid"], answer["retry"], answer["attempt"], answer["issues_count"]) == (
        0,
        True,
        False,
        4,
        0,
    )
    kept = state(project, run_id)["review"]["rounds"][0]["records"][CR]
    assert (kept["valid"], kept["attempts"], kept["invalid_attempts"], kept["exhausted"]) == (
        True,
        4,
        3,
        True,
    )
    assert len(events(project, run_id, "CONTRACT_VIOLATION")) == 1


def test_an_ended_run_takes_no_answer(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project, change=False)
    run_id = start(git_project)
    stop = next_action(run_id)
    assert (stop["action"], stop["status"], stop["reason"]) == ("stop", "success", "no_changes")
    before = run_files(git_project, run_id)
    code, refused = record(run_id, CR, reviewer_doc(CR))
    assert (code, refused["error"]) == (
        2,
        {
            "code": "RUN_ALREADY_ENDED",
            "message": f"Run {run_id} has already ended with status 'success'.",
            "run_id": run_id,
            "status": "success",
        },
    )
    assert error_of(*invoke("answer", run_id, "--default")) == (2, "RUN_ALREADY_ENDED")
    assert run_files(git_project, run_id) == before
