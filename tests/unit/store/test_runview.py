"""run_view: what the hooks see of a run, read from states the real engine wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers_imports import modules_loaded_by
from helpers_review import Loop, all_fixed, issue, make_state
from helpers_runs import FakeClock

from fixloop.runs import creation, ending, lifecycle, phasebook
from fixloop.store import logwriter
from fixloop.store.runview import DispatchView, LogSettings, RunView, run_view

A = issue("CR-1", 2, "Off by one.")


def started(root: Path, clock: FakeClock, **options: Any) -> dict[str, Any]:
    state: dict[str, Any] = creation.start_run("bugfix", root=root, clock=clock, **options)["state"]
    return state


def current(root: Path, run_id: str) -> dict[str, Any]:
    return lifecycle.load_run(root, run_id)


def test_a_new_run(git_project: Path) -> None:
    clock = FakeClock()
    state = started(git_project, clock, level="debug")
    files = state["logging"]["log_files"]
    assert run_view(state) == RunView(
        run_id=state["run_id"],
        running=True,
        phase=None,
        review_round=None,
        log=LogSettings(
            enabled=True,
            level="debug",
            session_id=state["run_id"],
            jsonl_path=files["jsonl"],
            text_path=files["text"],
        ),
    )


def test_the_current_phase_is_the_open_one(git_project: Path) -> None:
    clock = FakeClock(step=1.0)
    run_id = started(git_project, clock)["run_id"]
    assert run_view(current(git_project, run_id)).phase is None
    phasebook.phase_start(git_project, run_id, 0, clock=clock)
    assert run_view(current(git_project, run_id)).phase == "phase_0"
    phasebook.phase_end(git_project, run_id, 0, "success", clock=clock)
    assert run_view(current(git_project, run_id)).phase is None
    phasebook.phase_start(git_project, run_id, 1, clock=clock)
    assert run_view(current(git_project, run_id)).phase == "phase_1"


def test_an_ended_run_is_not_running(git_project: Path) -> None:
    clock = FakeClock()
    run_id = started(git_project, clock)["run_id"]
    ending.end_run(git_project, run_id, "failed", clock=clock)
    view = run_view(current(git_project, run_id))
    assert (view.run_id, view.running) == (run_id, False)


def test_a_run_without_logging(git_project: Path) -> None:
    state = started(git_project, FakeClock(), log=False)
    assert run_view(state).log == LogSettings(False, "info", state["run_id"], None, None)


def test_the_review_round_is_the_last_rounds_iteration() -> None:
    loop = Loop(make_state(use_verifier=False))
    assert run_view(loop.state).review_round is None
    assert loop.next()["action"] == "verify"
    loop.verify(True)
    assert loop.next()["action"] == "review"
    assert run_view(loop.state).review_round == 1
    loop.review({"code-reviewer": [A]})
    assert loop.next()["action"] == "fix"
    loop.record("review-fixer", all_fixed(["CR-1"]))
    assert loop.next()["action"] == "verify"
    loop.verify(True)
    assert loop.next()["action"] == "review"
    assert run_view(loop.state).review_round == 2
    assert run_view(loop.state).log.enabled is False  # the machine's test states carry no logging


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({}, RunView("", False, None, None, LogSettings(False, "info", "", None, None))),
        (
            {
                "run_id": "abcd1234",
                "status": "running",
                "ended_at_ms": 5,
                "open_phases": {"x": 1, "3": "later", "2": 7},
                "review": {"rounds": [{"iteration": 1}, {"iteration": True}]},
                "logging": {
                    "enabled": "yes",
                    "level": "trace",
                    "session_id": "",
                    "log_files": {"jsonl": "", "text": 3},
                },
            },
            RunView("abcd1234", False, "phase_2", None, LogSettings(False, "info", "abcd1234", None, None)),
        ),
        (
            {"run_id": 7, "status": "running", "review": {"rounds": [{"iteration": 0}]}, "logging": []},
            RunView("", True, None, None, LogSettings(False, "info", "", None, None)),
        ),
    ],
)
def test_malformed_parts_read_as_absent(state: dict[str, Any], expected: RunView) -> None:
    assert run_view(state) == expected


def test_a_view_is_read_only() -> None:
    view = run_view({"run_id": "abcd1234", "status": "running"})
    with pytest.raises(AttributeError):
        view.running = False  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del view.log  # type: ignore[misc]
    assert "running=True" in repr(view)
    assert hash(view) == hash(run_view({"run_id": "abcd1234", "status": "running"}))


def test_the_log_levels_are_the_log_writers() -> None:
    assert run_view({"logging": {"level": "debug"}}).log.level == "debug"
    assert logwriter.LOG_LEVELS == ("info", "debug")


def test_building_a_view_loads_no_heavy_module() -> None:
    code = (
        "from fixloop.store.runview import run_view\n"
        "view = run_view({'run_id': 'abcd1234', 'status': 'running', 'open_phases': {'1': 5}})\n"
        "assert view.phase == 'phase_1'\n"
    )
    assert modules_loaded_by(code, ("typing", "dataclasses", "collections", "json", "re", "pathlib")) == []


def test_the_dispatch_and_interactive_flag_as_the_engine_writes_them(git_project: Path) -> None:
    from fixloop.workflows.driver import next_action

    clock = FakeClock()
    state = creation.start_run("review", root=git_project, clock=clock, changed_files=["src/app.py"])["state"]
    view = run_view(state)
    assert (view.dispatch, view.interactive) == (None, False)
    next_action(git_project, state["run_id"], clock=clock)
    saved = current(git_project, state["run_id"])
    written = saved["flow"]["dispatch"]
    dispatch = run_view(saved).dispatch
    assert dispatch == DispatchView(
        written["id"],
        written["at_ms"],
        False,
        tuple((call["agent"], call["subagent_type"], call["model"]) for call in written["calls"]),
    )
    assert [call[0] for call in dispatch.calls] == [
        "code-reviewer",
        "silent-failure-hunter",
        "code-simplifier",
        "test-analyzer",
        "comment-analyzer",
        "type-design-analyzer",
    ]
    assert run_view({**saved, "interactive": True}).interactive is True


@pytest.mark.parametrize(
    ("flow", "expected"),
    [
        (None, None),
        ({"dispatch": None}, None),
        ({"dispatch": {"id": "1", "at_ms": 5, "calls": []}}, None),
        ({"dispatch": {"id": 1, "at_ms": True, "calls": []}}, None),
        ({"dispatch": {"id": 1, "at_ms": 5, "calls": {}}}, None),
        (
            {
                "dispatch": {
                    "id": 2,
                    "at_ms": 5,
                    "closed": "yes",
                    "calls": [
                        {"agent": "review-fixer", "subagent_type": "fixloop:review-fixer", "model": "opus"},
                        {"agent": "", "model": "x"},
                        "junk",
                        {"agent": "review-verifier", "subagent_type": 3, "model": ""},
                    ],
                }
            },
            DispatchView(
                2,
                5,
                False,
                (
                    ("review-fixer", "fixloop:review-fixer", "opus"),
                    ("review-verifier", "fixloop:review-verifier", None),
                ),
            ),
        ),
        (
            {"dispatch": {"id": 4, "at_ms": 9, "closed": True, "calls": []}},
            DispatchView(4, 9, True, ()),
        ),
    ],
)
def test_a_malformed_dispatch_reads_as_absent(flow: Any, expected: DispatchView | None) -> None:
    view = run_view({"run_id": "abcd1234", "flow": flow, "interactive": 1})
    assert view.dispatch == expected
    assert view.interactive is False
