"""Closing a review pass: coverage, merged issues, stable ids, fixable issues."""

from __future__ import annotations

from helpers_review import (
    CR,
    SFH,
    A,
    B,
    Loop,
    Round,
    Script,
    all_fixed,
    drive,
    failed_reviewer_doc,
    issue,
    make_state,
    only,
    open_review,
    reviewer_doc,
)

from fixloop.core.agent_names import REVIEWER_AGENTS


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
    # Nothing was found, but two reviewers' share of the change went unreviewed.
    assert (doc["status"], doc["termination_reason"]) == ("partial", "no_fixable_issues")
    results = loop.review_doc["rounds"][0]["agents_results"]
    assert results[4]["error"]["code"] == "TIMEOUT"
    assert results[5]["error"]["code"] == "NULL_RESPONSE"


def test_duplicates_are_merged_listing_every_agent() -> None:
    same = issue("X", 12, "Missing await on `save()` call")
    shifted_wording = issue("Y", 14, "missing await on 'save' call", confidence=95, severity="critical")
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
    assert first["description"] == "missing await on 'save' call"  # from the most confident report
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
    moved_a = issue("A2", 13, "No null check on 'user'")  # other words, same identifier
    loop.review({SFH: [moved_b], CR: [moved_a]})
    doc = loop.next()
    assert [(item["id"], item["line"]) for item in doc["issues"]] == [("FL-001", 13), ("FL-002", 36)]


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
