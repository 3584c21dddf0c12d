"""The hooks inside the real Claude Code CLI (pinned, tests/e2e/node_modules) driven by a scripted model.

One session: a Bash call starts a `review` run and has `fixloop next` dispatch review round 1 with the
real engine; then one message calls a foreground code-reviewer (whose first answer breaks its contract, so
SubagentStop blocks it once) and a background test-analyzer. Checks what only the real CLI can show: agent
ids agree across hooks, the block reaches the subagent, SubagentStart's task reaches it, PreToolUse's
model is the one it runs on, PostToolUse's one line replaces the answer the main thread reads, the Bash
tool finds the data directory SessionStart exported.

A second session plays a fix round: the fixer Edits a file, the Edit hooks record the touch, and the rollback
after the failed verification restores the file from what they kept.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_runner import ClaudeRunner, find_claude_binary
from hook_helpers import PLUGIN_ROOT
from scripted_api import Reply, Rule, Script, ScriptedAPI, agent_call, bash_call

from fixloop.core.agent_names import REVIEWER_AGENTS

VALID_REVIEW = {"status": "success", "agent": "code-reviewer", "issues": [], "positive_observations": ["ok"]}
VALID_TESTS = {"status": "success", "agent": "test-analyzer", "issues": []}


@pytest.fixture
def claude_bin() -> Path:
    found = find_claude_binary()
    if found is None:
        message = "Claude Code CLI not installed: run `npm ci --prefix tests/e2e` (or set FIXLOOP_CLAUDE_BIN)"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def test_subagent_hooks_in_a_real_session(claude_bin: Path, tmp_path: Path) -> None:
    fixloop = PLUGIN_ROOT / "scripts" / "fixloop"
    # The user approves the project's verification commands first (`fixloop trust`): a headless run that
    # would run unapproved commands fails at once with VERIFY_COMMANDS_UNTRUSTED and dispatches nothing.
    setup = (
        f"{fixloop} trust >/dev/null"
        f" && R=$({fixloop} run start --workflow review --changed-files inventory/stock.py"
        " | python3 -c \"import json,sys; print(json.load(sys.stdin)['run_id'])\")"
        f' && {fixloop} next $R >/dev/null; echo "RUN=$R DATA=$FIXLOOP_DATA"'
    )
    rules = [
        Rule(Reply.tools(bash_call(setup)), name="setup", subagent=False, has_tool_results=False, times=1),
        Rule(
            Reply.tools(
                agent_call("fixloop:code-reviewer", "Review inventory/stock.py", description="review fg"),
                agent_call(
                    "fixloop:test-analyzer", "Analyze the tests", description="review bg", background=True
                ),
            ),
            name="dispatch",
            subagent=False,
            tool_result_contains="RUN=",
        ),
        Rule(
            Reply.text("I found nothing, all good."),
            name="bad",
            subagent=True,
            prompt_contains="inventory",
            times=1,
        ),
        Rule(Reply.text(json.dumps(VALID_REVIEW)), name="good", subagent=True, prompt_contains="inventory"),
        Rule(Reply.text(json.dumps(VALID_TESTS)), name="tests", subagent=True),
        Rule(Reply.text("done"), name="end", subagent=False),
    ]
    log = tmp_path / "requests.jsonl"
    api = ScriptedAPI(Script(rules), log_path=log).start()
    try:
        runner = ClaudeRunner(
            binary=claude_bin,
            work_dir=tmp_path,
            base_url=api.url,
            request_log=log,
            env={"FIXLOOP_PYTHON": sys.executable},
        )
        project = runner.new_project()
        # The main thread runs on haiku; the dispatch asks for sonnet (the reviewers' default model).
        result = runner.run(
            "review",
            project_dir=project,
            allowed_tools=["Bash"],
            extra_args=["--model", "haiku"],
            timeout=240,
        )
    finally:
        api.stop()
    assert [(rule.name, rule.answered) for rule in rules] == [
        ("setup", 1),
        ("dispatch", 1),
        ("bad", 1),
        ("good", 1),
        ("tests", 1),
        ("end", 4),
    ], result.summary()

    (run_dir,) = (project / ".claude" / "fixloop" / "runs").iterdir()
    state = json.loads((run_dir / "state.json").read_text())
    assert state["claude_session_id"] == result.session_id
    ledger = [json.loads(line) for line in (run_dir / "agents.jsonl").read_text().splitlines()]

    def lines(agent: str) -> list[dict[str, Any]]:
        return [line for line in ledger if line["agent"] == agent]

    # Each SubagentStop also writes the agent's usage so far, read from its transcript.
    reviewer = lines("code-reviewer")
    kinds = ["call", "start", "stop", "usage", "stop", "usage", "result"]
    assert [line["kind"] for line in reviewer] == kinds
    call, start, first_stop, _, second_stop, usage, done = reviewer
    assert usage["agent_id"] == second_stop["agent_id"]
    assert (first_stop["stop_hook_active"], second_stop["stop_hook_active"]) == (False, True)
    assert start["agent_id"] == first_stop["agent_id"] == second_stop["agent_id"] == done["agent_id"]
    assert done["duration_ms"] == done["ts_ms"] - call["ts_ms"]

    # The call asked for the background; the PreToolUse hook ran it in the foreground, so its answer came
    # back as the tool result (no launch), with the next step.
    analyzer = lines("test-analyzer")
    assert [line["kind"] for line in analyzer] == ["call", "start", "stop", "usage", "result"]
    by_kind = {line["kind"]: line for line in analyzer}
    assert by_kind["call"]["background"] is False
    assert by_kind["start"]["agent_id"] == by_kind["stop"]["agent_id"] == by_kind["result"]["agent_id"]

    records = state["review"]["rounds"][-1]["records"]
    assert (records["code-reviewer"]["valid"], records["code-reviewer"]["invalid_attempts"]) == (True, 1)
    assert records["code-reviewer"]["provenance"] == "hook"
    assert records["test-analyzer"]["valid"] is True

    # The block reached the subagent as its next user turn.
    bodies = [json.loads(line)["body"] for line in log.read_text().splitlines()]
    assert any("fixloop rejected your final answer" in json.dumps(body) for body in bodies)
    # Each reviewer started with its task, on the model of the dispatch.
    task = f"fixloop run {state['run_id']}: review round 1."
    with_task = [body for body in bodies if task in json.dumps(body)]
    assert with_task and all("sonnet" in body["model"] for body in with_task), [b["model"] for b in bodies]
    # The main thread read the one line, not the reviewer's answer.
    line = f"code-reviewer: recorded, 0 issues (run {state['run_id']})"
    main = [json.dumps(body) for body in bodies if "haiku" in body["model"]]
    assert any(line in text for text in main)
    assert not any("positive_observations" in text for text in main)
    # The Bash tool found the data directory that SessionStart exported (not ~/.cache/fixloop).
    assert any("DATA=" in json.dumps(body) and "plugins/data/fixloop" in json.dumps(body) for body in bodies)

    events = [
        json.loads(line) for line in Path(state["logging"]["log_files"]["jsonl"]).read_text().splitlines()
    ]
    kinds = [event["type"] for event in events]
    assert kinds.count("REVIEW_PARALLEL_START") == kinds.count("REVIEW_PARALLEL_END") == 1
    assert kinds.count("AGENT_CALL") == kinds.count("AGENT_RESULT") == 2
    (end,) = [event for event in events if event["type"] == "REVIEW_PARALLEL_END"]
    assert sorted(r["agent"] for r in end["results"]) == ["code-reviewer", "test-analyzer"]
    assert all(r["status"] == "success" for r in end["results"])

    # The main thread made 2 of the step's 6 calls and stopped ("done") three times: the engine handed the
    # 4 missing calls out again each time, then went on without them (too few reviewers: the run fails),
    # and sent the main thread back once more because it ended without the final message.
    missing = ["silent-failure-hunter", "code-simplifier", "comment-analyzer", "type-design-analyzer"]
    assert [step["agents"] for step in state["flow"]["history"]] == [list(REVIEWER_AGENTS), *[missing] * 3]
    warnings = [(e["code"], e.get("step")) for e in events if e["type"] == "WARNING"]
    assert warnings == [
        ("AGENTS_MISSING", 1),
        ("AGENTS_MISSING", 2),
        ("AGENTS_MISSING", 3),
        ("AGENTS_NOT_CALLED", 1),
    ]
    assert (state["status"], state["flow"]["outcome"]["reason"]) == ("failed", "INSUFFICIENT_COVERAGE")
    assert f"Missing: {', '.join(missing)}, never called (review round 1, step 1)." in state["final_message"]
    feedback = [b for b in bodies if "haiku" in b["model"] and "Stop hook feedback" in json.dumps(b)]
    assert feedback and state["final_message"].split("\n")[0] in json.dumps(feedback[-1], ensure_ascii=False)


def fix_round_in(project: Path, session: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, Any]]:
    """A review run of a change to src/app.py, brought by hand to its fix dispatch, then bound to the Claude
    Code session `session` (unattended: a failed verification takes the default, rollback). (run id, the
    fix action)."""
    from helpers_runs import git
    from workflows.flow_helpers import FIXABLE, next_action, review_project, review_round, start

    from fixloop.runs import lifecycle
    from fixloop.store import layout

    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('hi')\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "init")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    monkeypatch.chdir(project)
    review_project(project, test_command="! grep -q BROKEN src/app.py", use_verifier=False)
    run_id = start(project)
    next_action(run_id)
    review_round(run_id, {"code-reviewer": [FIXABLE]})
    action = next_action(run_id)
    lifecycle.store_for(project, run_id).update(
        lambda state: state.update(claude_session_id=session), action="bind"
    )
    layout.bind_session(project, session, run_id)
    return run_id, action


def test_the_fixers_edit_is_recorded_and_rolled_back_in_a_real_session(
    claude_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fixer Reads and Edits src/app.py in a real session; the hooks record the touch with its agent id;
    the verification that `fixloop next` runs from the Agent result's hook fails, and the rollback restores
    the file from what the hook kept."""
    import uuid

    from helpers_review import fixer_doc
    from scripted_api import tool_use
    from workflows.flow_helpers import CHANGED_APP

    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "approvals"))
    session = str(uuid.uuid4())
    project = (tmp_path / "project").resolve()
    run_id, action = fix_round_in(project, session, monkeypatch)
    (call,) = action["calls"]
    assert call["subagent_type"] == "fixloop:review-fixer"
    app = str(project / "src" / "app.py")
    fixer_steps = [
        Reply.tools(tool_use("Read", {"file_path": app})),
        Reply.tools(
            tool_use(
                "Edit",
                {
                    "file_path": app,
                    "old_string": "print('hello')",
                    "new_string": "BROKEN",
                    "replace_all": False,
                },
            )
        ),
        Reply.text(json.dumps(fixer_doc({"FL-001": "succeeded"}))),
    ]
    rules = [
        Rule(
            Reply.tools(agent_call(call["subagent_type"], call["prompt"], description=call["description"])),
            name="dispatch",
            subagent=False,
            has_tool_results=False,
        ),
        Rule(lambda _request, index: fixer_steps[index], name="fixer", subagent=True, times=len(fixer_steps)),
        Rule(Reply.text("done"), name="end", subagent=False),
    ]
    log = tmp_path / "requests.jsonl"
    api = ScriptedAPI(Script(rules), log_path=log).start()
    try:
        runner = ClaudeRunner(
            binary=claude_bin,
            work_dir=tmp_path,
            base_url=api.url,
            request_log=log,
            env={"FIXLOOP_PYTHON": sys.executable},
        )
        result = runner.run(
            "fix",
            project_dir=project,
            permission_mode="acceptEdits",
            extra_args=["--session-id", session],
            timeout=240,
        )
    finally:
        api.stop()
    assert [(rule.name, rule.answered) for rule in rules] == [
        ("dispatch", 1),
        ("fixer", 3),
        ("end", 1),
    ], result.summary()

    run_dir = project / ".claude" / "fixloop" / "runs" / run_id
    ledger = [json.loads(line) for line in (run_dir / "agents.jsonl").read_text().splitlines()]
    (start,) = [line for line in ledger if line["kind"] == "start"]
    touch, wrote = [line for line in ledger if line["kind"] in ("touch", "wrote")]
    assert (touch["agent_type"], touch["agent_id"], touch["tool"]) == (
        "fixloop:review-fixer",
        start["agent_id"],
        "Edit",
    )
    assert (touch["window"], touch["path"], touch["first"]) == ("round-1", "src/app.py", True)
    assert (wrote["agent_id"], wrote["path"], wrote["tool_use_id"]) == (
        start["agent_id"],
        "src/app.py",
        touch["tool_use_id"],
    )

    state = json.loads((run_dir / "state.json").read_text())
    (rnd,) = state["review"]["rounds"]
    assert rnd["fix"]["files_changed"] == ["src/app.py"]
    assert (rnd["verification_passed"], rnd["choice"], rnd["rolled_back"]) == (False, "rollback", True)
    assert rnd["rollback_files"] == ["src/app.py"]
    assert (rnd["rollback"]["kept"], rnd["rollback"]["left_as_is"]) == ([], [])
    assert (project / "src" / "app.py").read_text() == CHANGED_APP
    events = [
        json.loads(line) for line in Path(state["logging"]["log_files"]["jsonl"]).read_text().splitlines()
    ]
    assert [event for event in events if event["type"] == "WARNING"] == []
