from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers_runs import LIB, FakeClock, git, read_events, sha256_tree

from fixloop import __version__
from fixloop.contracts.coordinator import LoopConfig
from fixloop.contracts.events import EVENT_MODELS
from fixloop.core.errors import FixloopError
from fixloop.runs import changed_files, creation, ending, lifecycle, phasebook
from fixloop.store import layout

START_S = 1_765_000_000.0  # 2025-12-06T05:46:40.000Z
START_MS = 1_765_000_000_000


@pytest.fixture(autouse=True)
def no_claude_session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)


def start(root: Path, clock: FakeClock, **options: Any) -> dict[str, Any]:
    workflow = options.pop("workflow", "bugfix")
    state: dict[str, Any] = creation.start_run(workflow, root=root, clock=clock, **options)["state"]
    return state


def jsonl_of(state: dict[str, Any]) -> Path:
    return Path(state["logging"]["log_files"]["jsonl"])


def without_ts(event: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in event.items() if key != "ts"}


def assert_valid_events(events: list[dict[str, Any]]) -> None:
    for event in events:
        EVENT_MODELS[event["type"]].model_validate(event)


def snapshot(root: Path) -> dict[str, str]:
    return sha256_tree(root / ".claude")


# ---- start ---------------------------------------------------------------------------------------


def test_start_writes_state_logs_and_session_start(
    git_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "sess-42")
    (git_project / "src" / "app.py").write_text("changed\n")
    clock = FakeClock(START_S)
    result = creation.start_run(
        "bugfix",
        root=git_project,
        stack="frontend",
        raw_args="--phase=0,1 --verbose login fails",
        command="/fixloop:fix-frontend --phase=0,1 --verbose login fails",
        git_base="",
        clock=clock,
    )
    state = result["state"]
    run_id = state["run_id"]
    stem = f"2025-12-06_054640_frontend_{run_id}"
    logs = git_project / ".claude" / "logs" / "fixloop" / "bugfix"
    assert result["warnings"] == []
    assert result["free_text"] == "login fails"
    assert state == {
        "schema_version": 1,
        "run_id": run_id,
        "workflow": "bugfix",
        "stack": "frontend",
        "status": "running",
        "created_at": "2025-12-06T05:46:40.000Z",
        "updated_at": "2025-12-06T05:46:40.000Z",
        "started_at_ms": START_MS,
        "ended_at_ms": None,
        "project_dir": str(git_project),
        "claude_session_id": "sess-42",
        "command": "/fixloop:fix-frontend --phase=0,1 --verbose login fails",
        "args": {"phase": "0,1", "dry_run": False, "log": True, "verbose": True},
        "free_text": "login fails",
        "inputs": {},
        "interactive": False,
        "dry_run": False,
        "phases": [0, 1],
        "phases_completed": [],
        "open_phases": {},
        "phase_results": [],
        "changed_files": ["src/app.py"],
        "base_ref": "HEAD",
        "config": LoopConfig().model_dump(mode="json"),
        "verification_commands": {
            "tests": {"command": None, "source": None},
            "lint": {"command": None, "source": None},
            "typecheck": {"command": None, "source": None},
        },
        "trust_config": False,
        "no_gate": False,
        "config_sources": [],
        "logging": {
            "enabled": True,
            "level": "debug",
            "session_id": run_id,
            "log_files": {"jsonl": str(logs / f"{stem}.jsonl"), "text": str(logs / f"{stem}.log")},
        },
        "error_count": 0,
        "errors": [],
        "review": {},
        "verification": None,
    }
    assert json.loads(Path(layout.state_path(git_project, run_id)).read_text()) == state
    assert (Path(layout.session_index_dir(git_project)) / "sess-42").read_text() == f"{run_id}\n"
    assert lifecycle.current_run_id(git_project) == run_id
    events = read_events(jsonl_of(state))
    assert events == [
        {
            "ts": "2025-12-06T05:46:40.000Z",
            "level": "I",
            "type": "SESSION_START",
            "session_id": run_id,
            "workflow": "bugfix",
            "stack": "frontend",
            "command": "/fixloop:fix-frontend --phase=0,1 --verbose login fails",
            "args": {"phase": "0,1", "dry_run": False, "log": True, "verbose": True},
            "env": {"project_root": str(git_project), "plugin_version": __version__, "git_branch": "main"},
        }
    ]
    assert_valid_events(events)
    assert (logs / f"{stem}.log").read_text() == (
        f"[2025-12-06 05:46:40.000] INFO | SESSION_START | Bugfix Frontend ({run_id})\n"
    )


