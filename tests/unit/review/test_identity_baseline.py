"""A baseline written under the older fingerprint rule (names, strings and numbers replaced by
placeholders) still works: its entries match by file, line, category and description under the current
identity, so the accepted finding stays dropped, moved or re-worded, and a finding that names another
identifier is no longer dropped with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers_review import CR, SFH, Loop, issue, make_state

from fixloop.review.identity import Candidate
from fixloop.runs.baseline import BASELINE_FILE, load_baseline

# Two entries exactly as the older rule wrote them; both fingerprints are what it computed.
OLD_BASELINE = {
    "version": 1,
    "findings": [
        {
            "fingerprint": "5afa85dff717fb9fe343",
            "file": "src/app.py",
            "line": 12,
            "category": "security",
            "description": "SQL built by string concatenation",
            "reason": "Only runs on constant input",
            "issue_id": "FL-001",
            "run_id": "1a2b3c4d",
            "added_at": "2025-12-06T05:46:40.000Z",
        },
        {
            "fingerprint": "6282f2d1f3803a20b65f",
            "file": "src/app.py",
            "line": 1,
            "category": "bug",
            "description": "`user_id` is never validated before use",
            "reason": "validated by the caller",
            "issue_id": "FL-002",
            "run_id": "1a2b3c4d",
            "added_at": "2025-12-06T05:46:40.000Z",
        },
    ],
}


def review_round(
    root: Path, reports: dict[str, list[dict[str, Any]]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run one review round in `root` with `reports`: (the round's record, the next action)."""
    state = make_state(use_verifier=False)
    state["project_dir"] = str(root)
    loop = Loop(state)
    loop.next()
    loop.verify(True)
    assert loop.next()["action"] == "review"
    loop.review(reports)
    action = loop.next()
    rnd: dict[str, Any] = loop.review_doc["rounds"][0]
    return rnd, action


def test_an_old_baseline_still_drops_its_findings_and_no_longer_drops_their_neighbours(
    tmp_path: Path,
) -> None:
    (tmp_path / BASELINE_FILE).parent.mkdir()
    (tmp_path / BASELINE_FILE).write_text(json.dumps(OLD_BASELINE, indent=2))
    entries = load_baseline(tmp_path)  # the older file is still valid
    sql = issue("S", 15, "SQL is built by concatenating strings", category="security", severity="critical")
    user_id = issue("U", 2, "User_Id is not validated before being used.")
    email = issue("E", 3, "`email` is never validated before use")
    # the old fingerprint of `email` is the accepted `user_id` one: the older rule would have dropped it
    assert Candidate.of(email).legacy_fingerprint == entries[1]["fingerprint"]
    assert Candidate.of(sql).fingerprint != entries[0]["fingerprint"]

    rnd, action = review_round(tmp_path, {CR: [sql, user_id, email], SFH: [{**email, "id": "E2", "line": 4}]})

    assert rnd["suppressed"] == {"baseline": 2}
    assert [(item["line"], item["reason"]) for item in rnd["suppressed_findings"]] == [
        (15, "baseline"),
        (2, "baseline"),
    ]
    assert [(item["id"], item["description"], item["agents"]) for item in rnd["issues"]] == [
        ("FL-001", "`email` is never validated before use", [CR, SFH])
    ]
    assert action["action"] == "fix"
    assert [item["id"] for item in action["issues"]] == ["FL-001"]
