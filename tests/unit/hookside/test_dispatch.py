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


def result(agent: str, ts: int, tool_use_id: str | None = None) -> dict[str, Any]:
    return {"kind": "result", "agent": agent, "ts_ms": ts, "tool_use_id": tool_use_id or f"t-{agent}"}


def call(agent: str, step: int | None = 3, ts: int = AT, tool_use_id: str | None = None) -> dict[str, Any]:
    line = {"kind": "call", "agent": agent, "ts_ms": ts, "tool_use_id": tool_use_id or f"t-{agent}"}
    return line if step is None else {**line, "step": step}


def test_the_model_a_pending_dispatch_asks_for() -> None:
    view = run_view(dispatch_state(models={"code-reviewer": "haiku"}))
    assert dispatch.model_for(view, "code-reviewer") == "haiku"
    assert dispatch.model_for(view, "test-analyzer") is None
    assert dispatch.model_for(view, "review-fixer") is None
    closed = run_view(dispatch_state(closed=True, models={"code-reviewer": "haiku"}))
    assert dispatch.model_for(closed, "code-reviewer") is None
    assert dispatch.model_for(run_view({}), "code-reviewer") is None


CR, TA = "code-reviewer", "test-analyzer"


@pytest.mark.parametrize(
    ("records", "complete"),
    [
        ([call(CR), call(TA), result(CR, AT), result(TA, AT + 5)], True),
        ([call(CR), call(TA), result(CR, AT), {"kind": "stop", "agent": TA, "ts_ms": AT + 5}], False),
        ([call(CR), result(CR, AT)], True),  # TA never called: the engine hands it out again
        ([call(CR, step=2), result(CR, AT)], False),  # a call of an earlier step
        ([call(CR, step=None, ts=AT - 1), result(CR, AT)], False),  # an old line: before the step
        ([call(CR, step=None, ts=AT + 1), result(CR, AT + 2)], True),  # an old line: in the step
        ([call(CR), call(TA), result(CR, AT), result(TA, AT), result("x", AT)], True),
        ([result(CR, AT), result(TA, AT)], False),  # results without a call of this step
        ([], False),
    ],
)
def test_a_dispatch_is_complete_when_every_call_made_in_it_has_returned(
    records: list[dict[str, Any]], complete: bool
) -> None:
    view = run_view(dispatch_state())
    assert view.dispatch is not None
    assert dispatch.complete(view.dispatch, records) is complete


def test_a_dispatch_of_the_same_agent_twice_needs_both_results() -> None:
    twice = DispatchView(1, AT, False, ((CR, f"fixloop:{CR}", None),) * 2)
    made = [call(CR, step=1, tool_use_id="t1"), call(CR, step=1, tool_use_id="t2")]
    assert not dispatch.complete(twice, [*made, result(CR, AT, "t1")])
    assert dispatch.complete(twice, [*made, result(CR, AT, "t1"), result(CR, AT + 1, "t2")])


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
    ledger.append(found.run_dir, call("code-reviewer", step=1))
    ledger.append(found.run_dir, call("test-analyzer", step=1))
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