def test_direct_options_win_over_the_argument_string(git_project: Path) -> None:
    state = start(
        git_project,
        FakeClock(),
        phase="2",
        log=False,
        level="info",
        raw_args="--phase=0 --log --dry-run text",
    )
    assert state["phases"] == [2]
    assert state["args"] == {"phase": "2", "dry_run": True, "log": False, "verbose": False}
    assert state["logging"] == {
        "enabled": False,
        "level": "info",
        "session_id": state["run_id"],
        "log_files": None,
    }
    assert not (git_project / ".claude" / "logs").exists()


def test_defaults_all_phases_logging_on_no_session(git_project: Path) -> None:
    state = start(git_project, FakeClock(), workflow="pr-review")
    assert state["phases"] == list(range(8))
    assert state["args"] == {"phase": "all", "dry_run": False, "log": True, "verbose": False}
    assert state["claude_session_id"] is None
    assert state["changed_files"] == []
    assert state["base_ref"] is None
    assert Path(state["logging"]["log_files"]["jsonl"]).name.endswith(f"_pr-review_{state['run_id']}.jsonl")
    assert not Path(layout.session_index_dir(git_project)).exists()


def test_explicit_files_are_normalised(git_project: Path) -> None:
    state = start(
        git_project,
        FakeClock(),
        changed_files=["src/app.py", "./src/../README.md", str(git_project / "src" / "app.py"), "new/x.py"],
    )
    assert state["changed_files"] == ["README.md", "new/x.py", "src/app.py"]


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"workflow": "nope"}, "UNKNOWN_WORKFLOW"),
        ({"stack": "mobile"}, "INVALID_STACK"),
        ({"phase": "9"}, "INVALID_PHASE"),
        ({"raw_args": "--phase=9"}, "INVALID_PHASE"),
        ({"raw_args": "--fast"}, "UNKNOWN_ARGUMENT"),
        ({"level": "trace"}, "INVALID_ARGUMENT"),
        ({"changed_files": ["../outside.py"]}, "PATH_OUTSIDE_PROJECT"),
        ({"changed_files": ["/etc/passwd"]}, "PATH_OUTSIDE_PROJECT"),
        ({"changed_files": ["a;b.py"]}, "PATH_OUTSIDE_PROJECT"),
        ({"changed_files": ["."]}, "PATH_OUTSIDE_PROJECT"),
        ({"changed_files": ["a.py"], "git_base": ""}, "CONFLICTING_ARGUMENTS"),
        ({"git_base": "no-such-ref"}, "INVALID_GIT_BASE"),
        ({"claude_session_id": "../evil"}, "INVALID_SESSION_ID"),
        ({"config_file": "missing.json"}, "INVALID_CONFIG"),
    ],
)
def test_bad_start_input_creates_nothing(git_project: Path, options: dict[str, Any], code: str) -> None:
    with pytest.raises(FixloopError) as caught:
        start(git_project, FakeClock(), **options)
    assert caught.value.code == code
    assert caught.value.exit_code == 2
    assert not (git_project / ".claude").exists()


