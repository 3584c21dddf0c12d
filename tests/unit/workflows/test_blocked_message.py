"""A review stopped by failing checks says why (the command, its exit, its last lines) and how to go on;
--no-gate reviews anyway."""

from __future__ import annotations

from pathlib import Path

from helpers_runs import FakeClock
from workflows.flow_helpers import PYTHON, agents_of, events, next_action, review_project, state

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.core.engine_path import engine_command
from fixloop.runs import creation
from fixloop.runs.typed_command import parse_typed_command

SCRIPT = 'print("collecting"); print("/usr/bin/python3: No module named pytest"); raise SystemExit(1)'
MISSING_PYTEST = f"{PYTHON} -c '{SCRIPT}'"


def start(root: Path, no_gate: bool = False) -> str:
    started = creation.start_run("review", root=root, git_base="", claude_session_id="", no_gate=no_gate)
    run_id: str = started["state"]["run_id"]
    return run_id


def test_a_review_blocked_by_a_failing_check_names_it_its_last_lines_and_the_ways_on(
    git_project: Path, fake_clock: FakeClock
) -> None:
    review_project(git_project, test_command=MISSING_PYTEST)
    run_id = start(git_project)
    fake_clock.advance(1)
    stop = next_action(run_id)
    assert stop["action"] == "stop"
    lines = state(git_project, run_id)["final_message"].splitlines()
    assert lines[0] == f"fixloop review {run_id}: partial (verification_failed)"
    at = lines.index(f"Check tests failed: `{MISSING_PYTEST}` (exit code 1). Its last lines:")
    assert lines[at + 1 : at + 4] == [
        "    collecting",
        "    /usr/bin/python3: No module named pytest",
        "To go on: fix what fails and run the command again; or, if a command is wrong for this project, "
        f"change it in .claude/fixloop.json and approve it with `{engine_command('trust')}`; "
        "or review without this gate: `/fixloop:review --no-gate`.",
    ]


def test_no_gate_reviews_a_project_whose_checks_fail(git_project: Path, fake_clock: FakeClock) -> None:
    typed = parse_typed_command("/fixloop:review --no-gate src", "review")
    assert (typed.options, typed.text) == ({"no_gate": True}, "src")
    review_project(git_project, test_command=MISSING_PYTEST)
    run_id = start(git_project, no_gate=True)
    fake_clock.advance(1)
    action = next_action(run_id)
    assert (action["action"], agents_of(action)) == ("agents", list(REVIEWER_AGENTS))
    warned = [event for event in events(git_project, run_id) if event.get("type") == "WARNING"]
    assert [
        (event["code"], event["message"]) for event in warned if event["code"].startswith("VERIFICATION")
    ] == [
        (
            "VERIFICATION_GATE_SKIPPED",
            "The checks fail before the review (tests failed (exit code 1)); --no-gate: reviewing anyway.",
        )
    ]
