"""Agents that only read, in the real CLI: a reviewer's Bash call of a command that is not read-only is
refused by fixloop's PreToolUse hook (readonly) under every permission mode `-p` takes, with Bash allowed;
its read-only command and its Read call still work.

Two ways a reviewer runs: as a subagent the main thread calls, and as the session's own agent (`--agent
fixloop:code-reviewer`). In `plan` and `auto` mode the CLI (2.1.328, on a local endpoint) refuses every
subagent call itself, so there the reviewer runs only the second way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixloop_session import MakeRunner, StartAPI
from scripted_api import Reply, Request, Rule, Script, ToolResult, agent_call, bash_call, tool_use
from test_hostile_input import MODES

PROBE = "Check inventory/stock.py for defects (probe)."
WRITE = "touch PWNED"
READ_ONLY = "git log --oneline -1"
REFUSED = "fixloop: code-reviewer only reads, so its Bash calls are held to read-only commands"
VALID_REVIEW = {"status": "success", "agent": "code-reviewer", "issues": [], "positive_observations": ["ok"]}
NO_SUBAGENTS = ("plan", "auto")


def probe(project: Path) -> Reply:
    return Reply.tools(
        bash_call(WRITE, id="toolu_write"),
        bash_call(READ_ONLY, id="toolu_git"),
        tool_use("Read", {"file_path": str(project / "inventory" / "stock.py")}, id="toolu_read"),
    )


def probe_results(requests: list[Request]) -> dict[str, ToolResult]:
    (after,) = [r for r in requests if any(t.tool_use_id == "toolu_write" for t in r.tool_results)]
    return {item.tool_use_id: item for item in after.tool_results}


def assert_write_refused_and_reads_work(results: dict[str, ToolResult], project: Path) -> None:
    assert not (project / "PWNED").exists()
    assert results["toolu_write"].is_error
    assert REFUSED in results["toolu_write"].text
    assert not results["toolu_git"].is_error, results["toolu_git"].text
    assert results["toolu_git"].text.strip().endswith("sample project")
    assert not results["toolu_read"].is_error, results["toolu_read"].text
    assert "def " in results["toolu_read"].text


@pytest.mark.parametrize("mode", MODES)
def test_a_reviewer_subagents_write_is_refused_and_its_reads_work(
    mode: str, start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    api = start_api(Script([]))
    runner = make_runner(api, shared_plugin_data=shared_plugin_data, timeout=120.0)
    project = runner.new_project()
    rules = [
        Rule(
            Reply.tools(agent_call("fixloop:code-reviewer", PROBE, description="review")),
            name="call",
            subagent=False,
            has_tool_results=False,
            times=1,
        ),
        Rule(probe(project), name="probe", subagent=True, has_tool_results=False, times=1),
        Rule(Reply.text(json.dumps(VALID_REVIEW)), name="answer", subagent=True, has_tool_results=True),
        Rule(Reply.text("done"), name="end", subagent=False),
    ]
    api.script = Script(rules)
    result = runner.run(
        "review",
        project_dir=project,
        allowed_tools=["Agent", "Bash", "Read"],
        permission_mode=mode,
        sandbox=True,
    )
    answered = [(rule.name, rule.answered) for rule in rules]
    if mode in NO_SUBAGENTS:
        assert answered == [("call", 1), ("probe", 0), ("answer", 0), ("end", 1)], result.summary()
        assert not (project / "PWNED").exists()
        return
    assert answered == [("call", 1), ("probe", 1), ("answer", 1), ("end", 1)], result.summary()
    assert_write_refused_and_reads_work(probe_results([r for r in api.requests if r.is_subagent]), project)


@pytest.mark.parametrize("mode", MODES)
def test_a_reviewer_sessions_write_is_refused_and_its_reads_work(
    mode: str, start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    api = start_api(Script([]))
    runner = make_runner(api, shared_plugin_data=shared_plugin_data, timeout=120.0)
    project = runner.new_project()
    rules = [
        Rule(probe(project), name="probe", has_tool_results=False, times=1),
        Rule(Reply.text(json.dumps(VALID_REVIEW)), name="answer", has_tool_results=True),
    ]
    api.script = Script(rules)
    result = runner.run(
        PROBE,
        project_dir=project,
        allowed_tools=["Bash", "Read"],
        permission_mode=mode,
        sandbox=True,
        extra_args=["--agent", "fixloop:code-reviewer"],
    )
    assert [(rule.name, rule.answered) for rule in rules] == [("probe", 1), ("answer", 1)], result.summary()
    assert_write_refused_and_reads_work(probe_results(api.requests), project)
