"""The review-fixer's step: counts, files, a fixer that fails."""

from __future__ import annotations

from helpers_review import (
    CR,
    A,
    B,
    C,
    fixer_doc,
    open_review,
)


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
