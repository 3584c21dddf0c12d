"""The fail-open runner: finding the session's run, answering, and turning every failure into a WARNING."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from fixloop.hookside import context
from fixloop.hookside.context import RunContext
from fixloop.runs import creation, ending, phasebook
from fixloop.store import ledger

if TYPE_CHECKING:
    from conftest import BoundRun  # the fixture's type (tests/unit/hookside/conftest.py)


def run_hook(payload: dict[str, Any] | bytes, handler: context.Handler, relevant: Any = None) -> bytes:
    stdin = io.BytesIO(payload if isinstance(payload, bytes) else json.dumps(payload).encode())
    stdout = io.BytesIO()
    assert context.run(handler, relevant, stdin=stdin, stdout=stdout) == 0
    return stdout.getvalue()


def test_the_handler_gets_the_run_and_its_answer_is_written(bound_run: BoundRun) -> None:
    phasebook.phase_start(bound_run.root, bound_run.run_id, 0)
    seen: list[RunContext] = []

    def handler(payload: dict[str, Any], found: RunContext) -> str:
        seen.append(found)
        return '{"decision": "block", "reason": "é"}\n'

    out = run_hook(bound_run.payload("SubagentStop"), handler)
    assert out == '{"decision": "block", "reason": "é"}\n'.encode()
    (found,) = seen
    assert (found.run_id, found.root, found.view.phase, found.view.running) == (
        bound_run.run_id,
        str(bound_run.root),
        "phase_0",
        True,
    )
    assert found.run_dir == str(bound_run.dir)


def test_an_irrelevant_payload_or_another_session_does_nothing(bound_run: BoundRun) -> None:
    def handler(payload: dict[str, Any], found: RunContext) -> str:
        raise AssertionError("not called")

    assert run_hook(bound_run.payload("PreToolUse"), handler, lambda payload: False) == b""
    assert run_hook({**bound_run.payload("PreToolUse"), "session_id": "other"}, handler) == b""
    assert not bound_run.data.exists()


def test_a_failing_handler_leaves_a_warning_in_the_runs_log(bound_run: BoundRun) -> None:
    def handler(payload: dict[str, Any], found: RunContext) -> str:
        raise OSError("disk full")

    assert run_hook(bound_run.payload("PostToolUse"), handler) == b""
    (warning,) = bound_run.events("WARNING")
    assert (warning["code"], warning["hook"], warning["message"]) == (
        "HOOK_FAILED",
        "PostToolUse",
        "fixloop hook PostToolUse failed: OSError: disk full",
    )


@pytest.mark.parametrize("stdin", [b"", b"[1]", b"{bad"])
def test_an_unreadable_payload_warns_in_the_run_of_the_environments_session(
    bound_run: BoundRun, monkeypatch: pytest.MonkeyPatch, stdin: bytes
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", bound_run.session)
    assert run_hook(stdin, lambda payload, found: "never") == b""
    (warning,) = bound_run.events("WARNING")
    assert warning["code"] == "HOOK_BAD_INPUT"
    assert warning["message"].startswith("Unreadable hook payload: ")


def test_without_a_run_the_warning_goes_to_the_data_directory(
    bound_run: BoundRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "no-run-here")
    assert run_hook(b"nope", lambda payload, found: "never") == b""
    (line,) = (bound_run.data / context.FALLBACK_LOG).read_text().splitlines()
    warning = json.loads(line)
    assert (warning["type"], warning["code"], warning["session_id"]) == (
        "WARNING",
        "HOOK_BAD_INPUT",
        "no-run-here",
    )


def test_an_ended_run_is_found_only_for_the_result_of_a_call_it_recorded(bound_run: BoundRun) -> None:
    ledger.append(str(bound_run.dir), {"kind": "call", "ts_ms": 1, "tool_use_id": "toolu_1"})
    ending.end_run(bound_run.root, bound_run.run_id, "failed")
    post = bound_run.payload("PostToolUse", tool_use_id="toolu_1")
    assert context.find_run(bound_run.payload("PreToolUse", tool_use_id="toolu_1")) is None
    found = context.find_run(post)
    assert found is not None and found.view.running is False
    assert context.find_run({**post, "tool_use_id": "toolu_2"}) is None
    ledger.append(str(bound_run.dir), {"kind": "result", "ts_ms": 2, "tool_use_id": "toolu_1"})
    assert context.find_run(post) is None


def test_an_ended_run_is_found_for_the_first_stop_of_a_coordinator_it_saw_start(bound_run: BoundRun) -> None:
    start = {"kind": "start", "ts_ms": 1, "agent": "coordinator", "agent_id": "c1"}
    ledger.append(str(bound_run.dir), start)
    ending.end_run(bound_run.root, bound_run.run_id, "failed")
    stop = bound_run.payload("SubagentStop", agent_type="fixloop:coordinator", agent_id="c1")
    found = context.find_run(stop)
    assert found is not None and found.view.running is False
    assert context.find_run({**stop, "agent_id": "c2"}) is None  # not started in this run
    assert context.find_run({**stop, "agent_type": "fixloop:code-reviewer"}) is None
    ledger.append(str(bound_run.dir), {"kind": "stop", "ts_ms": 2, "agent": "coordinator", "agent_id": "c1"})
    assert context.find_run(stop) is None


def test_a_session_bound_to_a_missing_run_warns_in_the_data_directory(bound_run: BoundRun) -> None:
    (bound_run.dir / "state.json").unlink()
    assert context.find_run(bound_run.payload("PreToolUse")) is None
    warning = json.loads((bound_run.data / context.FALLBACK_LOG).read_text())
    assert (warning["code"], warning["hook"]) == ("RUN_NOT_FOUND", "PreToolUse")


def test_a_run_without_logging_has_no_event_log(git_project: Path) -> None:
    state = creation.start_run("bugfix", root=git_project, log=False, claude_session_id="quiet")["state"]
    found = context.find_run({"session_id": "quiet", "cwd": str(git_project)})
    assert found is not None and found.run_id == state["run_id"]
    assert found.log is None
    found.warn("X", "nowhere to go")  # writes nothing, raises nothing
