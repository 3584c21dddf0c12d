"""What `review publish` reads of a review run the engine kept (its remaining findings, reviewed files,
status, config) and the plan it makes of them against a pull request's diff."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers_review import verifier_doc
from helpers_runs import FakeClock
from workflows.flow_helpers import (
    CR,
    NOT_FIXABLE,
    events,
    next_action,
    record_valid,
    review_project,
    review_round,
    start,
    state,
)

from fixloop.github.diffmap import DiffMap
from fixloop.review.identity import fingerprint
from fixloop.runs import creation
from fixloop.workflows.publish.plan import OwnThread, make_plan
from fixloop.workflows.publish.run import facts_of

VERIFIER = "review-verifier"


def test_publish_reads_the_final_round_of_a_review_run(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project, max_findings=3)
    run_id = start(git_project)
    fake_clock.advance(1)
    next_action(run_id)
    review_round(run_id, {CR: [NOT_FIXABLE]})
    fake_clock.advance(1)
    action = next_action(run_id)
    if action["action"] != "stop":  # the verifier is asked about the round's findings first
        record_valid(run_id, VERIFIER, verifier_doc(90))
        fake_clock.advance(1)
        action = next_action(run_id)
    assert action["action"] == "stop"

    facts = facts_of(state(git_project, run_id))
    assert facts.run_id == run_id and facts.reviewed == ["src/app.py"] and facts.status == "partial"
    assert [(i["id"], i["file"], i["line"], i["description"]) for i in facts.issues] == [
        ("FL-001", "src/app.py", 1, "The module has no docstring")
    ]
    assert facts.config["max_findings"] == 3

    shown = DiffMap(
        [{"filename": "src/app.py", "status": "modified", "patch": "@@ -1 +1 @@\n-x\n+print('hello')\n"}]
    )
    plan = make_plan(facts.issues, facts.config, shown, [], facts.reviewed, lambda path: None, {})
    assert [(c["path"], c["line"], c["side"]) for _i, c in plan.inline] == [("src/app.py", 1, "RIGHT")]
    elsewhere = DiffMap([{"filename": "src/app.py", "status": "modified", "patch": "@@ -5 +5 @@\n-x\n+y\n"}])
    plan = make_plan(facts.issues, facts.config, elsewhere, [], facts.reviewed, lambda path: None, {})
    assert plan.inline == [] and [i["id"] for i in plan.outside_diff] == ["FL-001"]


def test_review_with_pr_ends_with_the_publish_and_its_error_code(
    git_project: Path, fake_clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/fixloop:review --pr 7` (inputs.publish_pr): the engine publishes after the loop; without gh the
    run ends failed with GH_UNAVAILABLE in its log and its final message."""
    review_project(git_project)
    started = creation.start_run("review", root=git_project, git_base="", inputs={"publish_pr": "7"})
    run_id = started["state"]["run_id"]
    no_gh = tmp_path / "bin"
    no_gh.mkdir()
    (no_gh / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    monkeypatch.setenv("PATH", str(no_gh))
    fake_clock.advance(1)
    next_action(run_id)
    review_round(run_id, {CR: [NOT_FIXABLE]})
    fake_clock.advance(1)
    action = next_action(run_id)
    if action["action"] != "stop":
        record_valid(run_id, VERIFIER, verifier_doc(90))
        fake_clock.advance(1)
        action = next_action(run_id)
    assert (action["action"], action["status"]) == ("stop", "failed")
    assert "GH_UNAVAILABLE" in action["message"]
    assert [e["code"] for e in events(git_project, run_id, "ERROR")][:1] == ["GH_UNAVAILABLE"]


def test_one_thread_stands_for_one_finding_only() -> None:
    """Two findings a few lines apart with the same words: the thread of the first does not hide the
    second, which is posted."""
    first = {
        "id": "FL-001",
        "file": "a.py",
        "line": 3,
        "category": "bug",
        "description": "`x` is never checked",
    }
    second = {**first, "id": "FL-002", "line": 5}
    for item in (first, second):
        item["fingerprint"] = fingerprint(item)
    thread = OwnThread(
        "T1", first["fingerprint"], "bug", "a.py", 3, first["description"], False, 1, False, []
    )
    shown = DiffMap([{"filename": "a.py", "status": "added", "patch": "@@ -0,0 +1,9 @@\n" + "+x\n" * 9}])
    plan = make_plan([first, second], {}, shown, [thread], ["a.py"], lambda path: None, {})
    assert [i["id"] for i in plan.already_posted] == ["FL-001"]
    assert [i["id"] for i, _c in plan.inline] == ["FL-002"] and plan.fixed == []
