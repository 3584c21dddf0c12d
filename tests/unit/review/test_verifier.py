"""The review-verifier's step: deletions and the quality gate's re-reviews."""

from __future__ import annotations

from helpers_review import (
    CR,
    A,
    B,
    Loop,
    Round,
    Script,
    drive,
    make_state,
    only,
    verifier_doc,
)


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
