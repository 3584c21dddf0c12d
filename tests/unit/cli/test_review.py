"""`fixloop review ...` end to end on a temporary git project."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers_review import issue, reviewer_doc
from helpers_runs import LIB, FakeClock
from helpers_touches import agent_writes

from fixloop.cli import cli
from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.runs import lifecycle, trust
from fixloop.runs.config import COMMAND_FIELDS
from fixloop.store import layout, ledger

CR = "code-reviewer"


def invoke(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, list(args), input=stdin, env=env)
    try:
        document = json.loads(result.output)
    except json.JSONDecodeError:
        pytest.fail(f"not JSON (exit {result.exit_code}): {result.output!r} {result.exception!r}")
    return result.exit_code, document


def start_run(project: Path, config: dict[str, Any], *files: str, env: dict[str, str] | None = None) -> str:
    (project / "fixloop-config.json").write_text(json.dumps(config))
    commands = {step: config[field] for step, field in COMMAND_FIELDS.items() if config.get(field)}
    if commands:
        trust.approve(project, commands)  # the user wrote these commands and approves them
    args = ["run", "start", "--workflow", "review", "--config", "fixloop-config.json"]
    if files:
        args += ["--changed-files", *files]
    code, document = invoke(*args, env=env)
    assert code == 0, document
    run_id: str = document["run_id"]
    return run_id


def next_action(run_id: str) -> dict[str, Any]:
    code, document = invoke("review", "next", run_id)
    assert code == 0, document
    result: dict[str, Any] = document
    return result


def record(run_id: str, agent: str, document: Any, *extra: str) -> tuple[int, Any]:
    text = document if isinstance(document, str) else json.dumps(document)
    return invoke("review", "record", run_id, "--agent", agent, *extra, "-", stdin=text)


def events(project: Path, run_id: str) -> list[dict[str, Any]]:
    state = lifecycle.load_run(project, run_id)
    path = Path(state["logging"]["log_files"]["jsonl"])
    return [json.loads(line) for line in path.read_text().splitlines()]


def review_round(run_id: str, by_agent: dict[str, list[dict[str, Any]]]) -> None:
    for agent in REVIEWER_AGENTS:
        code, answer = record(run_id, agent, reviewer_doc(agent, by_agent.get(agent, [])))
        assert (code, answer["valid"]) == (0, True), answer


CHECK_APP = "! grep -q BROKEN src/app.py"


def test_fix_verify_fail_and_rollback_end_to_end(git_project: Path, fake_clock: FakeClock) -> None:
    (git_project / "README.md").write_text("# demo\nthe user's own uncommitted edit\n")
    (git_project / "scratch.txt").write_text("user scratch, untracked\n")
    run_id = start_run(git_project, {"test_command": CHECK_APP, "use_verifier": False}, "src/app.py")

    assert next_action(run_id) == {
        "action": "verify",
        "round": 0,
        "slot": "initial",
        "command": f"fixloop verify {run_id}",
        "next_command": f"fixloop review next {run_id}",
    }
    code, verified = invoke("verify", run_id)
    assert (code, verified["status"]) == (0, "passed")

    action = next_action(run_id)
    assert action["action"] == "review"
    assert action["round"] == 1
    assert action["agents"] == [f"fixloop:{agent}" for agent in REVIEWER_AGENTS]
    assert action["task"]["task_id"] == f"{run_id}-r1"
    assert action["task"]["working_directory"] == str(git_project)
    assert action["task"]["retry_context"] == {
        "attempt_number": 1,
        "previous_errors": [],
        "recovery_actions_taken": [],
    }
    for expected in (run_id, "- src/app.py", "confidence >= 80"):
        assert expected in action["prompt"]

    # an invalid answer first: exit 1, retry with a hint
    code, answer = record(
        run_id, CR, 'Here you go: {"status": "success", "agent": "code-reviewer", "issues": [{"id": 1}]}'
    )
    assert code == 1
    assert (
        answer["status"],
        answer["agent"],
        answer["round"],
        answer["valid"],
        answer["retry"],
        answer["attempt"],
    ) == (
        "recorded",
        CR,
        1,
        False,
        True,
        1,
    )
    assert answer["error"]["code"] == "SCHEMA_VIOLATION"
    assert answer["hint"]
    found = issue("CR-1", 1, "Prints instead of logging")
    review_round(run_id, {CR: [found]})

    fix = next_action(run_id)
    assert fix["action"] == "fix"
    assert fix["agent"] == "fixloop:review-fixer"
    assert [item["id"] for item in fix["issues"]] == ["FL-001"]
    snapshot_dir = Path(fix["snapshot"])
    assert snapshot_dir == Path(layout.run_dir(git_project, run_id)) / "snapshots" / "round-1"
    assert (snapshot_dir / "manifest.json").is_file()

    # the fixer breaks the app and creates a file (Write tool calls, seen by the hooks)
    agent_writes(git_project, snapshot_dir.parents[1], "src/app.py", "BROKEN\n")
    agent_writes(git_project, snapshot_dir.parents[1], "src/new.py", "created by the fixer\n")
    fixer = {
        "status": "success",
        "agent": "review-fixer",
        "results": [{"issue_id": "FL-001", "status": "succeeded", "files": ["src/app.py"]}],
        "files_modified": ["src/app.py"],
    }
    code, answer = record(run_id, "review-fixer", fixer)
    assert (code, answer["valid"]) == (0, True)

    assert next_action(run_id)["slot"] == "post_fix"
    code, verified = invoke("verify", run_id)
    assert (code, verified["tests"]["status"]) == (1, "failed")

    asked = next_action(run_id)
    assert asked["action"] == "ask_user"
    assert [item["label"] for item in asked["options"]] == ["rollback", "continue", "manual", "cancel"]
    assert asked["default"] == "rollback"
    state = lifecycle.load_run(git_project, run_id)
    assert state["review"]["rounds"][0]["fix"]["files_modified"] == ["src/app.py", "src/new.py"]

    code, chosen = invoke("review", "choose", run_id, "rollback")
    assert code == 0
    assert chosen["restored_files"] == ["src/app.py", "src/new.py"]
    assert (git_project / "src" / "app.py").read_text() == "print('hi')\n"
    assert not (git_project / "src" / "new.py").exists()
    assert (git_project / "README.md").read_text() == "# demo\nthe user's own uncommitted edit\n"
    assert (git_project / "scratch.txt").read_text() == "user scratch, untracked\n"

    stop = next_action(run_id)
    assert (stop["action"], stop["termination_reason"], stop["status"]) == (
        "stop",
        "verification_failed",
        "partial",
    )
    assert stop["report_command"] == f"fixloop review report {run_id}"

    code, report = invoke("review", "report", run_id)
    assert code == 0
    assert report["summary"]["termination_reason"] == "verification_failed"
    assert report["files_modified"] == []
    assert [item["id"] for item in report["remaining_issues"]] == ["FL-001"]
    assert report["verification"]["tests"]["status"] == "failed"

    kinds = [event["type"] for event in events(git_project, run_id)]
    for expected in ("REVIEW_FIX_ITERATION", "USER_INTERACTION", "REVIEW_COMPLETE"):
        assert expected in kinds
    complete = [event for event in events(git_project, run_id) if event["type"] == "REVIEW_COMPLETE"]
    assert complete[0]["termination_reason"] == "verification_failed"


def test_reports_in_every_format(git_project: Path, fake_clock: FakeClock) -> None:
    run_id = start_run(git_project, {"use_verifier": False}, "src/app.py")
    next_action(run_id)
    invoke("verify", run_id)
    next_action(run_id)
    review_round(run_id, {CR: [issue("CR-1", 1, "Prints instead of logging", auto_fixable=False)]})
    assert next_action(run_id)["termination_reason"] == "no_fixable_issues"

    code, array = invoke("review", "report", run_id, "--format", "array")
    assert code == 0
    assert array == [
        {
            "relevantFile": "src/app.py",
            "existingCode": "",
            "suggestionContent": "Prints instead of logging",
            "improvedCode": "Fix: Prints instead of logging",
            "label": "Quality",
            "suggestionLine": 1,
        }
    ]
    result = CliRunner().invoke(cli, ["review", "report", run_id, "--format", "markdown"])
    assert result.exit_code == 0
    assert result.output.startswith(f"# fixloop review report — run {run_id}\n")
    assert "## Remaining issues" in result.output
    code, written = invoke(
        "review", "report", run_id, "--format", "sarif", "--output", "reports/review.sarif"
    )
    assert code == 0
    target = git_project / "reports" / "review.sarif"
    assert written == {"status": "written", "run_id": run_id, "format": "sarif", "output": str(target)}
    sarif = json.loads(target.read_text())
    assert sarif["runs"][0]["results"][0]["ruleId"] == "fixloop/code-reviewer/bug"
    # a path the user names may be outside the project; inside .git it is refused
    code, written = invoke("review", "report", run_id, "--output", "../outside.json")
    outside = git_project.parent / "outside.json"
    assert (code, written["output"]) == (0, str(outside))
    assert json.loads(outside.read_text())["remaining_issues"][0]["id"] == "FL-001"
    code, refused = invoke("review", "report", run_id, "--output", ".git/hooks/pre-commit")
    assert (code, refused["error"]["code"]) == (2, "INVALID_OUTPUT")
    assert not (git_project / ".git" / "hooks" / "pre-commit").exists()

    code, status = invoke("review", "status", run_id)
    assert code == 0
    assert (status["finished"], status["termination_reason"]) == (True, "no_fixable_issues")


def test_no_changes(git_project: Path, fake_clock: FakeClock) -> None:
    run_id = start_run(git_project, {})
    stop = next_action(run_id)
    assert (stop["action"], stop["termination_reason"], stop["status"]) == ("stop", "no_changes", "success")
    code, report = invoke("review", "report", run_id)
    assert code == 0
    assert report["message"] == "No changed files to review."
    assert report["summary"]["termination_reason"] == "no_changes"


def test_default_choice_without_a_user(git_project: Path, fake_clock: FakeClock) -> None:
    run_id = start_run(
        git_project, {"test_command": "false", "on_verification_failure": "continue"}, "src/app.py"
    )
    next_action(run_id)
    code, _verified = invoke("verify", run_id)
    assert code == 1
    asked = next_action(run_id)
    assert (asked["action"], asked["default"]) == ("ask_user", "continue")
    code, chosen = invoke("review", "choose", run_id, "--default")
    assert code == 0
    assert (chosen["choice"], chosen["default"]) == ("continue", True)
    assert next_action(run_id)["action"] == "review"
    code, refused = invoke("review", "choose", run_id, "continue")
    assert (code, refused["error"]["code"]) == (2, "NO_PENDING_QUESTION")


def test_record_refusals(git_project: Path, fake_clock: FakeClock) -> None:
    run_id = start_run(git_project, {}, "src/app.py")
    code, refused = record(run_id, "linter", reviewer_doc(CR))
    assert (code, refused["error"]["code"]) == (2, "UNKNOWN_AGENT")
    code, refused = record(run_id, CR, reviewer_doc(CR))
    assert (code, refused["error"]["code"]) == (2, "UNEXPECTED_AGENT_RESULT")
    code, refused = invoke("review", "next", "nothex!!")
    assert (code, refused["error"]["code"]) == (2, "INVALID_RUN_ID")


def test_provenance_inside_claude_code(git_project: Path, fake_clock: FakeClock) -> None:
    session = {"CLAUDE_CODE_SESSION_ID": "session-1"}
    run_id = start_run(git_project, {}, "src/app.py", env=session)
    next_action(run_id)
    invoke("verify", run_id)
    next_action(run_id)
    text = json.dumps(reviewer_doc(CR, [issue("CR-1", 1, "Prints instead of logging")]))

    code, refused = record(run_id, CR, text)
    assert (code, refused["error"]["code"]) == (2, "UNVERIFIED_AGENT_RESULT")

    run_dir = Path(layout.run_dir(git_project, run_id))
    ledger.append(
        run_dir,
        {
            "kind": "stop",
            "ts_ms": 1,
            "agent_type": "fixloop:code-reviewer",
            "agent": CR,
            "agent_id": "agent-cr",
            "message_sha256": hashlib.sha256(text.encode()).hexdigest(),
        },
    )
    code, answer = record(run_id, CR, text + "\n")  # a trailing newline added by a shell is fine
    assert (code, answer["valid"]) == (0, True)
    code, refused = record(run_id, CR, text.replace("Prints", "Logs"))  # not what the agent said
    assert (code, refused["error"]["code"]) == (2, "UNVERIFIED_AGENT_RESULT")

    agent = "silent-failure-hunter"
    hook_text = json.dumps(reviewer_doc(agent))
    code, refused = record(run_id, agent, hook_text, "--from-hook", "agent-sfh")  # no stop line yet
    assert (code, refused["error"]["code"]) == (2, "UNVERIFIED_AGENT_RESULT")
    ledger.append(
        run_dir,
        {
            "kind": "stop",
            "ts_ms": 2,
            "agent_type": "fixloop:silent-failure-hunter",
            "agent": agent,
            "agent_id": "agent-sfh",
            "message_sha256": hashlib.sha256(hook_text.encode()).hexdigest(),
        },
    )
    code, answer = record(run_id, agent, hook_text, "--from-hook", "agent-sfh")
    assert (code, answer["valid"]) == (0, True)
    code, refused = record(run_id, agent, reviewer_doc(agent), "--from-hook", "agent-cr")
    assert (code, refused["error"]["code"]) == (2, "AGENT_MISMATCH")
    state = lifecycle.load_run(git_project, run_id)
    records = state["review"]["rounds"][0]["records"]
    assert (records[CR]["provenance"], records[agent]["provenance"], records[agent]["agent_id"]) == (
        "ledger",
        "hook",
        "agent-sfh",
    )


def test_a_hook_record_reads_the_ledger_once(
    git_project: Path, fake_clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = start_run(git_project, {}, "src/app.py", env={"CLAUDE_CODE_SESSION_ID": "session-1"})
    next_action(run_id)
    invoke("verify", run_id)
    next_action(run_id)
    text = json.dumps(reviewer_doc(CR))
    run_dir = Path(layout.run_dir(git_project, run_id))
    ledger.append(
        run_dir,
        {
            "kind": "stop",
            "ts_ms": 1,
            "agent_type": "fixloop:code-reviewer",
            "agent": CR,
            "agent_id": "agent-cr",
            "message_sha256": hashlib.sha256(text.encode()).hexdigest(),
        },
    )
    reads: list[object] = []
    read = ledger.read

    def counting_read(directory: Any) -> list[dict[str, Any]]:
        reads.append(directory)
        return read(directory)

    monkeypatch.setattr(ledger, "read", counting_read)
    code, answer = record(run_id, CR, text, "--from-hook", "agent-cr")
    assert (code, answer["valid"]) == (0, True)
    assert len(reads) == 1  # the agent id check and the message check share one read


def test_six_concurrent_records_lose_nothing(git_project: Path, fake_clock: FakeClock) -> None:
    run_id = start_run(git_project, {"use_verifier": False}, "src/app.py")
    next_action(run_id)
    invoke("verify", run_id)
    next_action(run_id)
    env = {**os.environ, "PYTHONPATH": str(LIB), "CLAUDE_PROJECT_DIR": str(git_project)}
    inputs = []
    for index, agent in enumerate(REVIEWER_AGENTS):
        found = issue(f"I{index}", 10 * index + 1, f"Distinct problem number {'abcdef'[index]}")
        path = git_project / f"answer-{agent}.json"
        path.write_text(json.dumps(reviewer_doc(agent, [found])))
        inputs.append((agent, path))
    processes = []
    for agent, path in inputs:  # all six started before any is waited for
        with path.open("rb") as handle:
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "fixloop", "review", "record", run_id, "--agent", agent, "-"],
                    stdin=handle,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env,
                    cwd=git_project,
                )
            )
    answers = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()
        answers.append(json.loads(out))
    assert sorted(answer["agent"] for answer in answers) == sorted(REVIEWER_AGENTS)
    _code, status = invoke("review", "status", run_id)
    assert status["round"]["recorded"] == {
        agent: {"valid": True, "attempts": 1} for agent in sorted(REVIEWER_AGENTS)
    }
    history = lifecycle.store_for(git_project, run_id).history()
    assert [item["action"] for item in history].count("review_record") == 6
    fix = next_action(run_id)
    assert len(fix["issues"]) == 6
    assert sorted(item["agents"][0] for item in fix["issues"]) == sorted(REVIEWER_AGENTS)