def test_invalid_phase_error_document(git_project: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        start(git_project, FakeClock(), raw_args="--phase=9")
    assert caught.value.to_document() == {
        "status": "failed",
        "error": {
            "code": "INVALID_PHASE",
            "message": "Invalid phase value(s) for bugfix: 9.",
            "valid_values": ["0", "1", "2", "3", "4", "5", "all"],
            "received": "9",
            "suggestion": "Use numbers 0-5 or 'all'; separate several with commas, e.g. 0,1.",
        },
    }


def test_git_unavailable_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))  # git is not installed
    state_result = creation.start_run("review", root=tmp_path, git_base="", clock=FakeClock(START_S))
    state = state_result["state"]
    assert state["changed_files"] == []
    assert state_result["warnings"] == [
        {
            "code": "GIT_UNAVAILABLE",
            "message": state_result["warnings"][0]["message"],
            "impact": "changed files unknown; the run starts with an empty list",
        }
    ]
    assert state_result["warnings"][0]["message"] == "git is not installed (not found on PATH)."
    events = read_events(jsonl_of(state))
    assert [event["type"] for event in events] == ["SESSION_START", "WARNING"]
    assert events[0]["env"]["git_branch"] is None
    assert without_ts(events[1]) == {
        "level": "W",
        "type": "WARNING",
        "session_id": state["run_id"],
        **state_result["warnings"][0],
    }
    assert_valid_events(events)


