"""Batches of bounded size: a round of 60 fixable findings with max_findings_per_batch 25 is verified in
three verifier calls and fixed in three fixer calls, in finding order, within one snapshot."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from helpers_review import CR, FakeEffects, Loop, fixer_doc, issue, make_state, verifier_doc

from fixloop.core.errors import FixloopError
from fixloop.review.batches import batch_count, current_batch
from fixloop.review.prompts import issue_for_agent
from fixloop.review.views import status_document
from fixloop.workflows.review_phase import _batch_label

FINDINGS = 60
SIZE = 25
INVALID = {"code": "SCHEMA_VIOLATION", "message": "1 violation", "violations": []}


@dataclass
class LedgerEffects(FakeEffects):
    """FakeEffects with a hook ledger: `touched` is what recorded edits wrote; calls are counted."""

    touched: list[str] = field(default_factory=list)
    compared: int = 0
    ledger_reads: int = 0

    def changed_since(self, snapshot: Mapping[str, Any]) -> list[str]:
        self.compared += 1
        return list(self.changed)

    def touched_since(self, snapshot: Mapping[str, Any]) -> list[str]:
        self.ledger_reads += 1
        return list(self.touched)


def sixty(**config: Any) -> Loop:
    """A loop whose round 1 has 60 fixable findings (one file each), waiting for its first batch."""
    config.setdefault("max_findings_per_batch", SIZE)
    state = make_state([f"src/m{n:02d}.py" for n in range(FINDINGS)], **config)
    loop = Loop(state, LedgerEffects())
    loop.next()
    loop.verify(True)
    assert loop.next()["action"] == "review"
    found = [issue(f"X{n}", 1, f"Bug number {n}", file=f"src/m{n:02d}.py") for n in range(FINDINGS)]
    loop.review({CR: found})
    return loop


def each_fixed(issue_ids: Sequence[str], files: Mapping[str, str]) -> dict[str, Any]:
    """A fixer answer: every issue succeeded, each with its own file."""
    results = [{"issue_id": i, "status": "succeeded", "files": [files[i]]} for i in issue_ids]
    modified = sorted(files[i] for i in issue_ids)
    return {"status": "success", "agent": "review-fixer", "results": results, "files_modified": modified}


def ids(action: Mapping[str, Any]) -> list[str]:
    return [str(item["id"]) for item in action["issues"]]


def slices(all_ids: Sequence[str]) -> list[list[str]]:
    return [list(all_ids[0:25]), list(all_ids[25:50]), list(all_ids[50:60])]


def test_batch_arithmetic() -> None:
    assert [batch_count(n, 25) for n in (0, 1, 25, 26, 50, 60)] == [1, 1, 1, 2, 2, 3]
    step = {"batch": 3, "batches": 3, "batch_size": 25}
    assert current_batch([str(n) for n in range(60)], step) == [str(n) for n in range(50, 60)]
    assert current_batch(["a", "b"], {}) == ["a", "b"]  # a step from before batches: one batch of all
    assert _batch_label({"batch": 2, "batches": 3}) == ", batch 2/3"
    assert _batch_label({"batch": 1, "batches": 1}) == ""


def test_sixty_findings_are_verified_in_three_batches_with_a_failing_middle_batch_retried() -> None:
    loop = sixty(use_verifier=True)
    first = loop.next()
    fixable = list(loop.review_doc["rounds"][0]["fixable"])
    assert fixable == sorted(fixable) and len(fixable) == FINDINGS
    expected = slices(fixable)
    assert (first["action"], first["batch"], first["batches"]) == ("verify_findings", 1, 3)
    assert ids(first) == expected[0]
    assert "round 1, batch 1/3 before they are fixed" in first["prompt"]
    # batch 1 deletes one of its own findings and names one of batch 2's: that one is not its to delete
    loop.record("review-verifier", verifier_doc(90, {expected[0][3]: "not a bug", expected[1][0]: "x"}))

    second = loop.next()
    assert (second["batch"], ids(second)) == (2, expected[1])
    unknown = [w for w in loop.of_type("WARNING") if w["code"] == "VERIFIER_UNKNOWN_ISSUES"]
    assert [w["message"] for w in unknown] == [
        f"The verifier named issue ids it was not given (round 1, batch 1/3): {expected[1][0]}."
    ]
    # batch 2 answers invalid three times: its record refuses a fourth retry, the retry is of batch 2 only
    answers = [loop.record("review-verifier", None, INVALID) for _ in range(3)]
    assert [(a["attempt"], a["retry"]) for a in answers] == [(1, True), (2, True), (3, False)]
    again = loop.next()
    assert (again["action"], again["batch"], ids(again)) == ("verify_findings", 2, expected[1])
    assert "RETRY (attempt 2)" in again["prompt"]
    assert loop.record("review-verifier", verifier_doc(40, {expected[1][1]: "wrong line"}))["attempt"] == 1

    third = loop.next()
    assert (third["batch"], ids(third)) == (3, expected[2])
    assert "RETRY" not in third["prompt"]
    status = status_document(loop.state)["round"]["verifier"]
    assert (status["batch"], status["batches"], status["dispatches"], status["done"]) == (3, 3, 1, False)
    loop.record("review-verifier", verifier_doc(60, missing=["an unchecked return value"]))

    fix = loop.next()
    assert fix["action"] == "fix"
    rnd = loop.review_doc["rounds"][0]
    verifier = rnd["verifier"]
    # the finding-weighted mean: (90*25 + 40*25 + 60*10) / 60 = 64.2
    assert (verifier["score"], verifier["quality_level"]) == (64, "ACCEPTABLE")
    assert [(s["batch"], s["issues"], s["score"]) for s in verifier["batch_scores"]] == [
        (1, 25, 90),
        (2, 25, 40),
        (3, 10, 60),
    ]
    assert rnd["removed_by_verifier"] == [expected[0][3], expected[1][1]]
    assert rnd["removed_details"] == {expected[0][3]: "not a bug", expected[1][1]: "wrong line"}
    assert len(rnd["fixable"]) == FINDINGS - 2
    assert [d["description"] for d in verifier["missing_issues"]] == ["an unchecked return value"]
    failures = [e for e in loop.of_type("AGENT_FAILURE") if e["agent"] == "review-verifier"]
    assert [(e["error_code"], e["recoverable"]) for e in failures] == [("SCHEMA_VIOLATION", True)]
    outputs = [
        e for e in loop.of_type("AGENT_IO") if e["agent"] == "review-verifier" and e["direction"] == "output"
    ]
    assert len(outputs) == 3  # one per batch answered


def test_a_middle_batch_whose_verifier_keeps_failing_goes_on_unverified_and_the_others_count() -> None:
    loop = sixty(use_verifier=True)
    loop.next()
    expected = slices(loop.review_doc["rounds"][0]["fixable"])
    loop.record("review-verifier", verifier_doc(80, {expected[0][0]: "not a bug"}))
    dispatched = [ids(loop.next()) for _ in range(3)]  # batch 2, recorded nothing, three times
    assert dispatched == [expected[1]] * 3
    third = loop.next()
    assert (third["batch"], ids(third)) == (3, expected[2])
    loop.record("review-verifier", verifier_doc(60))
    fix = loop.next()
    assert fix["action"] == "fix"
    rnd = loop.review_doc["rounds"][0]
    assert rnd["verifier"]["unverified_batches"] == [2]
    assert rnd["verifier"]["unavailable"] is False
    assert rnd["verifier"]["score"] == round((80 * 25 + 60 * 10) / 35)
    assert rnd["removed_by_verifier"] == [expected[0][0]]
    assert expected[1][0] in rnd["fixable"]  # batch 2's findings go on unverified
    (warning,) = [w for w in loop.of_type("WARNING") if w["code"] == "VERIFIER_UNAVAILABLE"]
    assert warning["message"] == (
        "The review verifier failed 3 times on round 1, batch 2/3; its 25 finding(s) are used unverified."
    )


def test_a_mean_below_the_pass_score_sends_the_whole_review_back() -> None:
    loop = sixty(use_verifier=True, max_quality_retries=1)
    loop.next()
    loop.record("review-verifier", verifier_doc(30, weaknesses=["vague"]))
    loop.next()
    loop.record("review-verifier", verifier_doc(30, weaknesses=["vague", "no lines"]))
    loop.next()
    loop.record("review-verifier", verifier_doc(90))
    again = loop.next()  # (30*25 + 30*25 + 90*10) / 60 = 40
    assert (again["action"], again["attempt"]) == ("review", 2)
    assert again["task"]["retry_context"]["previous_errors"] == [
        "QUALITY_TOO_LOW: review quality score 40/100 (POOR) is below 50; weaknesses: vague; no lines"
    ]
    rnd = loop.review_doc["rounds"][0]
    assert rnd["passes"][0]["quality_score"] == 40
    assert rnd["verifier"] is None


def test_sixty_findings_are_fixed_in_three_batches_and_claims_are_checked_once_after_the_last() -> None:
    loop = sixty(use_verifier=False)
    loop.state["claude_session_id"] = "s-1"  # a run inside Claude Code: the fixer's claims are checked
    effects = loop.effects
    assert isinstance(effects, LedgerEffects)
    first = loop.next()
    issues = {i["id"]: i for i in loop.review_doc["rounds"][0]["issues"]}
    expected = slices(loop.review_doc["rounds"][0]["fixable"])
    assert (first["action"], first["batch"], first["batches"]) == ("fix", 1, 3)
    assert first["issues"] == [issue_for_agent(issues[i]) for i in expected[0]]
    assert "fix the 25 issue(s) of review round 1, batch 1/3." in first["prompt"]
    assert len(effects.snapshots) == 1
    files = {i: issues[i]["file"] for i in issues}
    answer = each_fixed(expected[0], files)
    answer["results"].append({"issue_id": expected[1][0], "status": "succeeded", "files": []})
    loop.record("review-fixer", answer)  # a result for another batch's issue is not this batch's to claim

    second = loop.next()
    assert (second["batch"], ids(second)) == (2, expected[1])
    assert (effects.compared, effects.ledger_reads) == (0, 0)  # nothing is measured between batches
    failed = {
        "status": "failed",
        "agent": "review-fixer",
        "error": {"code": "TOOL_ERROR", "message": "Edit failed", "phase": "execution", "recoverable": False},
    }
    loop.record("review-fixer", failed)

    third = loop.next()
    assert (third["batch"], ids(third)) == (3, expected[2])
    status = status_document(loop.state)["round"]["fix"]
    assert (status["batch"], status["batches"], status["done"]) == (3, 3, False)
    # batch 3 claims all ten; the ledger backs only nine of them
    loop.record("review-fixer", each_fixed(expected[2], files))
    effects.touched = [files[i] for i in [*expected[0], *expected[2][:9]]]
    effects.changed = list(effects.touched)

    verify = loop.next()
    assert verify["action"] == "verify"
    assert (len(effects.snapshots), effects.compared, effects.ledger_reads) == (1, 1, 1)
    fix = loop.review_doc["rounds"][0]["fix"]
    assert fix["done"] is True
    assert fix["result"] == {"attempted": 35, "succeeded": 34, "failed": 1}
    assert [r["issue_id"] for r in fix["results"]] == [*expected[0], *expected[2]]
    assert fix["error"] == {"code": "TOOL_ERROR", "message": "batch 2/3: Edit failed"}
    assert fix["files_modified"] == sorted(effects.changed)
    (failure,) = loop.of_type("AGENT_FAILURE")
    assert (failure["agent"], failure["error_code"], failure["recoverable"]) == (
        "review-fixer",
        "TOOL_ERROR",
        False,
    )
    (unverified,) = [w for w in loop.of_type("WARNING") if w["code"] == "FIX_UNVERIFIED"]
    assert unverified["issue_ids"] == [expected[2][9]]
    start, end = loop.of_type("REVIEW_FIX_ITERATION")
    assert (start["direction"], start["fixable_issues"]) == ("start", FINDINGS)
    assert (end["direction"], end["succeeded"], end["remaining"]) == ("end", 34, FINDINGS - 34)


def test_a_fixer_batch_answer_is_recorded_for_that_batch_and_none_after_the_last() -> None:
    loop = sixty(use_verifier=False)
    loop.next()
    expected = slices(loop.review_doc["rounds"][0]["fixable"])
    assert loop.record("review-fixer", None, INVALID)["attempt"] == 1
    loop.record("review-fixer", fixer_doc({i: "succeeded" for i in expected[0]}))
    loop.verify(True)  # a `fixloop verify` between batches: no slot waits for it yet
    assert loop.review_doc["rounds"][0]["verification"] is None
    assert loop.next()["batch"] == 2
    second = loop.record("review-fixer", fixer_doc({i: "succeeded" for i in expected[1]}))
    assert (second["attempt"], second["valid"]) == (1, True)  # batch 2's record starts afresh
    assert loop.review_doc["rounds"][0]["fix"]["record"]["attempts"] == 1
    assert loop.next()["batch"] == 3  # the next batch is dispatched, not the verification
    loop.record("review-fixer", fixer_doc({i: "succeeded" for i in expected[2]}))
    assert loop.next()["action"] == "verify"
    with pytest.raises(FixloopError) as refused:
        loop.record("review-fixer", fixer_doc({expected[2][0]: "succeeded"}))
    assert refused.value.code == "UNEXPECTED_AGENT_RESULT"
    assert loop.review_doc["rounds"][0]["fix"]["result"] == {"attempted": 60, "succeeded": 60, "failed": 0}


def test_a_round_within_one_batch_is_one_call_as_before() -> None:
    loop = sixty(use_verifier=True, max_findings_per_batch=FINDINGS)
    verify = loop.next()
    assert (verify["batch"], verify["batches"], len(verify["issues"])) == (1, 1, FINDINGS)
    assert "batch" not in verify["prompt"].split("\n")[0]
