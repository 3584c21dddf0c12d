"""The pending dispatch as the hooks carry it out: models, tasks, completeness, one delivery."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hook_helpers import fake_engine

from fixloop.hookside import context, dispatch
from fixloop.store import ledger
from fixloop.store.runview import DispatchView, run_view

if TYPE_CHECKING:
    from conftest import BoundRun  # the fixture's type (tests/unit/hookside/conftest.py)

AT = 1_000


def dispatch_state(closed: bool = False, models: dict[str, str] | None = None) -> dict[str, Any]:
    calls = [
        {"agent": agent, "subagent_type": f"fixloop:{agent}", "model": (models or {}).get(agent)}
        for agent in ("code-reviewer", "test-analyzer")
    ]
    return {
        "run_id": "abcd1234",
        "flow": {"dispatch": {"id": 3, "at_ms": AT, "closed": closed, "calls": calls}},
    }


def result(agent: str, ts: int) -> dict[str, Any]:
    return {"kind": "result", "agent": agent, "ts_ms": ts}


def test_the_model_a_pending_dispatch_asks_for() -> None:
    view = run_view(dispatch_state(models={"code-reviewer": "haiku"}))
    assert dispatch.model_for(view, "code-reviewer") == "haiku"
    assert dispatch.model_for(view, "test-analyzer") is None
    assert dispatch.model_for(view, "review-fixer") is None
    closed = run_view(dispatch_state(closed=True, models={"code-reviewer": "haiku"}))
    assert dispatch.model_for(closed, "code-reviewer") is None
    assert dispatch.model_for(run_view({}), "code-reviewer") is None


@pytest.mark.parametrize(
    ("records", "complete"),
    [
        ([result("code-reviewer", AT), result("test-analyzer", AT + 5)], True),
        ([result("code-reviewer", AT), {"kind": "stop", "agent": "test-analyzer", "ts_ms": AT + 5}], False),
        ([result("code-reviewer", AT), result("test-analyzer", AT - 1)], False),  # of an earlier dispatch
        ([result("code-reviewer", AT), result("code-reviewer", AT + 1)], False),
        ([result("code-reviewer", AT), result("test-analyzer", AT), result("x", AT)], True),
        ([], False),
    ],
)
def test_a_dispatch_is_complete_when_every_call_has_a_result_since_it_was_issued(
    records: list[dict[str, Any]], complete: bool
) -> None:
    view = run_view(dispatch_state()).dispatch
    assert view is not None
    assert dispatch.complete(view, records) is complete


def test_a_dispatch_of_the_same_agent_twice_needs_two_results() -> None:
    twice = DispatchView(1, AT, False, (("code-reviewer", "fixloop:code-reviewer", None),) * 2)
    assert not dispatch.complete(twice, [result("code-reviewer", AT)])
    assert dispatch.complete(twice, [result("code-reviewer", AT), result("code-reviewer", AT + 1)])


def test_only_the_first_claim_of_a_dispatch_wins(bound_run: BoundRun) -> None:
    found = context.find_run(bound_run.payload("PostToolUse"))
    assert found is not None
    assert dispatch.claim(found, 2) is True
    assert dispatch.claim(found, 2) is False
    assert dispatch.claim(found, 1) is False  # an older dispatch, seen late
    assert dispatch.claim(found, 3) is True
    assert bound_run.hooks_state()["delivered_dispatch"] == 3


def bind_dispatch(bound_run: BoundRun, agents: tuple[str, ...]) -> None:
    state_file = bound_run.dir / "state.json"
    state = json.loads(state_file.read_text())
    calls = [{"agent": agent, "subagent_type": f"fixloop:{agent}", "model": None} for agent in agents]
    state["flow"] = {"dispatch": {"id": 1, "at_ms": AT, "closed": False, "calls": calls}}
    state_file.write_text(json.dumps(state))


def test_the_next_step_comes_once_when_the_last_result_is_in(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bind_dispatch(bound_run, ("code-reviewer", "test-analyzer"))
    engine = fake_engine(tmp_path / "engine", ["fixloop next (run x, step 2: fix): call this agent"])
    monkeypatch.setenv("FIXLOOP_HOOK_ENGINE", str(engine))
    found = context.find_run(bound_run.payload("PostToolUse"))
    assert found is not None
    ledger.append(found.run_dir, result("code-reviewer", AT + 1))
    assert dispatch.next_if_complete(found, "PostToolUse") is None
    ledger.append(found.run_dir, result("test-analyzer", AT + 2))
    assert (
        dispatch.next_if_complete(found, "PostToolUse")
        == "fixloop next (run x, step 2: fix): call this agent"
    )
    assert dispatch.next_if_complete(found, "PostToolUse") is None
    calls = [json.loads(line) for line in (tmp_path / "engine" / "calls.jsonl").read_text().splitlines()]
    assert [call["argv"] for call in calls] == [["next", bound_run.run_id, "--text"]]


def test_a_task_is_read_only_for_an_agent_of_the_pending_dispatch(bound_run: BoundRun) -> None:
    bind_dispatch(bound_run, ("code-reviewer",))
    tasks = bound_run.dir / "tasks"
    tasks.mkdir()
    (tasks / "code-reviewer.md").write_text("Review src/app.py.\n")
    (tasks / "review-fixer.md").write_text("Fix it.\n")
    found = context.find_run(bound_run.payload("SubagentStart"))
    assert found is not None
    assert dispatch.task_text(found, "code-reviewer") == "Review src/app.py.\n"
    assert dispatch.task_text(found, "review-fixer") is None
    (tasks / "code-reviewer.md").write_text("  \n")
    assert dispatch.task_text(found, "code-reviewer") is None
