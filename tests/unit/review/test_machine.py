"""The loop driven through whole scripted loops (table), and decide_next's contract."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers_review import (
    CR,
    NOT_FIXABLE,
    RUN_ID,
    A,
    B,
    C,
    D,
    Loop,
    Round,
    Script,
    drive,
    make_state,
    only,
    verifier_doc,
)

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.report.coordinator import coordinator_output
from fixloop.review.machine import decide_next

SCENARIOS: list[tuple[str, Script, list[str], dict[str, Any] | None]] = [
    (
        "happy path to no_fixable_issues",
        Script([Round(only(A, B)), Round(only())]),
        ["verify:initial", "review:1", "fix:1", "verify:post_fix:1", "review:2", "stop:no_fixable_issues"],
        {"total_iterations": 2, "initial_issues": 2, "final_issues": 0, "fixed_issues": 2},
    ),
    (
        "nothing fixable in the first round",
        Script([Round(only(NOT_FIXABLE))]),
        ["verify:initial", "review:1", "stop:no_fixable_issues"],
        {"total_iterations": 1, "initial_issues": 1, "final_issues": 1, "fixed_issues": 0},
    ),
    (
        "converged after two rounds without improvement",
        Script(
            [Round(only(A, B)), Round(only(A, B)), Round(only(A, B))],
            {"use_verifier": False, "max_review_iterations": 5},
        ),
        [
            "verify:initial",
            "review:1",
            "fix:1",
            "verify:post_fix:1",
            "review:2",
            "fix:2",
            "verify:post_fix:2",
            "review:3",
            "stop:converged",
        ],
        {"total_iterations": 3, "initial_issues": 2, "final_issues": 2, "fixed_issues": 0},
    ),
    (
        "max_iterations",
        Script(
            [Round(only(A, B, C)), Round(only(A, B)), Round(only(A))],
            {"use_verifier": False, "max_review_iterations": 2},
        ),
        [
            "verify:initial",
            "review:1",
            "fix:1",
            "verify:post_fix:1",
            "review:2",
            "fix:2",
            "verify:post_fix:2",
            "review:3",
            "stop:max_iterations",
        ],
        {"total_iterations": 3, "initial_issues": 3, "final_issues": 1, "fixed_issues": 2},
    ),
    (
        "issues_increased, kept by hand",
        Script([Round(only(A)), Round(only(A, C, D), choice="manual")]),
        [
            "verify:initial",
            "review:1",
            "fix:1",
            "verify:post_fix:1",
            "review:2",
            "ask_user:review_diverged:2",
            "stop:issues_increased",
        ],
        {"total_iterations": 2, "initial_issues": 1, "final_issues": 3, "fixed_issues": 0},
    ),
    (
        "traded issue: one fixed, one introduced, same count",
        Script([Round(only(A, B)), Round(only(B, C)), Round(only())]),
        [
            "verify:initial",
            "review:1",
            "fix:1",
            "verify:post_fix:1",
            "review:2",
            "fix:2",
            "verify:post_fix:2",
            "review:3",
            "stop:no_fixable_issues",
        ],
        {"total_iterations": 3, "initial_issues": 2, "final_issues": 0, "fixed_issues": 3},
    ),
    (
        "insufficient coverage",
        Script([Round(only(A), agents=REVIEWER_AGENTS[:3])]),
        ["verify:initial", "review:1", "failed:INSUFFICIENT_COVERAGE"],
        None,
    ),
    (
        "verification failed after a fix: rollback",
        Script([Round(only(A), verify=False, choice="rollback")]),
        [
            "verify:initial",
            "review:1",
            "fix:1",
            "verify:post_fix:1",
            "ask_user:review_verification_failed:1",
            "stop:verification_failed",
        ],
        {"total_iterations": 1, "initial_issues": 1, "final_issues": 1, "fixed_issues": 0},
    ),
    (
        "verification failed after a fix: continue",
        Script([Round(only(A), verify=False, choice="continue"), Round(only())]),
        [
            "verify:initial",
            "review:1",
            "fix:1",
            "verify:post_fix:1",
            "ask_user:review_verification_failed:1",
            "review:2",
            "stop:no_fixable_issues",
        ],
        {"total_iterations": 2, "initial_issues": 1, "final_issues": 0, "fixed_issues": 1},
    ),
    (
        "verification failed after a fix: manual",
        Script([Round(only(A), verify=False, choice="manual")]),
        [
            "verify:initial",
            "review:1",
            "fix:1",
            "verify:post_fix:1",
            "ask_user:review_verification_failed:1",
            "stop:verification_failed",
        ],
        {"total_iterations": 1, "initial_issues": 1, "final_issues": 1, "fixed_issues": 0},
    ),
    (
        "verification failed after a fix: cancel",
        Script([Round(only(A), verify=False, choice="cancel")]),
        [
            "verify:initial",
            "review:1",
            "fix:1",
            "verify:post_fix:1",
            "ask_user:review_verification_failed:1",
            "stop:user_cancelled",
        ],
        {"total_iterations": 1, "initial_issues": 1, "final_issues": 1, "fixed_issues": 0},
    ),
    (
        "no changed files",
        Script([], changed_files=()),
        ["stop:no_changes"],
        {"total_iterations": 0, "initial_issues": 0, "final_issues": 0, "fixed_issues": 0},
    ),
    (
        "initial verification failed: continue",
        Script([Round(only())], gate=False, gate_choice="continue"),
        ["verify:initial", "ask_user:initial_verification_failed:0", "review:1", "stop:no_fixable_issues"],
        {"total_iterations": 1, "initial_issues": 0, "final_issues": 0, "fixed_issues": 0},
    ),
    (
        "initial verification failed: manual",
        Script([Round(only(A))], gate=False, gate_choice="manual"),
        ["verify:initial", "ask_user:initial_verification_failed:0", "stop:verification_failed"],
        {"total_iterations": 0, "initial_issues": 0, "final_issues": 0, "fixed_issues": 0},
    ),
    (
        "initial verification failed: cancel",
        Script([Round(only(A))], gate=False, gate_choice="cancel"),
        ["verify:initial", "ask_user:initial_verification_failed:0", "stop:user_cancelled"],
        {"total_iterations": 0, "initial_issues": 0, "final_issues": 0, "fixed_issues": 0},
    ),
    (
        "verifier deletes a finding before the fix",
        Script(
            [
                Round(
                    only(A, B), verifier=[verifier_doc(80, {"FL-002": "the handle is closed by the caller"})]
                ),
                Round(only()),
            ],
            {"use_verifier": True},
        ),
        [
            "verify:initial",
            "review:1",
            "verify_findings:1",
            "fix:1",
            "verify:post_fix:1",
            "review:2",
            "stop:no_fixable_issues",
        ],
        {"total_iterations": 2, "initial_issues": 1, "final_issues": 0, "fixed_issues": 1},
    ),
    (
        "QUALITY_TOO_LOW re-review, bounded by max_quality_retries",
        Script(
            [
                Round([{CR: [A, B]}, {CR: [A]}], verifier=[verifier_doc(30), verifier_doc(35)]),
                Round(only()),
            ],
            {"use_verifier": True, "max_quality_retries": 1},
        ),
        [
            "verify:initial",
            "review:1",
            "verify_findings:1",
            "review:1#2",
            "verify_findings:1",
            "fix:1",
            "verify:post_fix:1",
            "review:2",
            "stop:no_fixable_issues",
        ],
        {"total_iterations": 2, "initial_issues": 1, "final_issues": 0, "fixed_issues": 1},
    ),
    (
        "QUALITY_TOO_LOW with no retries allowed",
        Script(
            [Round(only(A), verifier=[verifier_doc(10)]), Round(only())],
            {"use_verifier": True, "max_quality_retries": 0},
        ),
        [
            "verify:initial",
            "review:1",
            "verify_findings:1",
            "fix:1",
            "verify:post_fix:1",
            "review:2",
            "stop:no_fixable_issues",
        ],
        {"total_iterations": 2, "initial_issues": 1, "final_issues": 0, "fixed_issues": 1},
    ),
    (
        "a verifier that never answers is retried, then skipped",
        Script([Round(only(A), verifier=[None, None, None]), Round(only())], {"use_verifier": True}),
        [
            "verify:initial",
            "review:1",
            "verify_findings:1",
            "verify_findings:1",
            "verify_findings:1",
            "fix:1",
            "verify:post_fix:1",
            "review:2",
            "stop:no_fixable_issues",
        ],
        {"total_iterations": 2, "initial_issues": 1, "final_issues": 0, "fixed_issues": 1},
    ),
]


@pytest.mark.parametrize(
    ("script", "labels", "numbers"), [item[1:] for item in SCENARIOS], ids=[item[0] for item in SCENARIOS]
)
def test_whole_loops(script: Script, labels: list[str], numbers: dict[str, Any] | None) -> None:
    loop, seen, final = drive(script)
    assert seen == labels
    if numbers is not None:
        assert {key: final["summary"][key] for key in numbers} == numbers
        assert final["summary"]["termination_reason"] == labels[-1].split(":", 1)[1]
        complete = loop.of_type("REVIEW_COMPLETE")
        assert len(complete) == 1
        assert {key: complete[0][key] for key in numbers} == numbers


def test_happy_path_events_and_fix_iteration_fields() -> None:
    loop, _labels, _final = drive(Script([Round(only(A, B)), Round(only())]))
    fix_events = loop.of_type("REVIEW_FIX_ITERATION")
    assert fix_events[0] == {"iteration": 1, "direction": "start", "fixable_issues": 2}
    end = fix_events[1]
    assert {
        key: end[key] for key in ("iteration", "direction", "attempted", "succeeded", "failed", "remaining")
    } == {
        "iteration": 1,
        "direction": "end",
        "attempted": 2,
        "succeeded": 2,
        "failed": 0,
        "remaining": 0,
    }
    assert end["duration_ms"] == 2000  # fix action at t, fixer recorded at t+1s, next call at t+2s
    # REVIEW_PARALLEL_START/END are the hooks' (they see the real agent calls), not the engine's
    assert loop.of_type("REVIEW_PARALLEL_START") == loop.of_type("REVIEW_PARALLEL_END") == []
    assert loop.of_type("REVIEW_COMPLETE")[0]["termination_reason"] == "no_fixable_issues"
    assert loop.review_doc["rounds"][1]["resolved_issues"] == ["FL-001", "FL-002"]
    assert loop.effects.snapshots == [(1, ["src/app.py"])]


def test_no_changes_stops_at_once() -> None:
    loop = Loop(make_state(changed_files=()))
    doc = loop.next()
    assert doc == {
        "action": "stop",
        "round": 0,
        "termination_reason": "no_changes",
        "status": "success",
        "summary": {
            "total_iterations": 0,
            "initial_issues": 0,
            "final_issues": 0,
            "fixed_issues": 0,
            "termination_reason": "no_changes",
        },
        "report_command": f"fixloop review report {RUN_ID}",
    }


def test_transitions_do_not_modify_their_input() -> None:
    state = make_state()
    frozen = json.dumps(state, sort_keys=True)
    transition = decide_next(state, None, 5)
    assert json.dumps(state, sort_keys=True) == frozen
    assert transition.state["review"]["gate"]["requested_at_ms"] == 5


def test_every_emitted_event_matches_its_event_model() -> None:
    from fixloop.contracts.events import EVENT_MODELS

    seen: set[str] = set()
    for _name, script, _labels, _numbers in SCENARIOS:
        loop, _seen, _final = drive(script)
        for level, kind, fields in loop.events:
            EVENT_MODELS[kind].model_validate(
                {
                    "ts": "2025-01-01T00:00:00.000Z",
                    "level": level,
                    "type": kind,
                    "session_id": RUN_ID,
                    **fields,
                }
            )
            seen.add(kind)
    assert seen == {
        "AGENT_FAILURE",
        "AGENT_IO",
        "ERROR",
        "REVIEW_COMPLETE",
        "REVIEW_CONVERGENCE",
        "REVIEW_FIX_ITERATION",
        "USER_INTERACTION",
        "WARNING",
    }


def test_a_dry_run_stops_where_it_would_fix_and_snapshots_nothing() -> None:
    loop = Loop(make_state(use_verifier=False))
    loop.state["dry_run"] = True
    assert loop.next()["action"] == "verify"
    loop.verify(True)
    assert loop.next()["action"] == "review"
    loop.review({CR: [A, NOT_FIXABLE]})
    stop = loop.next()
    assert (stop["action"], stop["status"], stop["termination_reason"]) == ("stop", "dry_run_complete", None)
    assert loop.effects.snapshots == []
    assert loop.review_doc["rounds"][0]["fix"] is None
    report = coordinator_output(loop.state)
    assert report["status"] == "dry_run_complete"
    assert sorted(ref["id"] for ref in report["remaining_issues"]) == ["FL-001", "FL-002"]
