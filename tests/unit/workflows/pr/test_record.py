"""workflows.pr.record: a run started at a later phase takes what it lacks from the right earlier run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers_runs import FakeClock, git

from fixloop.runs import lifecycle
from fixloop.runs.creation import start_run
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.pr.record import earlier_run, prepared


def run(project: Path, clock: FakeClock, pr: str, record: dict[str, Any] | None = None) -> str:
    clock.advance(60)
    state = start_run("pr-review", root=project, claude_session_id="", inputs={"pr": pr}, clock=clock)[
        "state"
    ]
    run_id = str(state["run_id"])
    if record is not None:
        lifecycle.store_for(project, run_id, clock).update(lambda current: current.update(pr_review=record))
    return run_id


def pr(number: int, owner: str = "octo", head_ref: str = "fix/parser") -> dict[str, Any]:
    return {"number": number, "owner": owner, "name": "demo", "host": "github.com", "head_ref": head_ref}


def drafted(number: int, owner: str = "octo", head_ref: str = "fix/parser") -> dict[str, Any]:
    return {
        "pr": pr(number, owner, head_ref),
        "kept": [{"id": "T1"}],
        "classifications": {"T1": {"label": "answer"}},
        "fixes": {},
        "commit": None,
        "drafts": [{"thread_id": "T1", "body": f"reply on #{number}"}],
        "posted": {"T1": {"comment_id": "C1"}},
    }


def context(project: Path, run_id: str, number: int = 6) -> PhaseContext:
    return PhaseContext(lifecycle.load_run(project, run_id), number, 0, None)


def test_the_latest_earlier_run_of_the_same_pull_request_gives_its_drafts(git_project: Path) -> None:
    clock = FakeClock()
    first = run(git_project, clock, "7", drafted(7))
    latest = run(git_project, clock, "7", drafted(7))
    run(git_project, clock, "8", drafted(8))  # another pull request
    run(git_project, clock, "7", {"pr": pr(7)})  # drafted nothing
    assert first != latest
    current = run(git_project, clock, "7")
    ctx = context(git_project, current)
    record = prepared(ctx, "drafts")
    assert record is not None and record["inherited_from"] == {"drafts": latest}
    assert record["drafts"] == [{"thread_id": "T1", "body": "reply on #7"}]
    assert record["posted"] == {"T1": {"comment_id": "C1"}}
    assert [event[1] for event in ctx.events] == ["DATA_COLLECTED"]
    assert ctx.events[0][2]["summary"]["copied"] == [
        "pr", "kept", "classifications", "fixes", "commit", "drafts", "posted",
    ]  # fmt: skip


def test_a_url_matches_the_repository_and_nothing_matches_the_branch(git_project: Path) -> None:
    clock = FakeClock()
    ours = run(git_project, clock, "7", drafted(7))
    run(git_project, clock, "7", drafted(7, owner="fork"))
    by_url = run(git_project, clock, "https://github.com/OCTO/demo/pull/7")
    assert (earlier_run(git_project, lifecycle.load_run(git_project, by_url), "drafts") or {})[
        "run_id"
    ] == ours
    git(git_project, "checkout", "-q", "-b", "feature/x")
    on_branch = run(git_project, clock, "9", drafted(9, head_ref="feature/x"))
    by_branch = run(git_project, clock, "")
    found = earlier_run(git_project, lifecycle.load_run(git_project, by_branch), "drafts")
    assert found is not None and found["run_id"] == on_branch


def test_what_this_run_set_is_never_replaced(git_project: Path) -> None:
    clock = FakeClock()
    run(git_project, clock, "7", {**drafted(7), "commit": {"sha": "abc", "files": ["src/app.py"]}})
    current = run(git_project, clock, "7", {"pr": pr(7), "commit": None})
    record = prepared(context(git_project, current, 7), "commit")
    assert record is not None and record["commit"] is None and "inherited_from" not in record
    assert prepared(context(git_project, run(git_project, clock, "99"), 6), "drafts") is None