def test_git_diff_outside_a_git_repository_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review of the git changes of a folder that is no repository: an error, never `no_changes`."""
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    with pytest.raises(FixloopError) as caught:
        creation.start_run("review", root=tmp_path, git_base="", clock=FakeClock(START_S))
    assert (caught.value.code, caught.value.exit_code) == ("NOT_A_GIT_REPOSITORY", 2)
    assert caught.value.message == (
        f"{tmp_path} is not a git repository, so --git-diff has no changes to take. Name the files instead: "
        "--changed-files FILE ..."
    )
    assert not (tmp_path / ".claude").exists()  # no run was made


# ---- config --------------------------------------------------------------------------------------


def test_project_config_then_config_file(git_project: Path, tmp_path: Path) -> None:
    (git_project / ".claude").mkdir()
    (git_project / ".claude" / "fixloop.json").write_text(
        json.dumps({"test_command": "make test", "lint_command": "make lint", "max_review_iterations": 5})
    )
    override = tmp_path / "override.json"
    override.write_text(json.dumps({"$schema": "x", "lint_command": None, "use_verifier": False}))
    state = start(git_project, FakeClock(), config_file=str(override))
    assert state["config"]["test_command"] == "make test"
    assert state["config"]["lint_command"] is None
    assert state["config"]["max_review_iterations"] == 5
    assert state["config"]["use_verifier"] is False
    assert state["config_sources"] == [str(git_project / ".claude" / "fixloop.json"), str(override)]


def test_bad_project_config_is_refused_with_every_violation(git_project: Path) -> None:
    (git_project / ".claude").mkdir()
    config = git_project / ".claude" / "fixloop.json"
    config.write_text(json.dumps({"test_cmd": "x", "max_review_iterations": "3", "lint_command": "  "}))
    with pytest.raises(FixloopError) as caught:
        start(git_project, FakeClock())
    error = caught.value
    assert error.code == "INVALID_CONFIG"
    assert error.details["file"] == str(config)
    assert error.details["violations"] == [
        {"path": "$.lint_command", "message": "must be a command or null, not blank"},
        {"path": "$.max_review_iterations", "message": "Input should be a valid integer"},
        {"path": "$.test_cmd", "message": "unknown key"},
    ]
    assert not (git_project / ".claude" / "fixloop").exists()


# ---- phases --------------------------------------------------------------------------------------


def test_phase_durations_come_from_the_stored_clock(git_project: Path) -> None:
    clock = FakeClock(START_S)
    state = start(git_project, clock, stack="backend")
    run_id = state["run_id"]
    clock.advance(1.0)
    opened = phasebook.phase_start(git_project, run_id, 0, clock=clock)
    assert opened == {
        "run_id": run_id,
        "phase": "phase_0",
        "phase_name": "Collect and classify the failure",
        "started_at_ms": START_MS + 1000,
    }
    clock.advance(12.333)
    closed = phasebook.phase_end(git_project, run_id, "0", "success", {"errors_found": 3}, clock=clock)
    assert closed == {
        "run_id": run_id,
        "phase": "phase_0",
        "status": "success",
        "duration_ms": 12333,
        "started_at_ms": START_MS + 1000,
        "ended_at_ms": START_MS + 13333,
        "summary": {"errors_found": 3},
        "phases_completed": ["phase_0"],
    }
    stored = lifecycle.load_run(git_project, run_id)
    assert stored["open_phases"] == {}
    assert stored["phase_results"] == [
        {
            "phase": "phase_0",
            "status": "success",
            "duration_ms": 12333,
            "started_at_ms": START_MS + 1000,
            "ended_at_ms": START_MS + 13333,
        }
    ]
    result = stored["phase_results"][0]
    assert result["duration_ms"] == result["ended_at_ms"] - result["started_at_ms"]
    events = read_events(jsonl_of(state))
    assert [without_ts(event) for event in events[1:]] == [
        {
            "level": "I",
            "type": "PHASE_START",
            "session_id": run_id,
            "phase": "phase_0",
            "phase_name": "Collect and classify the failure",
        },
        {
            "level": "I",
            "type": "PHASE_END",
            "session_id": run_id,
            "phase": "phase_0",
            "status": "success",
            "duration_ms": 12333,
            "summary": {"errors_found": 3},
        },
    ]
    assert [event["ts"] for event in events] == [
        "2025-12-06T05:46:40.000Z",
        "2025-12-06T05:46:41.000Z",
        "2025-12-06T05:46:53.333Z",
    ]
    assert_valid_events(events)


def test_failed_or_skipped_phase_is_not_completed(git_project: Path) -> None:
    clock = FakeClock(START_S)
    run_id = start(git_project, clock, phase="0,1,2")["run_id"]
    phasebook.phase_start(git_project, run_id, 0, clock=clock)
    phasebook.phase_end(git_project, run_id, 0, "partial", clock=clock)
    phasebook.phase_start(git_project, run_id, 1, clock=clock)
    phasebook.phase_end(git_project, run_id, 1, "skipped", clock=clock)
    phasebook.phase_start(git_project, run_id, 2, clock=clock)
    phasebook.phase_end(git_project, run_id, 2, "failed", clock=clock)
    stored = lifecycle.load_run(git_project, run_id)
    assert stored["phases_completed"] == ["phase_0"]
    assert [(item["phase"], item["status"]) for item in stored["phase_results"]] == [
        ("phase_0", "partial"),
        ("phase_1", "skipped"),
        ("phase_2", "failed"),
    ]


def test_phases_open_in_order_one_at_a_time(git_project: Path) -> None:
    clock = FakeClock(START_S)
    run_id = start(git_project, clock, phase="1,3")["run_id"]
    with pytest.raises(FixloopError) as caught:
        phasebook.phase_start(git_project, run_id, 3, clock=clock)
    assert (caught.value.code, caught.value.details["expected"]) == ("PHASE_OUT_OF_ORDER", 1)
    phasebook.phase_start(git_project, run_id, 1, clock=clock)
    with pytest.raises(FixloopError) as caught:
        phasebook.phase_start(git_project, run_id, 3, clock=clock)
    assert caught.value.code == "PHASE_OUT_OF_ORDER"
    phasebook.phase_end(git_project, run_id, 1, "success", clock=clock)
    with pytest.raises(FixloopError) as caught:
        phasebook.phase_start(git_project, run_id, 1, clock=clock)
    assert caught.value.code == "PHASE_ALREADY_ENDED"
    with pytest.raises(FixloopError) as caught:
        ending.end_run(git_project, run_id, "success", clock=clock)
    assert (caught.value.code, caught.value.details["allowed"]) == ("STATUS_INCONSISTENT", "partial")
    phasebook.phase_start(git_project, run_id, 3, clock=clock)
    with pytest.raises(FixloopError) as caught:
        ending.end_run(git_project, run_id, "success", clock=clock)
    assert caught.value.code == "PHASE_STILL_OPEN"
    phasebook.phase_end(git_project, run_id, 3, "failed", clock=clock)
    with pytest.raises(FixloopError) as caught:
        ending.end_run(git_project, run_id, "partial", clock=clock)
    assert (caught.value.code, caught.value.details["allowed"]) == ("STATUS_INCONSISTENT", "failed")
    assert ending.end_run(git_project, run_id, "failed", clock=clock)["status"] == "failed"


def test_a_failed_run_closes_its_open_phase(git_project: Path) -> None:
    clock = FakeClock(START_S)
    state = start(git_project, clock, phase="0,1")
    phasebook.phase_start(git_project, state["run_id"], 0, clock=clock)
    clock.advance(2)
    ending.end_run(git_project, state["run_id"], "user_cancelled", clock=clock)
    stored = lifecycle.load_run(git_project, state["run_id"])
    assert (stored["open_phases"], stored["status"]) == ({}, "user_cancelled")
    assert stored["phase_results"][-1]["status"] == "user_cancelled"
    events = [(event["type"], event.get("status")) for event in read_events(jsonl_of(state))]
    assert events[-2:] == [("PHASE_END", "user_cancelled"), ("SESSION_END", "user_cancelled")]


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda root, rid, c: phasebook.phase_end(root, rid, 1, "success", clock=c), "PHASE_NOT_STARTED"),
        (lambda root, rid, c: phasebook.phase_start(root, rid, 1, clock=c), "PHASE_OUT_OF_ORDER"),
        (lambda root, rid, c: phasebook.phase_start(root, rid, 3, clock=c), "PHASE_NOT_SELECTED"),
        (lambda root, rid, c: phasebook.phase_end(root, rid, 3, "success", clock=c), "PHASE_NOT_SELECTED"),
        (lambda root, rid, c: phasebook.phase_start(root, rid, 9, clock=c), "INVALID_PHASE"),
        (lambda root, rid, c: phasebook.phase_start(root, rid, "0,1", clock=c), "INVALID_PHASE"),
        (lambda root, rid, c: phasebook.phase_start(root, rid, "all", clock=c), "INVALID_PHASE"),
        (lambda root, rid, c: phasebook.phase_start(root, rid, "x", clock=c), "INVALID_PHASE"),
        (lambda root, rid, c: phasebook.phase_start(root, rid, 0, clock=c), "PHASE_ALREADY_STARTED"),
        (lambda root, rid, c: phasebook.phase_end(root, rid, 0, "done", clock=c), "INVALID_STATUS"),
        (lambda root, rid, c: phasebook.phase_end(root, rid, 0, "success", [1], clock=c), "INVALID_SUMMARY"),
        (lambda root, rid, c: ending.end_run(root, rid, "success", clock=c), "PHASE_STILL_OPEN"),
        (lambda root, rid, c: ending.end_run(root, rid, "running", clock=c), "INVALID_STATUS"),
        (lambda root, rid, c: ending.end_run(root, rid, "dry_run_complete", clock=c), "INVALID_STATUS"),
        (lambda root, rid, c: changed_files.set_files(root, rid, ["../x"], clock=c), "PATH_OUTSIDE_PROJECT"),
        (lambda root, rid, c: changed_files.set_files(root, rid, clock=c), "MISSING_ARGUMENT"),
        (lambda root, rid, c: phasebook.phase_start(root, "../x", 0, clock=c), "INVALID_RUN_ID"),
        (lambda root, rid, c: phasebook.phase_start(root, "0badc0de", 0, clock=c), "RUN_NOT_FOUND"),
    ],
)
def test_bad_calls_leave_state_and_logs_unchanged(git_project: Path, call: Any, code: str) -> None:
    clock = FakeClock(START_S)
    run_id = start(git_project, clock, phase="0,1,2")["run_id"]
    phasebook.phase_start(git_project, run_id, 0, clock=clock)
    before = snapshot(git_project)
    assert len(before) >= 4  # state, history, two logs
    with pytest.raises(FixloopError) as caught:
        call(git_project, run_id, clock)
    assert caught.value.code == code
    assert caught.value.exit_code == 2
    assert snapshot(git_project) == before


def test_invalid_phase_on_a_run_lists_valid_values(git_project: Path) -> None:
    run_id = start(git_project, FakeClock())["run_id"]
    with pytest.raises(FixloopError) as caught:
        phasebook.phase_start(git_project, run_id, "9")
    assert caught.value.details == {
        "valid_values": ["0", "1", "2", "3", "4", "5", "all"],
        "received": "9",
        "suggestion": "Use numbers 0-5 or 'all'; separate several with commas, e.g. 0,1.",
    }


# ---- end -----------------------------------------------------------------------------------------


def test_end_run_writes_session_end_once(git_project: Path) -> None:
    clock = FakeClock(START_S)
    state = start(git_project, clock)
    run_id = state["run_id"]
    phasebook.phase_start(git_project, run_id, 0, clock=clock)
    clock.advance(2)
    phasebook.phase_end(git_project, run_id, 0, "success", clock=clock)
    phasebook.phase_start(git_project, run_id, 1, clock=clock)
    clock.advance(546)
    ended = ending.end_run(git_project, run_id, "failed", {"files_changed": 2}, clock=clock)
    assert ended == {
        "run_id": run_id,
        "status": "failed",
        "total_duration_ms": 548000,
        "phases_completed": ["phase_0"],
        "open_phases": [],
        "summary": {"files_changed": 2},
    }
    stored = lifecycle.load_run(git_project, run_id)
    assert (stored["status"], stored["ended_at_ms"], stored["summary"]) == (
        "failed",
        START_MS + 548000,
        {"files_changed": 2},
    )
    assert stored["ended_at_ms"] - stored["started_at_ms"] == ended["total_duration_ms"]
    events = read_events(jsonl_of(state))
    assert without_ts(events[-1]) == {
        "level": "I",
        "type": "SESSION_END",
        "session_id": run_id,
        "status": "failed",
        "total_duration_ms": 548000,
        "phases_completed": ["phase_0"],
        "summary": {"files_changed": 2},
    }
    assert_valid_events(events)

    before = snapshot(git_project)
    calls: list[Callable[[], object]] = [
        lambda: ending.end_run(git_project, run_id, "success", clock=clock),
        lambda: phasebook.phase_start(git_project, run_id, 0, clock=clock),
        lambda: phasebook.phase_end(git_project, run_id, 1, "success", clock=clock),
        lambda: changed_files.set_files(git_project, run_id, ["a.py"], clock=clock),
    ]
    for again in calls:
        with pytest.raises(FixloopError) as caught:
            again()
        assert caught.value.code == "RUN_ALREADY_ENDED"
    assert snapshot(git_project) == before


def test_dry_run_complete_needs_a_dry_run(git_project: Path) -> None:
    run_id = start(git_project, FakeClock(), dry_run=True)["run_id"]
    assert ending.end_run(git_project, run_id, "dry_run_complete")["status"] == "dry_run_complete"


def test_end_after_three_recorded_errors_still_works(git_project: Path) -> None:
    run_id = start(git_project, FakeClock())["run_id"]
    store = lifecycle.store_for(git_project, run_id)
    for number in range(3):
        store.record_error("review", f"boom {number}")
    assert lifecycle.load_run(git_project, run_id)["status"] == "failed"
    assert ending.end_run(git_project, run_id, "failed")["status"] == "failed"


# ---- files, loading, logs --------------------------------------------------------------------------


def test_set_files_from_git_and_explicit(git_project: Path) -> None:
    clock = FakeClock(START_S)
    state = start(git_project, clock)
    run_id = state["run_id"]
    (git_project / "README.md").write_text("new\n")
    assert changed_files.set_files(git_project, run_id, git_base="", clock=clock) == {
        "run_id": run_id,
        "changed_files": ["README.md"],
        "base_ref": "HEAD",
        "warnings": [],
    }
    assert changed_files.set_files(git_project, run_id, ["b.py", "a.py", "a.py"], clock=clock)[
        "changed_files"
    ] == [
        "a.py",
        "b.py",
    ]
    stored = lifecycle.load_run(git_project, run_id)
    assert (stored["changed_files"], stored["base_ref"]) == (["a.py", "b.py"], None)
    events = read_events(jsonl_of(state))
    assert [event["summary"] for event in events if event["type"] == "DATA_COLLECTED"] == [
        {"count": 1, "source": "git", "base_ref": "HEAD"},
        {"count": 2, "source": "explicit", "base_ref": None},
    ]


def test_set_files_without_git_keeps_the_files(tmp_path: Path) -> None:
    state = start(tmp_path, FakeClock(), changed_files=["a.py"])
    before = snapshot(tmp_path)
    with pytest.raises(FixloopError) as caught:
        changed_files.set_files(tmp_path, state["run_id"], git_base="")
    assert (caught.value.code, caught.value.exit_code) == ("NOT_A_GIT_REPOSITORY", 2)
    assert snapshot(tmp_path) == before


def test_git_diff_before_the_first_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x\n")
    for base in ("", "HEAD"):
        state = start(tmp_path, FakeClock(), git_base=base)
        assert (state["changed_files"], state["base_ref"]) == (["a.py"], "HEAD")


@pytest.mark.parametrize("bad", ["../x", "a;b", "/etc/passwd", "ABCDEF12", "0123abc", ""])
def test_load_run_checks_the_id(git_project: Path, bad: str) -> None:
    with pytest.raises(FixloopError) as caught:
        lifecycle.load_run(git_project, bad)
    assert caught.value.code == "INVALID_RUN_ID"


def test_load_run_refuses_a_state_naming_another_run(git_project: Path) -> None:
    state = start(git_project, FakeClock())
    source = Path(layout.run_dir(git_project, state["run_id"]))
    target = Path(layout.run_dir(git_project, "0badc0de"))
    target.mkdir(parents=True)
    (target / "state.json").write_bytes((source / "state.json").read_bytes())
    with pytest.raises(FixloopError) as caught:
        lifecycle.load_run(git_project, "0badc0de")
    assert caught.value.code == "STATE_INVALID"


def test_current_run_without_session(git_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FixloopError) as caught:
        lifecycle.current_run_id(git_project)
    assert caught.value.code == "NO_SESSION"
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "unbound")
    with pytest.raises(FixloopError) as caught:
        lifecycle.current_run_id(git_project)
    assert caught.value.code == "NO_CURRENT_RUN"


def test_run_log_of_a_run_without_logging_writes_nothing(git_project: Path) -> None:
    state = start(git_project, FakeClock(), log=False)
    log = lifecycle.run_log(state)
    assert (log.jsonl_path, log.text_path, log.session_id) == (None, None, state["run_id"])
    assert log.emit("I", "WARNING", code="X", message="y") is not None
    assert not (git_project / ".claude" / "logs").exists()


def test_run_log_respects_the_level(git_project: Path) -> None:
    state = start(git_project, FakeClock())
    log = lifecycle.run_log(state)
    assert log.level == "info"
    assert log.emit("D", "AGENT_IO", agent="a", direction="input", content="x") is None
    assert [event["type"] for event in read_events(jsonl_of(state))] == ["SESSION_START"]


# ---- concurrency ---------------------------------------------------------------------------------

CLOSE_PHASE = """
import sys
from collections.abc import Callable
from pathlib import Path
from fixloop.runs import phasebook
from fixloop.core.errors import FixloopError
try:
    phasebook.phase_end(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), "success")
