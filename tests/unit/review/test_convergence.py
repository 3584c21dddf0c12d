"""Tracking rounds against each other: resolved, introduced, persisting, convergence, divergence."""

from __future__ import annotations

from helpers_review import (
    A,
    B,
    C,
    D,
    Round,
    Script,
    drive,
    only,
)

from fixloop.review.views import files_modified


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
    assert files_modified(loop.review_doc) == []


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
