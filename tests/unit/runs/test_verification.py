from __future__ import annotations

import json
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers_runs import FakeClock, read_events, sha256_tree

from fixloop.cli import cli
from fixloop.contracts.coordinator import Verification
from fixloop.contracts.events import EVENT_MODELS
from fixloop.core.errors import FixloopError
from fixloop.runs import lifecycle, verification

START_S = 1_765_000_000.0


def configure(root: Path, **config: Any) -> None:
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "fixloop.json").write_text(json.dumps(config))


def new_run(root: Path, clock: FakeClock, files: list[str] | None = None) -> dict[str, Any]:
    state: dict[str, Any] = lifecycle.start_run(
        "review", root=root, changed_files=["src/app.py"] if files is None else files, clock=clock
    )["state"]
    return state


@pytest.fixture(autouse=True)
def no_review_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run without fixloop.review.machine unless they install a fake one."""
    monkeypatch.setitem(sys.modules, "fixloop.review.machine", None)


def test_steps_run_in_order_and_report(git_project: Path) -> None:
    configure(
        git_project,
        test_command="echo tests >> order.txt; echo 'all good'",
        lint_command="echo lint >> order.txt; echo 'E501 too long' >&2; exit 3",
        typecheck_command="echo typecheck >> order.txt",
    )
    clock = FakeClock(START_S)
    run_id = new_run(git_project, clock)["run_id"]
    result = verification.verify_run(git_project, run_id, clock=clock)
    assert (git_project / "order.txt").read_text() == "tests\nlint\ntypecheck\n"
    assert result["tests"] == {
        "status": "passed",
        "duration_ms": 0,
        "exit_code": 0,
        "command": "echo tests >> order.txt; echo 'all good'",
        "output_tail": "all good\n",
        "reason": None,
    }
    assert result["lint"] == {
        "status": "failed",
        "duration_ms": 0,
        "exit_code": 3,
        "command": "echo lint >> order.txt; echo 'E501 too long' >&2; exit 3",
        "output_tail": "E501 too long\n",
        "reason": "exit code 3",
    }
    assert result["typecheck"]["status"] == "passed"
    assert (result["status"], result["passed"], result["files_count"]) == ("failed", False, 1)
    assert result["run_id"] == run_id
    Verification.model_validate({name: result[name] for name in ("tests", "lint", "typecheck")})


def test_durations_come_from_the_clock(git_project: Path) -> None:
    configure(git_project, test_command="true", lint_command="true")
    clock = FakeClock(START_S, step=0.25)  # every reading is 250 ms after the previous one
    state = new_run(git_project, clock)
    result = verification.verify(state, clock=clock)
    assert result["tests"]["duration_ms"] == 250
    assert result["lint"]["duration_ms"] == 250
    assert result["duration_ms"] == result["ended_at_ms"] - result["started_at_ms"]
    assert result["duration_ms"] == 1250  # start, tests x2, lint x2, end: five intervals
    end = read_events(state["logging"]["log_files"]["jsonl"])[-1]
    assert end["duration_ms"] == result["duration_ms"]


def test_unconfigured_steps_are_skipped(git_project: Path) -> None:
    configure(git_project, test_command="true")
    clock = FakeClock(START_S)
    result = verification.verify_run(git_project, new_run(git_project, clock)["run_id"], clock=clock)
    skipped = {
        "status": "skipped",
        "duration_ms": None,
        "exit_code": None,
        "command": None,
        "output_tail": None,
        "reason": "not_configured",
    }
    assert result["lint"] == skipped
    assert result["typecheck"] == skipped
    assert (result["status"], result["passed"]) == ("passed", True)


def test_no_changed_files_skips_everything_without_running(git_project: Path) -> None:
    configure(git_project, test_command="touch ran.txt")
    clock = FakeClock(START_S)
    state = new_run(git_project, clock, files=[])
    result = verification.verify_run(git_project, state["run_id"], clock=clock)
    assert not (git_project / "ran.txt").exists()
    assert [result[name]["reason"] for name in ("tests", "lint", "typecheck")] == ["no_changes"] * 3
    assert result["tests"]["command"] == "touch ran.txt"
    assert (result["status"], result["passed"], result["files_count"]) == ("skipped", True, 0)


def test_output_tail_is_the_last_2000_characters_redacted(git_project: Path) -> None:
    configure(
        git_project,
        test_command=(
            "python3 -c \"print('x' * 5000); print('GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123'); "
            "print('end')\"; exit 1"
        ),
    )
    clock = FakeClock(START_S)
    result = verification.verify_run(git_project, new_run(git_project, clock)["run_id"], clock=clock)
    tail = result["tests"]["output_tail"]
    assert len(tail) == 2000
    assert tail.endswith("GITHUB_TOKEN=[REDACTED]\nend\n")
    assert "ghp_" not in tail
    assert tail.startswith("x")


def process_gone(pid: int) -> bool:
    """True once `pid` no longer runs (gone, or a zombie waiting for its parent); waits up to 10 s."""
    for _ in range(200):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.05)
    return False


def test_timeout_kills_the_whole_process_group(git_project: Path) -> None:
    configure(
        git_project,
        verify_timeout_seconds=1,
        test_command="sleep 30 & echo $! > bg.pid; echo started; sleep 30",
        lint_command="true",
    )
    clock = FakeClock(START_S)
    result = verification.verify_run(git_project, new_run(git_project, clock)["run_id"], clock=clock)
    assert result["tests"]["status"] == "timeout"
    assert result["tests"]["exit_code"] is None
    assert result["tests"]["reason"] == "timed out after 1s"
    assert result["tests"]["output_tail"] == "started\n"
    assert result["lint"]["status"] == "passed"
    assert (result["status"], result["passed"]) == ("failed", False)
    assert process_gone(int((git_project / "bg.pid").read_text()))


def test_background_job_left_by_a_finished_command_is_ended(git_project: Path) -> None:
    configure(git_project, test_command="sleep 30 & echo $! > bg.pid; echo done")
    clock = FakeClock(START_S)
    result = verification.verify_run(git_project, new_run(git_project, clock)["run_id"], clock=clock)
    assert result["tests"]["status"] == "passed"
    assert process_gone(int((git_project / "bg.pid").read_text()))


def test_result_is_stored_and_logged(git_project: Path) -> None:
    configure(git_project, test_command="true", typecheck_command="false")
    clock = FakeClock(START_S)
    state = new_run(git_project, clock, files=["a.py", "b.py"])
    result = verification.verify_run(git_project, state["run_id"], clock=clock)
    stored = lifecycle.load_run(git_project, state["run_id"])
    assert stored["verification"] == {key: value for key, value in result.items() if key != "run_id"}
    events = read_events(state["logging"]["log_files"]["jsonl"])
    assert [{k: v for k, v in event.items() if k != "ts"} for event in events[1:]] == [
        {"level": "I", "type": "REVIEW_VERIFICATION_START", "session_id": state["run_id"], "files_count": 2},
        {
            "level": "I",
            "type": "REVIEW_VERIFICATION_END",
            "session_id": state["run_id"],
            "tests": "passed",
            "lint": "skipped",
            "typecheck": "failed",
            "duration_ms": 0,
        },
    ]
    for event in events:
        EVENT_MODELS[event["type"]].model_validate(event)


def test_review_state_hook_is_called_inside_the_update(
    git_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    def attach_verification(state: dict[str, Any], result: dict[str, Any]) -> None:
        calls.append((state["run_id"], result))
        state["review"]["gate"] = result["status"]

    module = types.ModuleType("fixloop.review.machine")
    module.attach_verification = attach_verification  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fixloop.review.machine", module)
    configure(git_project, test_command="true")
    clock = FakeClock(START_S)
    run_id = new_run(git_project, clock)["run_id"]
    result = verification.verify_run(git_project, run_id, clock=clock)
    assert calls == [(run_id, {key: value for key, value in result.items() if key != "run_id"})]
    assert lifecycle.load_run(git_project, run_id)["review"] == {"gate": "passed"}


def test_a_refusing_hook_leaves_the_state_unchanged(
    git_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def attach_verification(state: dict[str, Any], result: dict[str, Any]) -> None:
        raise FixloopError("NOT_EXPECTED", "no verification is due")

    module = types.ModuleType("fixloop.review.machine")
    module.attach_verification = attach_verification  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fixloop.review.machine", module)
    configure(git_project, test_command="true")
    clock = FakeClock(START_S)
    run_id = new_run(git_project, clock)["run_id"]
    state_file = git_project / ".claude" / "fixloop" / "runs" / run_id / "state.json"
    before = state_file.read_bytes()
    with pytest.raises(FixloopError) as caught:
        verification.verify_run(git_project, run_id, clock=clock)
    assert caught.value.code == "NOT_EXPECTED"
    assert state_file.read_bytes() == before


def test_the_real_review_state_takes_the_initial_gate(
    git_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "fixloop.review.machine")
    review_state = pytest.importorskip("fixloop.review.machine")
    configure(git_project, test_command="true")
    clock = FakeClock(START_S)
    run_id = new_run(git_project, clock)["run_id"]
    assert (
        review_state.verification_slot(lifecycle.load_run(git_project, run_id)) is None
    )  # not asked for yet
    asked = CliRunner().invoke(cli, ["review", "next", run_id])
    assert json.loads(asked.output)["action"] == "verify", asked.output
    assert review_state.verification_slot(lifecycle.load_run(git_project, run_id)) == "initial"
    verification.verify_run(git_project, run_id, clock=clock)
    assert review_state.verification_slot(lifecycle.load_run(git_project, run_id)) is None


def test_an_ended_run_is_not_verified(git_project: Path) -> None:
    configure(git_project, test_command="touch ran.txt")
    clock = FakeClock(START_S)
    run_id = new_run(git_project, clock)["run_id"]
    lifecycle.end_run(git_project, run_id, "success", clock=clock)
    before = sha256_tree(git_project / ".claude")
    with pytest.raises(FixloopError) as caught:
        verification.verify_run(git_project, run_id, clock=clock)
    assert caught.value.code == "RUN_ALREADY_ENDED"
    assert not (git_project / "ran.txt").exists()
    assert sha256_tree(git_project / ".claude") == before


def test_commands_run_in_the_project_without_stdin(
    git_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(git_project, test_command="pwd; cat")
    elsewhere = git_project / "src"
    monkeypatch.chdir(elsewhere)
    clock = FakeClock(START_S)
    result = verification.verify_run(git_project, new_run(git_project, clock)["run_id"], clock=clock)
    assert result["tests"]["output_tail"] == f"{git_project}\n"
    assert result["tests"]["status"] == "passed"


# ---- CLI -----------------------------------------------------------------------------------------


def test_cli_exit_codes(git_project: Path, fake_clock: FakeClock) -> None:
    configure(git_project, test_command="true")
    run_id = new_run(git_project, fake_clock)["run_id"]
    passed = CliRunner().invoke(cli, ["verify", run_id])
    assert passed.exit_code == 0
    assert json.loads(passed.output)["status"] == "passed"

    state_file = git_project / ".claude" / "fixloop" / "runs" / run_id / "state.json"
    state = json.loads(state_file.read_text())
    state["config"]["lint_command"] = "exit 2"
    state_file.write_text(json.dumps(state))
    failed = CliRunner().invoke(cli, ["verify", run_id])
    assert failed.exit_code == 1
    document = json.loads(failed.output)
    assert (document["status"], document["lint"]["exit_code"]) == ("failed", 2)


@pytest.mark.parametrize("bad", ["../x", "a;b", "/etc/passwd"])
def test_cli_refuses_bad_run_ids(git_project: Path, bad: str) -> None:
    result = CliRunner().invoke(cli, ["verify", bad])
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["code"] == "INVALID_RUN_ID"
