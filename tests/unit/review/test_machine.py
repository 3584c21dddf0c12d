"""The review state machine, driven through whole loops (table) and checked step by step."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from helpers_review import (
    RUN_ID,
    Loop,
    all_fixed,
    failed_reviewer_doc,
    fixer_doc,
    issue,
    make_state,
    reviewer_doc,
    verification,
    verifier_doc,
)

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.core.errors import FixloopError
from fixloop.report import formats
from fixloop.review import machine

CR = "code-reviewer"
SFH = "silent-failure-hunter"

A = issue("A", 10, "Missing null check on `user`")
B = issue("B", 30, "Unclosed file handle")
C = issue("C", 50, "Swallowed exception in `load`")
D = issue("D", 70, "Off by one in the loop bound")
NOT_FIXABLE = issue("N", 90, "Consider renaming the module", confidence=60)


@dataclass
class Round:
    attempts: list[dict[str, list[dict[str, Any]]]]  # per review attempt: agent -> issues
    agents: Sequence[str] = REVIEWER_AGENTS  # the reviewers that record anything
    verifier: list[dict[str, Any] | None] = field(default_factory=list)  # one per verify_findings
    verify: bool = True
    choice: str | None = None


def only(*issues: dict[str, Any]) -> list[dict[str, list[dict[str, Any]]]]:
    return [{CR: list(issues)}]


@dataclass
class Script:
    rounds: list[Round]
    config: dict[str, Any] = field(default_factory=lambda: {"use_verifier": False})
    changed_files: Sequence[str] = ("src/app.py",)
    gate: bool = True
    gate_choice: str | None = None


def drive(script: Script) -> tuple[Loop, list[str], dict[str, Any]]:
    loop = Loop(make_state(script.changed_files, **script.config))
    labels: list[str] = []
    verifier_queues = {index + 1: list(item.verifier) for index, item in enumerate(script.rounds)}
    for _step in range(80):
        doc = loop.next()
        action = doc["action"]
        number = doc.get("round", 0)
        spec = script.rounds[number - 1] if number >= 1 else None
        if action == "verify":
            labels.append(f"verify:{doc['slot']}" + (f":{number}" if doc["slot"] == "post_fix" else ""))
            loop.verify(script.gate if doc["slot"] == "initial" else spec.verify)  # type: ignore[union-attr]
        elif action == "review":
            assert spec is not None
            labels.append(f"review:{number}" + (f"#{doc['attempt']}" if doc["attempt"] > 1 else ""))
            by_agent = spec.attempts[min(doc["attempt"], len(spec.attempts)) - 1]
            loop.review(by_agent, spec.agents)
        elif action == "verify_findings":
            labels.append(f"verify_findings:{number}")
            answer = verifier_queues[number].pop(0)
            if answer is not None:
                loop.record("review-verifier", answer)
        elif action == "fix":
            labels.append(f"fix:{number}")
            loop.record("review-fixer", all_fixed(item["id"] for item in doc["issues"]))
        elif action == "ask_user":
            labels.append(f"ask_user:{doc['context']}:{number}")
            initial = doc["context"] == "initial_verification_failed"
            loop.choose(script.gate_choice if initial or spec is None else spec.choice)
        elif action == "stop":
            labels.append(f"stop:{doc['termination_reason']}")
            return loop, labels, doc
        else:
            labels.append(f"failed:{doc['error']['code']}")
            return loop, labels, doc
    raise AssertionError(f"the loop did not end: {labels}")


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


# ---- details of the scenarios ----------------------------------------------------------------------


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


def test_converged_event_carries_trend() -> None:
    loop, _labels, _final = drive(
        Script(
            [Round(only(A, B)), Round(only(A, B)), Round(only(A, B))],
            {"use_verifier": False, "max_review_iterations": 5},
        )
    )
    events = [(level, fields) for level, kind, fields in loop.events if kind == "REVIEW_CONVERGENCE"]
    assert events == [
        (
            "X",
            {
                "decision": "converged",
                "iteration": 3,
                "issues_trend": [2, 2, 2],
                "reason": "fixable issue count unchanged for 2 consecutive iterations",
            },
        )
    ]


def test_improvement_resets_the_no_improvement_counter() -> None:
    # 2, 2 (no improvement), 1 (improved: reset), 1 (once), 0 -> never converged
    script = Script(
        [Round(only(A, B)), Round(only(A, B)), Round(only(A)), Round(only(A)), Round(only())],
        {"use_verifier": False, "max_review_iterations": 10},
    )
    loop, labels, _final = drive(script)
    assert labels[-1] == "stop:no_fixable_issues"
    assert loop.review_doc["trend"] == [2, 2, 1, 1, 0]
    assert loop.of_type("REVIEW_CONVERGENCE") == []


def test_issues_increased_lists_the_introduced_issues() -> None:
    loop, _labels, final = drive(Script([Round(only(A)), Round(only(A, C, D), choice="manual")]))
    second = loop.review_doc["rounds"][1]
    assert second["introduced_issues"] == ["FL-002", "FL-003"]
    assert second["persisting_issues"] == ["FL-001"]
    diverged = [(level, fields) for level, kind, fields in loop.events if kind == "REVIEW_CONVERGENCE"]
    assert diverged == [
        (
            "W",
            {
                "decision": "diverged",
                "iteration": 2,
                "previous_count": 1,
                "current_count": 3,
                "introduced_issues": ["FL-002", "FL-003"],
            },
        )
    ]
    asked = loop.of_type("USER_INTERACTION")[0]
    assert "from 1 to 3" in asked["question"] and "FL-002, FL-003" in asked["question"]
    assert final["status"] == "partial"
    assert loop.effects.rollbacks == []


def test_issues_increased_rollback_restores_the_previous_fix() -> None:
    loop, labels, final = drive(Script([Round(only(A)), Round(only(A, C, D), choice="rollback")]))
    assert labels[-1] == "stop:issues_increased"
    assert loop.effects.rollbacks == ["snap-1"]
    assert loop.review_doc["rounds"][0]["rolled_back"] is True
    # the code is back to what round 1 reviewed
    assert final["summary"]["final_issues"] == 1
    assert machine.files_modified(loop.review_doc) == []


def test_traded_issue_is_visible_in_resolved_and_introduced() -> None:
    loop, _labels, _final = drive(Script([Round(only(A, B)), Round(only(B, C)), Round(only())]))
    second = loop.review_doc["rounds"][1]
    assert (second["resolved_issues"], second["introduced_issues"], second["persisting_issues"]) == (
        ["FL-001"],
        ["FL-003"],
        ["FL-002"],
    )
    assert loop.review_doc["consecutive_no_improvement"] == 0  # reset by the drop to 0 in round 3
    assert loop.of_type("REVIEW_CONVERGENCE") == []


def test_insufficient_coverage_fails_the_run_with_failed_agents() -> None:
    loop, _labels, final = drive(Script([Round(only(A), agents=REVIEWER_AGENTS[:3])]))
    error = final["error"]
    assert error["code"] == "INSUFFICIENT_COVERAGE"
    assert error["message"] == "Only 3/6 review agents succeeded (at least 4 required)"
    assert [item["agent"] for item in error["failed_agents"]] == list(REVIEWER_AGENTS[3:])
    assert error["failed_agents"][0] == {
        "agent": "test-analyzer",
        "status": "failed",
        "error": {
            "code": "NULL_RESPONSE",
            "message": "Agent test-analyzer returned nothing",
            "phase": "execution",
            "recoverable": True,
            "stack_trace": None,
        },
    }
    assert loop.state["status"] == "failed"
    assert loop.state["error_count"] == 1
    failures = loop.of_type("AGENT_FAILURE")
    assert [item["agent"] for item in failures] == list(REVIEWER_AGENTS[3:])
    assert {item["error_code"] for item in failures} == {"NULL_RESPONSE"}
    # asking again answers the same
    assert loop.next() == final


def test_failed_reviewer_documents_count_against_coverage() -> None:
    loop = Loop(make_state(use_verifier=False))
    loop.next()
    loop.verify(True)
    loop.next()
    for agent in REVIEWER_AGENTS[:4]:
        loop.record(agent, reviewer_doc(agent, []))
    loop.record(REVIEWER_AGENTS[4], failed_reviewer_doc(REVIEWER_AGENTS[4], "TIMEOUT"))
    doc = loop.next()  # four succeeded: enough
    assert doc["action"] == "stop"
    results = loop.review_doc["rounds"][0]["agents_results"]
    assert results[4]["error"]["code"] == "TIMEOUT"
    assert results[5]["error"]["code"] == "NULL_RESPONSE"


def test_duplicates_are_merged_listing_every_agent() -> None:
    same = issue("X", 12, "Missing await on `save()` call")
    shifted_wording = issue("Y", 14, "missing await on `persist()` call", confidence=95, severity="critical")
    loop = Loop(make_state(use_verifier=False))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({CR: [same], SFH: [shifted_wording], "test-analyzer": [same], "code-simplifier": [B]})
    doc = loop.next()
    assert doc["action"] == "fix"
    merged = {item["id"]: item for item in doc["issues"]}
    assert sorted(merged) == ["FL-001", "FL-002"]
    first = merged["FL-001"]
    assert first["agents"] == [CR, SFH, "test-analyzer"]
    assert (first["line"], first["end_line"], first["confidence"], first["severity"]) == (
        12,
        14,
        95,
        "critical",
    )
    assert first["description"] == "missing await on `persist()` call"  # from the most confident report
    assert merged["FL-002"]["agents"] == ["code-simplifier"]
    assert loop.review_doc["rounds"][0]["issues_found"] == 2


def test_stable_ids_survive_line_shifts_and_reordering() -> None:
    loop = Loop(make_state(use_verifier=False, max_review_iterations=5))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({CR: [A, B]})
    loop.record("review-fixer", all_fixed(item["id"] for item in loop.next()["issues"]))
    loop.next()
    loop.verify(True)
    assert loop.next()["action"] == "review"
    moved_b = issue("B2", 36, "Unclosed file handle")  # 6 lines lower, another bucket
    moved_a = issue("A2", 13, "Missing null check on `account`")  # other identifier, same bucket
    loop.review({SFH: [moved_b], CR: [moved_a]})
    doc = loop.next()
    assert [(item["id"], item["line"]) for item in doc["issues"]] == [("FL-001", 13), ("FL-002", 36)]


def test_verifier_deletion_and_quality_retry_context() -> None:
    loop = Loop(make_state(use_verifier=True, max_quality_retries=2))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({CR: [A, B]})
    asked = loop.next()
    assert asked["action"] == "verify_findings"
    assert asked["agent"] == "fixloop:review-verifier"
    assert [item["id"] for item in asked["issues"]] == ["FL-001", "FL-002"]
    low = verifier_doc(
        40, {"FL-002": "not a bug"}, missing=["SQL built by string concatenation"], weaknesses=["vague"]
    )
    loop.record("review-verifier", low)
    again = loop.next()
    assert again["action"] == "review"
    assert again["attempt"] == 2
    assert again["task"]["retry_context"] == {
        "attempt_number": 2,
        "previous_errors": [
            "QUALITY_TOO_LOW: review quality score 40/100 (POOR) is below 50; weaknesses: vague"
        ],
        "recovery_actions_taken": ["re-review with stricter quality requirements"],
    }
    assert "RETRY (attempt 2)" in again["prompt"]
    assert "SQL built by string concatenation" in again["prompt"]
    warning = [fields for fields in loop.of_type("WARNING") if fields["code"] == "QUALITY_TOO_LOW"]
    assert len(warning) == 1
    loop.review({CR: [A, B]})
    assert loop.next()["action"] == "verify_findings"
    loop.record("review-verifier", verifier_doc(90, {"FL-002": "not a bug"}))
    fix = loop.next()
    assert fix["action"] == "fix"
    assert [item["id"] for item in fix["issues"]] == ["FL-001"]
    first = loop.review_doc["rounds"][0]
    assert first["removed_by_verifier"] == ["FL-002"]
    assert first["removed_details"] == {"FL-002": "not a bug"}
    assert first["passes"][0]["quality_score"] == 40


def test_quality_retries_stop_at_the_configured_bound() -> None:
    script = Script(
        [Round([{CR: [A]}], verifier=[verifier_doc(20), verifier_doc(20), verifier_doc(20)]), Round(only())],
        {"use_verifier": True, "max_quality_retries": 2},
    )
    loop, labels, _final = drive(script)
    assert labels[:7] == [
        "verify:initial",
        "review:1",
        "verify_findings:1",
        "review:1#2",
        "verify_findings:1",
        "review:1#3",
        "verify_findings:1",
    ]
    assert labels[7] == "fix:1"
    codes = [fields["code"] for fields in loop.of_type("WARNING")]
    assert codes == ["QUALITY_TOO_LOW", "QUALITY_TOO_LOW", "QUALITY_RETRIES_EXHAUSTED"]


def test_rollback_after_failed_verification_restores_the_round_snapshot() -> None:
    loop, _labels, final = drive(Script([Round(only(A), verify=False, choice="rollback")]))
    assert loop.effects.rollbacks == ["snap-1"]
    first = loop.review_doc["rounds"][0]
    assert first["rolled_back"] is True
    assert first["rollback_files"] == ["src/app.py"]
    assert final["status"] == "partial"
    answers = [fields for fields in loop.of_type("USER_INTERACTION") if "user_response" in fields]
    assert answers == [
        {
            "context": "review_verification_failed",
            "user_response": "rollback",
            "wait_duration_ms": 1000,
            "default": False,
            "iteration": 1,
        }
    ]


@pytest.mark.parametrize(
    ("configured", "context_round", "expected"),
    [
        ("rollback", "post_fix", "rollback"),
        ("continue", "post_fix", "continue"),
        ("manual", "post_fix", "manual"),
        ("rollback", "initial", "manual"),  # nothing to roll back before a fix
        ("continue", "initial", "continue"),
    ],
)
def test_default_choice_applies_on_verification_failure(
    configured: str, context_round: str, expected: str
) -> None:
    loop = Loop(make_state(use_verifier=False, on_verification_failure=configured))
    loop.next()
    if context_round == "initial":
        loop.verify(False)
    else:
        loop.verify(True)
        loop.next()
        loop.review({CR: [A]})
    asked = loop.next()
    if context_round == "post_fix":
        assert asked["action"] == "fix"
        loop.record("review-fixer", all_fixed(["FL-001"]))
        assert loop.next()["action"] == "verify"
        loop.verify(False)
        asked = loop.next()
    assert asked["action"] == "ask_user"
    assert asked["default"] == expected
    answer = loop.choose(None, default=True)
    assert (answer["choice"], answer["default"]) == (expected, True)


def test_choose_validates_the_choice() -> None:
    loop = Loop(make_state())
    with pytest.raises(FixloopError) as no_question:
        loop.choose("continue")
    assert no_question.value.code == "NO_PENDING_QUESTION"
    loop.next()
    loop.verify(False)
    asked = loop.next()
    assert [item["label"] for item in asked["options"]] == ["continue", "manual", "cancel"]
    with pytest.raises(FixloopError) as bad:
        loop.choose("retry")
    assert bad.value.code == "INVALID_CHOICE"
    assert bad.value.details["valid_values"] == ["continue", "manual", "cancel"]
    with pytest.raises(FixloopError) as conflicting:
        loop.choose("continue", default=True)  # the default here is manual
    assert conflicting.value.code == "INVALID_CHOICE"
    answer = loop.choose("rollback")  # before any fix, rollback means manual
    assert answer["choice"] == "manual"
    assert loop.next()["termination_reason"] == "verification_failed"


def test_ask_user_is_asked_once_and_repeated_until_answered() -> None:
    loop = Loop(make_state())
    loop.next()
    loop.verify(False)
    first = loop.next()
    second = loop.next()
    assert first == second
    asks = [fields for fields in loop.of_type("USER_INTERACTION") if "question" in fields]
    assert len(asks) == 1
    assert asks[0]["context"] == "initial_verification_failed"
    assert "tests failed (exit code 1)" in asks[0]["question"]


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


# ---- recording -------------------------------------------------------------------------------------


def open_review(**config: Any) -> Loop:
    loop = Loop(make_state(**config))
    loop.next()
    loop.verify(True)
    assert loop.next()["action"] == "review"
    return loop


INVALID = {
    "code": "SCHEMA_VIOLATION",
    "message": "1 violation",
    "violations": [{"path": "$.issues[0].confidence", "message": "must be <= 100"}],
    "hint": "Fix $.issues[0].confidence.",
}


def test_record_answer_fields() -> None:
    loop = open_review()
    answer = loop.record(CR, reviewer_doc(CR, [A]))
    assert answer == {
        "status": "recorded",
        "agent": CR,
        "round": 1,
        "valid": True,
        "retry": False,
        "attempt": 1,
        "error": None,
        "hint": None,
        "agent_status": "success",
        "issues_count": 1,
    }
    invalid = loop.record(CR, None, INVALID)
    assert (invalid["valid"], invalid["agent_status"], invalid["issues_count"]) == (False, None, None)
    failed = open_review().record(CR, failed_reviewer_doc(CR))
    assert (failed["agent_status"], failed["issues_count"]) == ("failed", 0)


def test_three_invalid_attempts_stop_retrying_with_a_contract_violation() -> None:
    loop = open_review()
    answers = [loop.record(CR, None, INVALID) for _ in range(4)]
    assert [(item["attempt"], item["retry"], item["valid"]) for item in answers] == [
        (1, True, False),
        (2, True, False),
        (3, False, False),
        (4, False, False),
    ]
    assert answers[0]["hint"] == "Fix $.issues[0].confidence."
    assert answers[0]["error"]["code"] == "SCHEMA_VIOLATION"
    violations = [(level, fields) for level, kind, fields in loop.events if kind == "CONTRACT_VIOLATION"]
    assert violations == [
        (
            "E",
            {
                "agent": CR,
                "error_code": "SCHEMA_VIOLATION",
                "attempts": 3,
                "violations": INVALID["violations"],
                "iteration": 1,
            },
        )
    ]
    for agent in REVIEWER_AGENTS[1:]:
        loop.record(agent, reviewer_doc(agent))
    loop.next()
    result = loop.review_doc["rounds"][0]["agents_results"][0]
    assert result["status"] == "failed"
    assert result["error"]["code"] == "SCHEMA_VIOLATION"
    assert result["error"]["phase"] == "parsing"


def test_same_agent_same_round_replaces_and_invalid_never_replaces_valid() -> None:
    loop = open_review()
    loop.record(CR, None, INVALID)
    loop.record(CR, reviewer_doc(CR, [A]))
    loop.record(CR, reviewer_doc(CR, [A, B]))  # replaces
    late = loop.record(CR, None, INVALID)  # does not replace
    assert (late["attempt"], late["valid"], late["retry"]) == (4, False, False)
    assert "earlier valid answer" in (late["hint"] or "")
    for agent in REVIEWER_AGENTS[1:]:
        loop.record(agent, reviewer_doc(agent))
    doc = loop.next()
    assert [item["id"] for item in doc["issues"]] == ["FL-001", "FL-002"]


def test_agent_mismatch_is_an_invalid_attempt() -> None:
    loop = open_review()
    answer = loop.record(CR, reviewer_doc(SFH, [A]))
    assert answer["valid"] is False
    assert answer["error"]["code"] == "AGENT_MISMATCH"
    assert answer["retry"] is True


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        ("review-fixer", "not waiting for the fixer"),
        ("review-verifier", "not waiting for the verifier"),
    ],
)
def test_results_nobody_waits_for_are_refused(agent: str, expected: str) -> None:
    loop = open_review()
    with pytest.raises(FixloopError) as refused:
        loop.record(agent, {"agent": agent})
    assert refused.value.code == "UNEXPECTED_AGENT_RESULT"
    assert expected in refused.value.message


def test_reviewer_result_before_any_request_is_refused() -> None:
    loop = Loop(make_state())
    with pytest.raises(FixloopError) as refused:
        loop.record(CR, reviewer_doc(CR))
    assert refused.value.code == "UNEXPECTED_AGENT_RESULT"
    with pytest.raises(FixloopError) as unknown:
        loop.record("linter", reviewer_doc(CR))
    assert unknown.value.code == "UNKNOWN_AGENT"


def test_fixer_failure_still_goes_to_verification() -> None:
    loop = open_review(use_verifier=False)
    loop.review({CR: [A]})
    assert loop.next()["action"] == "fix"
    doc = loop.next()  # the fixer recorded nothing
    assert doc["action"] == "verify"
    failure = loop.of_type("AGENT_FAILURE")[-1]
    assert (failure["agent"], failure["error_code"]) == ("review-fixer", "NULL_RESPONSE")
    assert loop.review_doc["rounds"][0]["fix"]["result"] == {"attempted": 0, "succeeded": 0, "failed": 0}


def test_fix_counts_and_files() -> None:
    loop = open_review(use_verifier=False)
    loop.review({CR: [A, B, C]})
    loop.next()
    loop.effects.changed = ["src/app.py", "src/new.py"]
    loop.record("review-fixer", fixer_doc({"FL-001": "succeeded", "FL-002": "failed", "FL-003": "skipped"}))
    loop.next()
    fix = loop.review_doc["rounds"][0]["fix"]
    assert fix["result"] == {"attempted": 2, "succeeded": 1, "failed": 1}
    assert fix["files_modified"] == ["src/app.py", "src/new.py"]
    end = loop.of_type("REVIEW_FIX_ITERATION")[-1]
    assert end["remaining"] == 2
    # the next round reviews the new file too
    loop.verify(True)
    assert loop.next()["task"]["task_desc"].endswith("review 2 changed file(s).")


# ---- verification slots, purity, status --------------------------------------------------------------


def test_attach_verification_slots() -> None:
    state = make_state(use_verifier=False)
    assert machine.verification_slot(state) is None  # nobody asked: an earlier phase's verify
    machine.attach_verification(state, verification(False))
    assert state["review"] == {}
    loop = Loop(state)
    assert loop.next()["slot"] == "initial"
    assert machine.verification_slot(loop.state) == "initial"
    loop.verify(True)
    assert loop.review_doc["gate"]["passed"] is True
    assert machine.verification_slot(loop.state) is None
    unchanged = copy.deepcopy(loop.state)
    machine.attach_verification(loop.state, verification(False))  # nobody waits: ignored
    assert loop.state == unchanged
    loop.next()
    loop.review({CR: [A]})
    assert loop.next()["action"] == "fix"
    assert machine.verification_slot(loop.state) is None  # the fixer has not answered
    loop.record("review-fixer", all_fixed(["FL-001"]))
    assert machine.verification_slot(loop.state) == "post_fix"  # verify may run before `next`
    loop.verify(False)
    asked = loop.next()
    assert (asked["action"], asked["context"]) == ("ask_user", "review_verification_failed")


def test_transitions_do_not_modify_their_input() -> None:
    state = make_state()
    frozen = json.dumps(state, sort_keys=True)
    transition = machine.decide_next(state, None, 5)
    assert json.dumps(state, sort_keys=True) == frozen
    assert transition.state["review"]["gate"]["requested_at_ms"] == 5


def test_status_document_lists_missing_reviewers() -> None:
    loop = open_review()
    loop.record(CR, reviewer_doc(CR))
    status = machine.status_document(loop.state)
    assert status["round"]["missing"] == list(REVIEWER_AGENTS[1:])
    assert status["round"]["recorded"] == {CR: {"valid": True, "attempts": 1}}
    assert status["last_action"]["action"] == "review"
    assert status["status"] == "running"


def test_fixable_needs_threshold_and_auto_fixable() -> None:
    loop = open_review(use_verifier=False, confidence_threshold=85)
    loop.review(
        {
            CR: [
                issue("1", 10, "first", confidence=85),
                issue("2", 20, "second", confidence=84),
                issue("3", 30, "third", confidence=99, auto_fixable=False),
            ]
        }
    )
    doc = loop.next()
    assert [item["id"] for item in doc["issues"]] == ["FL-001"]


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
    report = formats.coordinator_output(loop.state)
    assert report["status"] == "dry_run_complete"
    assert sorted(ref["id"] for ref in report["remaining_issues"]) == ["FL-001", "FL-002"]
