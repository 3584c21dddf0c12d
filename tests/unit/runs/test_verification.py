"""Running the project's verification commands: order, output, timeouts, process groups."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers_review import configure, new_run
from helpers_runs import FakeClock, read_events

from fixloop.contracts.coordinator import Verification
from fixloop.runs import verification

START_S = 1_765_000_000.0


def test_steps_run_in_order_and_report(git_project: Path) -> None:
    configure(
        git_project,
        test_command="echo tests >> order.txt; echo 'all good'",
        lint_command="echo lint >> order.txt; echo 'E501 too long' >&2; exit 3",
        typecheck_command="echo typecheck >> order.txt",
    )
    clock = FakeClock(START_S)
    state = new_run(git_project, clock)
    result = verification.verify(state, clock=clock)
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
    result = verification.verify(new_run(git_project, clock), clock=clock)
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
    result = verification.verify(state, clock=clock)
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
    result = verification.verify(new_run(git_project, clock), clock=clock)
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
    result = verification.verify(new_run(git_project, clock), clock=clock)
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
    result = verification.verify(new_run(git_project, clock), clock=clock)
    assert result["tests"]["status"] == "passed"
    assert process_gone(int((git_project / "bg.pid").read_text()))


def test_commands_run_in_the_project_without_stdin(
    git_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(git_project, test_command="pwd; cat")
    elsewhere = git_project / "src"
    monkeypatch.chdir(elsewhere)
    clock = FakeClock(START_S)
    result = verification.verify(new_run(git_project, clock), clock=clock)
    assert result["tests"]["output_tail"] == f"{git_project}\n"
    assert result["tests"]["status"] == "passed"


def test_the_runner_leaves_the_run_state_alone(git_project: Path) -> None:
    configure(git_project, test_command="true")
    clock = FakeClock(START_S)
    state = new_run(git_project, clock)
    state_file = git_project / ".claude" / "fixloop" / "runs" / state["run_id"] / "state.json"
    before = state_file.read_bytes()
    assert verification.verify(state, clock=clock)["status"] == "passed"
    assert state_file.read_bytes() == before
