"""The coordinator output document, computed from the run state."""

from __future__ import annotations

from typing import Any

from helpers_review import (
    CR,
    OUTDATED_COMMENT,
    SFH,
    SQL_CONCATENATION,
    USER_NULL_CHECK,
    Loop,
    all_fixed,
    make_state,
    two_rounds,
)

from fixloop.contracts.coordinator import CoordinatorOutput
from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.report.coordinator import coordinator_output
from fixloop.report.markdown import markdown
from fixloop.review.views import summary

PASSED_STEP = {"status": "passed", "duration_ms": 10, "exit_code": 0}


def success_results(counts: dict[str, int]) -> list[dict[str, Any]]:
    return [
        {"agent": agent, "status": "success", "issues_count": counts.get(agent, 0)}
        for agent in REVIEWER_AGENTS
    ]


def test_coordinator_output_exact() -> None:
    loop = two_rounds()
    loop.record("review-fixer", all_fixed(["FL-002"]))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({SFH: [OUTDATED_COMMENT]})
    assert loop.next()["termination_reason"] == "no_fixable_issues"
    a_ref = {
        "id": "FL-001",
        "file": "src/app.py",
        "description": "Missing null check on `user`",
        "line": 10,
        "severity": "high",
        "category": "bug",
        "confidence": 90,
        "agents": [CR, SFH],
        "auto_fixable": True,
    }
    b_ref = {
        "id": "FL-002",
        "file": "src/app.py",
        "description": "SQL built by string concatenation",
        "line": 33,
        "severity": "critical",
        "category": "security",
        "confidence": 90,
        "agents": [CR],
        "auto_fixable": True,
    }
    c_ref = {
        "id": "FL-004",
        "file": "src/app.py",
        "description": "Broad except hides errors",
        "line": 80,
        "severity": "high",
        "category": "error-handling",
        "confidence": 90,
        "agents": [SFH],
        "auto_fixable": False,
    }
    low_ref = {
        "id": "FL-003",
        "file": "src/app.py",
        "description": "Comment is outdated",
        "line": 50,
        "severity": "low",
        "category": "comments",
        "confidence": 60,
        "agents": [SFH],
        "auto_fixable": True,
    }
    expected = {
        "status": "partial",  # finished, with FL-003 left for a person
        "agent": "review-coordinator",
        "verification": {"tests": PASSED_STEP, "lint": PASSED_STEP, "typecheck": PASSED_STEP},
        "review_iterations": [
            {
                "iteration": 1,
                "agents_results": success_results({CR: 2, SFH: 2}),
                "issues_found": 3,
                "fixable_issues": 2,
                "fix_result": {"attempted": 2, "succeeded": 2, "failed": 0},
                "resolved_issues": [],
                "introduced_issues": [],
                "persisting_issues": [],
                "removed_by_verifier": [],
            },
            {
                "iteration": 2,
                "agents_results": success_results({CR: 1, SFH: 2}),
                "issues_found": 3,
                "fixable_issues": 1,
                "fix_result": {"attempted": 1, "succeeded": 1, "failed": 0},
                "resolved_issues": ["FL-001"],
                "introduced_issues": ["FL-004"],
                "persisting_issues": ["FL-002", "FL-003"],
                "removed_by_verifier": [],
            },
            {
                "iteration": 3,
                "agents_results": success_results({SFH: 1}),
                "issues_found": 1,
                "fixable_issues": 0,
                "resolved_issues": ["FL-002", "FL-004"],
                "introduced_issues": [],
                "persisting_issues": ["FL-003"],
                "removed_by_verifier": [],
            },
        ],
        "summary": {
            "total_iterations": 3,
            "initial_issues": 3,
            "final_issues": 1,
            "fixed_issues": 3,
            "termination_reason": "no_fixable_issues",
        },
        "fixed_issues": [a_ref, b_ref, c_ref],
        "remaining_issues": [low_ref],
        "introduced_issues": [],
        "positive_observations": [],
        "files_modified": ["src/app.py"],
    }
    assert coordinator_output(loop.state) == expected


