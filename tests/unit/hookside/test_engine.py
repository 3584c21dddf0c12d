"""The engine as the SubagentStop hook runs it: its answer, or why there is none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hook_helpers import fake_engine, recorded_answer

from fixloop.hookside import context, engine

if TYPE_CHECKING:
    from conftest import BoundRun  # the fixture's type (tests/unit/hookside/conftest.py)


def record(bound_run: BoundRun, command: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv(engine.ENGINE_ENV, str(command))
    found = context.find_run(bound_run.payload("SubagentStop"))
    assert found is not None
    return engine.record(found, "code-reviewer", "id-cr", b"{}")


def test_the_default_engine_is_the_plugins_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(engine.ENGINE_ENV, raising=False)
    command = engine.engine_command()
    assert command[0] == "bash" and Path(command[1]).is_file()
    assert command[1].endswith("/scripts/fixloop")


def test_an_answer_is_returned_as_is(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = recorded_answer("code-reviewer", 3)
    assert record(bound_run, fake_engine(tmp_path / "e", [answer]), monkeypatch) == answer


@pytest.mark.parametrize(
    ("answer", "code", "message"),
    [
        ("Traceback: boom", 1, "`fixloop record` exited 1 without a JSON answer: no output"),
        ("[1]", 0, "`fixloop record` answered a JSON list"),
        (
            {"status": "failed", "error": {"code": "ENGINE_UNAVAILABLE", "message": "no python"}},
            3,
            "no python",
        ),
        ({"status": "failed"}, 3, "the engine is unavailable"),
    ],
)
def test_no_usable_answer_is_engine_unavailable(
    bound_run: BoundRun,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    answer: dict[str, Any] | str,
    code: int,
    message: str,
) -> None:
    with pytest.raises(engine.EngineUnavailable) as caught:
        record(bound_run, fake_engine(tmp_path / "e", [answer], [code]), monkeypatch)
    assert str(caught.value) == message


def test_a_slow_engine_is_abandoned(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(engine.TIMEOUT_ENV, "0.2")
    with pytest.raises(engine.EngineUnavailable, match=r"did not answer within 0\.2s"):
        record(
            bound_run, fake_engine(tmp_path / "e", [recorded_answer("code-reviewer")], sleep=5), monkeypatch
        )


def test_a_missing_engine_is_engine_unavailable(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(engine.EngineUnavailable, match="cannot run the engine"):
        record(bound_run, tmp_path / "missing", monkeypatch)


@pytest.mark.parametrize(
    ("answer", "status", "count"),
    [
        ({"agent_status": "success", "issues_count": 4}, "success", 4),
        ({"agent_status": "partial", "issues_count": 0}, "partial", 0),
        ({"agent_status": None, "issues_count": None}, None, None),
        ({"agent_status": "great", "issues_count": -1}, None, None),
        ({"issues_count": True}, None, None),
        ({}, None, None),
    ],
)
def test_what_the_hooks_take_from_an_answer(
    answer: dict[str, Any], status: str | None, count: int | None
) -> None:
    assert (engine.agent_status(answer), engine.issues_count(answer)) == (status, count)


def test_error_code() -> None:
    assert engine.error_code({"error": {"code": "X"}}) == "X"
    assert engine.error_code({"error": "X"}) is None


# ---- fixloop next ---------------------------------------------------------------------------------


def next_of(bound_run: BoundRun, command: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(engine.ENGINE_ENV, str(command))
    found = context.find_run(bound_run.payload("SubagentStart"))
    assert found is not None
    return engine.next_step(found, "SubagentStart")


def test_the_next_step_is_the_engines_text(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = f"fixloop next (run {bound_run.run_id}, step 1: review round 1): call this agent\n"
    assert next_of(bound_run, fake_engine(tmp_path / "e", [text]), monkeypatch) == text.strip()
    calls = [json.loads(line) for line in (tmp_path / "e" / "calls.jsonl").read_text().splitlines()]
    assert [call["argv"] for call in calls] == [["next", bound_run.run_id, "--text"]]
    assert bound_run.events("WARNING") == []


@pytest.mark.parametrize(
    ("answer", "code", "reason"),
    [
        (
            {"status": "failed", "error": {"code": "RUN_NOT_FOUND", "message": "No run x.\nTry again."}},
            2,
            "RUN_NOT_FOUND: No run x. Try again",
        ),
        ({"status": "failed", "error": {"code": "STEP_LIMIT"}}, 2, "STEP_LIMIT: no details"),
        ("Traceback: boom", 70, "`fixloop next` exited 70: no output"),
        ("", 0, "`fixloop next` exited 0: no output"),
    ],
)
def test_no_next_step_tells_the_coordinator_to_end(
    bound_run: BoundRun,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    answer: dict[str, Any] | str,
    code: int,
    reason: str,
) -> None:
    text = next_of(bound_run, fake_engine(tmp_path / "e", [answer], [code]), monkeypatch)
    assert text == (
        f"fixloop could not give the next step: {reason}. End now; your final message is exactly: "
        f"fixloop: {reason}"
    )
    (warning,) = bound_run.events("WARNING")
    assert (warning["code"], warning["hook"]) == ("NEXT_STEP_FAILED", "SubagentStart")


def test_a_slow_next_is_abandoned_after_its_own_time_limit(
    bound_run: BoundRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(engine.NEXT_TIMEOUT_ENV, "0.2")
    monkeypatch.setenv(engine.TIMEOUT_ENV, "100")
    text = next_of(bound_run, fake_engine(tmp_path / "e", ["late"], sleep=5), monkeypatch)
    assert text.startswith("fixloop could not give the next step: `fixloop next` did not answer within 0.2s.")


def test_the_time_limits_default_to_half_an_hour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(engine.NEXT_TIMEOUT_ENV, raising=False)
    monkeypatch.setenv(engine.TIMEOUT_ENV, "not a number")
    assert engine._timeout(engine.NEXT_TIMEOUT_ENV) == engine._timeout(engine.TIMEOUT_ENV) == 1700.0
