"""The engine as the SubagentStop hook runs it: its answer, or why there is none."""

from __future__ import annotations

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
        ("Traceback: boom", 1, "`fixloop review record` exited 1 without a JSON answer: no output"),
        ("[1]", 0, "`fixloop review record` answered a JSON list"),
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
