"""SIGTERM or SIGHUP while the engine runs the project's tests (how Claude Code ends a hook that runs too
long): the test command's process group dies with the engine, and the next `fixloop start` ends the
interrupted run and rolls back the fixer's edit that was never verified. Real processes throughout: the
fixer's edit goes through the edit hooks, the engine is `scripts/fixloop next`, the test command sleeps and
then writes a file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers_review import fixer_doc
from hook_helpers import PLUGIN_ROOT, HookEnv
from test_file_touch import edit_payload, run_hook
from test_user_prompt import prompt_payload
from workflows.flow_helpers import (
    CHANGED_APP,
    FIXABLE,
    next_action,
    record,
    review_project,
    review_round,
    start,
)

from fixloop.runs import lifecycle
from fixloop.runs.interrupted import BUSY_FILE
from fixloop.store import layout

# Quick while the code is unfixed (the review's first verification); after the fixer's edit it notes its
# shell's pid, sleeps, and then writes LATE, unless its process group is killed first.
TEST_COMMAND = "if grep -q FIXED src/app.py; then echo $$ > ../STARTED; sleep 3; echo late > LATE; fi"
WAIT_SECONDS = 60.0


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def fixed_and_recorded(hooks: HookEnv, monkeypatch: pytest.MonkeyPatch) -> str:
    """A review run of src/app.py at its fix, bound to the hooks' session: the fixer's edit went through
    the edit hooks and its answer is recorded; the verification of the edit is next. The run id."""
    from helpers_runs import git

    project = hooks.project
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(hooks.data))
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    monkeypatch.chdir(project)
    (project / "src" / "app.py").write_text("print('hi')\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "init")
    review_project(project, test_command=TEST_COMMAND, use_verifier=False)
    run_id = start(project)
    next_action(run_id)
    review_round(run_id, {"code-reviewer": [FIXABLE]})
    fix = next_action(run_id)
    assert [call["subagent_type"] for call in fix["calls"]] == ["fixloop:review-fixer"]
    lifecycle.store_for(project, run_id).update(
        lambda state: state.update(claude_session_id=hooks.session), action="bind"
    )
    layout.bind_session(project, hooks.session, run_id)
    app = project / "src" / "app.py"
    run_hook(hooks, edit_payload(hooks, "PreToolUse", app))
    app.write_text("FIXED\n")
    run_hook(hooks, edit_payload(hooks, "PostToolUse", app))
    # The fixer's answer typed outside Claude Code (the hooks' SubagentStop path is tested elsewhere).
    lifecycle.store_for(project, run_id).update(
        lambda state: state.update(claude_session_id=None), action="t"
    )
    code, document = record(run_id, "fixloop:review-fixer", fixer_doc({"FL-001": "succeeded"}))
    assert code == 0, document
    return run_id


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_during_the_tests_kills_them_and_the_next_start_rolls_the_edit_back(
    hooks: HookEnv, monkeypatch: pytest.MonkeyPatch, signum: signal.Signals
) -> None:
    project = hooks.project
    run_id = fixed_and_recorded(hooks, monkeypatch)
    run_dir = Path(layout.run_dir(project, run_id))
    env = {**hooks.env, "FIXLOOP_PYTHON": sys.executable}
    engine = subprocess.Popen(
        ["bash", str(PLUGIN_ROOT / "scripts" / "fixloop"), "next", run_id],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        started = project.parent / "STARTED"
        wait_for(lambda: started.exists() and started.read_text().strip(), "the test command to start")
        shell = int(started.read_text())
        engine.send_signal(signum)
        assert engine.wait(timeout=WAIT_SECONDS) != 0
    finally:
        if engine.poll() is None:
            engine.kill()
            engine.wait()
    # The test command's shell is gone before it could write LATE, and LATE is never written.
    wait_for(lambda: gone(shell), "the test command to end")
    assert not (project / "LATE").exists()
    state = lifecycle.load_run(project, run_id)
    assert state["status"] == "running"
    busy = json.loads((run_dir / BUSY_FILE).read_text())
    assert (busy["pid"], busy["doing"]) == (engine.pid, "the verification commands")
    assert (project / "src" / "app.py").read_text() == "FIXED\n"

    # The next start ends the run and rolls the unverified edit back, and says so.
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    assert hooks.run("UserPromptSubmit", prompt_payload(hooks, "/fixloop:review")).returncode == 0
    answer = subprocess.run(
        ["bash", str(PLUGIN_ROOT / "scripts" / "fixloop"), "start", "review"],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=120,
        check=False,
    )
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert (
        f"Warning RUN_INTERRUPTED: Run {run_id} was interrupted while the engine ran the verification "
        "commands; it is ended failed. The fixer's unverified edits were rolled back: src/app.py."
    ) in answer.stdout
    assert (project / "src" / "app.py").read_text() == CHANGED_APP
    ended = lifecycle.load_run(project, run_id)
    assert ended["status"] == "failed"
    assert ended["summary"] == {
        "interrupted": "the verification commands",
        "rolled_back": ["src/app.py"],
        "kept": [],
    }
    assert not (run_dir / BUSY_FILE).exists()
    assert not (project / "LATE").exists()


def test_a_run_whose_engine_still_works_is_left_alone(
    hooks: HookEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fixloop.runs.interrupted import end_interrupted_runs

    project = hooks.project
    run_id = fixed_and_recorded(hooks, monkeypatch)
    run_dir = Path(layout.run_dir(project, run_id))
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        note = {"pid": sleeper.pid, "doing": "the verification commands", "since_ms": 1}
        (run_dir / BUSY_FILE).write_text(json.dumps(note))
        assert end_interrupted_runs(project) == []
        assert lifecycle.load_run(project, run_id)["status"] == "running"
        assert (project / "src" / "app.py").read_text() == "FIXED\n"
    finally:
        sleeper.kill()
        sleeper.wait()
    assert [note["run_id"] for note in end_interrupted_runs(project)] == [run_id]
    assert (project / "src" / "app.py").read_text() == CHANGED_APP