def test_introduced_and_remaining_after_max_iterations() -> None:
    loop = Loop(make_state(use_verifier=False, max_review_iterations=1))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({CR: [USER_NULL_CHECK]})
    assert loop.next()["action"] == "fix"
    loop.record("review-fixer", all_fixed(["FL-001"]))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({CR: [SQL_CONCATENATION]})
    stop = loop.next()
    assert stop["termination_reason"] == "max_iterations"
    output = coordinator_output(loop.state)
    assert output["status"] == "partial"
    assert [item["id"] for item in output["remaining_issues"]] == ["FL-002"]
    assert [item["id"] for item in output["introduced_issues"]] == ["FL-002"]
    assert [item["id"] for item in output["fixed_issues"]] == ["FL-001"]


def test_no_changes_shape_exact() -> None:
    loop = Loop(make_state(changed_files=()))
    loop.next()
    skipped = {"status": "skipped", "reason": "no_changes"}
    assert coordinator_output(loop.state) == {
        "status": "success",
        "agent": "review-coordinator",
        "verification": {"tests": skipped, "lint": skipped, "typecheck": skipped},
        "review_iterations": [],
        "summary": {
            "total_iterations": 0,
            "initial_issues": 0,
            "final_issues": 0,
            "fixed_issues": 0,
            "termination_reason": "no_changes",
        },
        "message": "No changed files to review.",
    }


def test_insufficient_coverage_shape_exact() -> None:
    loop = Loop(make_state())
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({}, agents=REVIEWER_AGENTS[:3])
    loop.next()
    failed = [
        {
            "agent": agent,
            "status": "failed",
            "error": {
                "code": "NULL_RESPONSE",
                "message": f"Agent {agent} returned nothing",
                "phase": "execution",
                "recoverable": True,
                "stack_trace": None,
            },
        }
        for agent in REVIEWER_AGENTS[3:]
    ]
    output = coordinator_output(loop.state)
    # A failed review still reports what it found (nothing, here) and which rounds it ran.
    assert (output["remaining_issues"], output["summary"]["total_iterations"]) == ([], 1)
    assert {key: output[key] for key in ("status", "agent", "error")} == {
        "status": "failed",
        "agent": "review-coordinator",
        "error": {
            "code": "INSUFFICIENT_COVERAGE",
            "message": "Only 3/6 review agents succeeded (at least 4 required)",
            "failed_agents": failed,
            "suggestion": "Check why the failed agents failed, fix the cause and run the review again.",
        },
    }
    assert "INSUFFICIENT_COVERAGE" in markdown(loop.state)


def test_outputs_validate_as_coordinator_output_while_running() -> None:
    loop = two_rounds()
    output = coordinator_output(loop.state)
    CoordinatorOutput.model_validate(output)
    assert output["summary"]["termination_reason"] is None
    assert output["message"] == "The review is still running (last action: fix)."
    unstarted = coordinator_output(make_state())
    assert unstarted["message"] == "The review has not started."


def test_a_run_that_ended_without_a_review_phase_reports_its_own_end() -> None:
    ended = {**make_state(), "workflow": "bugfix", "status": "success"}
    ended["flow"] = {"outcome": {"status": "success", "reason": "fixed"}}
    assert coordinator_output(ended) == {
        "status": "success",
        "agent": "review-coordinator",
        "review_iterations": [],
        "summary": summary(None),
        "message": "The run ended success (fixed) without a review phase.",
    }
    failed = {**make_state(), "workflow": "ci", "status": "failed"}
    failed["flow"] = {
        "outcome": {
            "status": "failed",
            "reason": "LOG_UNREADABLE",
            "error": {"code": "LOG_UNREADABLE", "message": "x"},
        }
    }
    assert coordinator_output(failed) == {
        "status": "failed",
        "agent": "review-coordinator",
        "error": {"code": "LOG_UNREADABLE", "message": "x"},
    }