except FixloopError as error:
    print(error.code)
else:
    print("OK")
"""

OPEN_PHASE = CLOSE_PHASE.replace(
    'phasebook.phase_end(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), "success")',
    "phasebook.phase_start(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]))",
)


def run_parallel(script: str, root: Path, run_id: str, phases: list[int]) -> list[str]:
    env = {"PYTHONPATH": str(LIB), "PATH": "/usr/bin:/bin"}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(root), run_id, str(number)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for number in phases
    ]
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        outputs.append(out.strip())
    return outputs


def test_concurrent_phase_ends_close_a_phase_once(git_project: Path) -> None:
    state = start(git_project, FakeClock(), workflow="pr-review")
    run_id = state["run_id"]
    phasebook.phase_start(git_project, run_id, 0)
    outputs = run_parallel(CLOSE_PHASE, git_project, run_id, [0] * 6)
    assert sorted(outputs) == ["OK", *["PHASE_NOT_STARTED"] * 5]
    stored = lifecycle.load_run(git_project, run_id)
    assert len(stored["phase_results"]) == 1
    assert stored["phases_completed"] == ["phase_0"]
    events = read_events(jsonl_of(state))
    assert [event["type"] for event in events].count("PHASE_END") == 1


def test_concurrent_phase_starts_open_a_phase_once(git_project: Path) -> None:
    state = start(git_project, FakeClock(), workflow="pr-review")
    run_id = state["run_id"]
    outputs = run_parallel(OPEN_PHASE, git_project, run_id, [0] * 8)
    assert sorted(outputs) == ["OK", *["PHASE_ALREADY_STARTED"] * 7]
    assert sorted(lifecycle.load_run(git_project, run_id)["open_phases"]) == ["0"]
    events = read_events(jsonl_of(state))
    assert [event["phase"] for event in events if event["type"] == "PHASE_START"] == ["phase_0"]


def test_a_run_leaves_git_status_clean(git_project: Path) -> None:
    state = start(git_project, FakeClock(START_S), claude_session_id="sess-1")
    assert Path(state["logging"]["log_files"]["jsonl"]).is_file()
    status = git(git_project, "status", "--porcelain", "--untracked-files=all")
    assert status == ""
    assert (git_project / ".claude/fixloop/.gitignore").read_text().splitlines()[-1] == "*"
    assert (git_project / ".claude/logs/fixloop/.gitignore").read_text().splitlines()[-1] == "*"


def test_a_gitignore_of_the_user_is_left_as_it_is(git_project: Path) -> None:
    (git_project / ".claude/fixloop").mkdir(parents=True)
    (git_project / ".claude/fixloop/.gitignore").write_text("runs/\n")
    start(git_project, FakeClock(START_S))
    assert (git_project / ".claude/fixloop/.gitignore").read_text() == "runs/\n"


def test_a_log_that_cannot_be_written_is_said_not_dropped(
    git_project: Path, plugin_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = git_project / ".claude" / "logs" / "fixloop"
    logs.mkdir(parents=True)
    (logs / "review").write_text("a file where the log folder goes\n")
    result = creation.start_run("review", root=git_project, clock=FakeClock(START_S))
    run_id = result["state"]["run_id"]
    (warning,) = result["warnings"]
    assert warning["code"] == "LOG_WRITE_FAILED"
    assert warning["message"].startswith("The run's log cannot be written (NotADirectoryError: ")
    assert capsys.readouterr().err.startswith(
        f"fixloop: cannot write the log of run {run_id}: NotADirectoryError"
    )
    ending.end_run(git_project, run_id, "failed")
    lost = [json.loads(line) for line in (plugin_data / "unwritten-events.jsonl").read_text().splitlines()]
    assert [item["event"]["type"] for item in lost] == ["SESSION_START", "WARNING", "SESSION_END"]
    assert {item["code"] for item in lost} == {"LOG_WRITE_FAILED"}
    assert {item["run_id"] for item in lost} == {run_id}
    assert capsys.readouterr().err == ""  # said once per run


@pytest.mark.parametrize("linked", [".claude", ".claude/logs", ".claude/fixloop"])
def test_fixloop_folders_that_lead_outside_the_project_are_refused(
    git_project: Path, tmp_path: Path, linked: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = git_project / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(FixloopError) as caught:
        creation.start_run("review", root=git_project, clock=FakeClock(START_S))
    assert caught.value.code == "FIXLOOP_DIR_OUTSIDE_PROJECT"
    assert "through a symbolic link" in caught.value.message
    assert list(elsewhere.rglob("*")) == []


def test_a_link_planted_after_the_run_started_stops_its_state_writes(
    git_project: Path, tmp_path: Path
) -> None:
    run_id = creation.start_run("review", root=git_project, clock=FakeClock(START_S))["state"]["run_id"]
    moved = tmp_path / "moved"
    (git_project / ".claude" / "fixloop").rename(moved)
    (git_project / ".claude" / "fixloop").symlink_to(moved, target_is_directory=True)
    before = (moved / "runs" / run_id / "state.json").read_bytes()
    with pytest.raises(FixloopError) as caught:
        ending.end_run(git_project, run_id, "failed")
    assert caught.value.code == "FIXLOOP_DIR_OUTSIDE_PROJECT"
    assert (moved / "runs" / run_id / "state.json").read_bytes() == before
