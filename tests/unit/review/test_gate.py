"""The verification gate: slots, and `fixloop verify` feeding them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers_review import (
    CR,
    A,
    Loop,
    all_fixed,
    configure,
    make_state,
    new_run,
    verification,
)
from helpers_runs import FakeClock, read_events, sha256_tree

from fixloop.cli import cli
from fixloop.contracts.events import EVENT_MODELS
from fixloop.core.engine_path import ENGINE
from fixloop.core.errors import FixloopError
from fixloop.review import gate
from fixloop.review.gate import attach_verification, verification_slot
from fixloop.runs import ending, lifecycle, trust

START_S = 1_765_000_000.0


def test_attach_verification_slots() -> None:
    state = make_state(use_verifier=False)
    assert verification_slot(state) is None  # nobody asked: an earlier phase's verify
    attach_verification(state, verification(False))
    assert state["review"] == {}
    loop = Loop(state)
    assert loop.next()["slot"] == "initial"
    assert verification_slot(loop.state) == "initial"
    loop.verify(True)
    assert loop.review_doc["gate"]["passed"] is True
    assert verification_slot(loop.state) is None
    unchanged = copy.deepcopy(loop.state)
    attach_verification(loop.state, verification(False))  # nobody waits: ignored
    assert loop.state == unchanged
    loop.next()
    loop.review({CR: [A]})
    assert loop.next()["action"] == "fix"
    assert verification_slot(loop.state) is None  # the fixer has not answered
    loop.record("review-fixer", all_fixed(["FL-001"]))
    assert verification_slot(loop.state) == "post_fix"  # verify may run before `next`
    loop.verify(False)
    asked = loop.next()
    assert (asked["action"], asked["context"]) == ("ask_user", "review_verification_failed")


# ---- `fixloop verify`: run the commands, store the result, attach it to the loop --------------------------


def test_result_is_stored_and_logged(git_project: Path) -> None:
    configure(git_project, test_command="true", typecheck_command="false")
    clock = FakeClock(START_S)
    state = new_run(git_project, clock, files=["a.py", "b.py"])
    result = gate.verify_run(git_project, state["run_id"], clock=clock)
    assert result["run_id"] == state["run_id"]
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


def test_the_result_is_attached_in_the_same_state_update(git_project: Path) -> None:
    configure(git_project, test_command="true")
    clock = FakeClock(START_S)
    run_id = new_run(git_project, clock)["run_id"]
    asked = CliRunner().invoke(cli, ["review", "next", run_id])
    assert json.loads(asked.output)["slot"] == "initial", asked.output
    result = gate.verify_run(git_project, run_id, clock=clock)
    stored = lifecycle.load_run(git_project, run_id)
    expected = {key: value for key, value in result.items() if key != "run_id"}
    assert stored["verification"] == expected
    assert (stored["review"]["gate"]["verification"], stored["review"]["gate"]["passed"]) == (expected, True)
    last = lifecycle.store_for(git_project, run_id).history()[-1]
    assert last["action"] == "verify"
    assert {"review", "verification"} <= set(last["changed"])


def test_a_refusing_attach_leaves_the_state_unchanged(
    git_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def attach_verification(state: dict[str, Any], result: dict[str, Any]) -> None:
        raise FixloopError("NOT_EXPECTED", "no verification is due")

    monkeypatch.setattr(gate, "attach_verification", attach_verification)
    configure(git_project, test_command="true")
    clock = FakeClock(START_S)
    run_id = new_run(git_project, clock)["run_id"]
    state_file = git_project / ".claude" / "fixloop" / "runs" / run_id / "state.json"
    before = state_file.read_bytes()
    with pytest.raises(FixloopError) as caught:
        gate.verify_run(git_project, run_id, clock=clock)
    assert caught.value.code == "NOT_EXPECTED"
    assert state_file.read_bytes() == before


def test_the_review_takes_the_initial_gate(git_project: Path) -> None:
    configure(git_project, test_command="true")
    clock = FakeClock(START_S)
    run_id = new_run(git_project, clock)["run_id"]
    assert verification_slot(lifecycle.load_run(git_project, run_id)) is None  # not asked for yet
    asked = CliRunner().invoke(cli, ["review", "next", run_id])
    assert json.loads(asked.output)["action"] == "verify", asked.output
    assert verification_slot(lifecycle.load_run(git_project, run_id)) == "initial"
    gate.verify_run(git_project, run_id, clock=clock)
    assert verification_slot(lifecycle.load_run(git_project, run_id)) is None


def test_an_ended_run_is_not_verified(git_project: Path) -> None:
    configure(git_project, test_command="touch ran.txt")
    clock = FakeClock(START_S)
    run_id = new_run(git_project, clock)["run_id"]
    ending.end_run(git_project, run_id, "failed", clock=clock)
    before = sha256_tree(git_project / ".claude")
    with pytest.raises(FixloopError) as caught:
        gate.verify_run(git_project, run_id, clock=clock)
    assert caught.value.code == "RUN_ALREADY_ENDED"
    assert not (git_project / "ran.txt").exists()
    assert sha256_tree(git_project / ".claude") == before


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
    refused = CliRunner().invoke(cli, ["verify", run_id])  # a command nobody approved
    assert refused.exit_code == 2
    error = json.loads(refused.output)["error"]
    assert (error["code"], error["commands"]) == (
        "VERIFY_COMMANDS_UNTRUSTED",
        {"tests": "true", "lint": "exit 2"},
    )
    trust.approve(git_project, {"tests": "true", "lint": "exit 2"})
    failed = CliRunner().invoke(cli, ["verify", run_id])
    assert failed.exit_code == 1
    document = json.loads(failed.output)
    assert (document["status"], document["lint"]["exit_code"]) == ("failed", 2)


def test_commands_from_a_repository_run_only_once_approved(git_project: Path, fake_clock: FakeClock) -> None:
    marker = git_project / "ran"
    configure(git_project, approve=False, test_command=f"touch {marker}")
    run_id = new_run(git_project, fake_clock)["run_id"]
    refused = CliRunner().invoke(cli, ["verify", run_id])
    assert refused.exit_code == 2
    error = json.loads(refused.output)["error"]
    assert error["code"] == "VERIFY_COMMANDS_UNTRUSTED"
    assert error["message"].endswith(
        f'Approve them with `"{ENGINE}" trust` in the project, or start the command with --trust-config '
        "(approved for that run only)."
    )
    assert not marker.exists()
    trust.approve(git_project, {"tests": f"touch {marker}"})
    assert CliRunner().invoke(cli, ["verify", run_id]).exit_code == 0
    assert marker.exists()


@pytest.mark.parametrize("bad", ["../x", "a;b", "/etc/passwd"])
def test_cli_refuses_bad_run_ids(git_project: Path, bad: str) -> None:
    result = CliRunner().invoke(cli, ["verify", bad])
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["code"] == "INVALID_RUN_ID"
