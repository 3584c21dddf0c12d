"""PreToolUse (Bash): fixloop's agents that only read are held to read-only commands (hooks/readonly.py),
through the real hook command with Claude Code-shaped payloads."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hook_helpers import HookEnv

READERS = (
    "code-reviewer",
    "silent-failure-hunter",
    "code-simplifier",
    "comment-analyzer",
    "test-analyzer",
    "type-design-analyzer",
    "review-verifier",
    "comment-classifier",
    "reply-writer",
    "failure-analyst",
    "root-cause-analyst",
    "ci-analyst",
    "fix-designer",
)
REFUSED = (
    "touch PWNED",
    "rm -rf src",
    'python3 -c \'open("PWNED", "w")\'',
    "git log; touch PWNED",
    "git log && touch PWNED",
    "git log | sh",
    "cat src/app.py > PWNED",
    "echo $(touch PWNED)",
    "echo `touch PWNED`",
    "git log\ntouch PWNED",
    "git commit -am x",
    "git -c core.pager=touch log",
    "git diff --output=PWNED",
    "git log --output PWNED",
    "git grep -O touch f",
    "find . -name '*.py' -exec touch PWNED ;",
    "find . -delete",
    "sort -o PWNED src/app.py",
    "sort -no PWNED src/app.py",
    "rg --pre touch f",
    "PAGER=touch git log",
    "{touch,PWNED}",
    "npm test",
    "",
)
READ_ONLY = (
    "git diff HEAD -- src/app.py",
    "git log -p --oneline -- 'src/app.py'",
    "git show HEAD:src/app.py",
    "git blame src/app.py",
    "grep -rn 'a|b;c>d' src",
    "ls -la src",
    "cat src/app.py",
    "head -n 5 src/app.py",
    "find src -name '*.py'",
)


def bash_payload(hooks: HookEnv, agent_type: str | None, command: Any) -> dict[str, Any]:
    payload = {
        **hooks.common("PreToolUse"),
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "look"},
        "tool_use_id": "toolu_1",
    }
    if agent_type is not None:
        payload["agent_id"], payload["agent_type"] = "a1b2c3", agent_type
    return payload


def decision(hooks: HookEnv, payload: dict[str, Any] | str) -> dict[str, Any] | None:
    done = hooks.run("PreToolUse", payload, tool="Bash")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    if not done.stdout.strip():
        return None
    answer: dict[str, Any] = json.loads(done.stdout)["hookSpecificOutput"]
    return answer


@pytest.mark.parametrize("command", REFUSED)
def test_a_reviewer_command_that_could_write_or_run_anything_is_refused(hooks: HookEnv, command: str) -> None:
    answer = decision(hooks, bash_payload(hooks, "fixloop:code-reviewer", command))
    assert answer is not None
    assert answer["hookEventName"] == "PreToolUse"
    assert answer["permissionDecision"] == "deny"
    assert answer["permissionDecisionReason"].startswith("fixloop: code-reviewer only reads")
    assert not (hooks.project / "PWNED").exists()


@pytest.mark.parametrize("agent", READERS)
def test_every_reading_agent_is_held(hooks: HookEnv, agent: str) -> None:
    answer = decision(hooks, bash_payload(hooks, f"fixloop:{agent}", "touch PWNED"))
    assert answer is not None and answer["permissionDecision"] == "deny"
    assert decision(hooks, bash_payload(hooks, f"fixloop:{agent}", "git log --oneline")) is None


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands_are_left_to_the_sessions_rules(hooks: HookEnv, command: str) -> None:
    assert decision(hooks, bash_payload(hooks, "fixloop:review-verifier", command)) is None


@pytest.mark.parametrize(
    "agent_type", ["fixloop:review-fixer", "fixloop:implementer", "other:code-reviewer", None]
)
def test_the_fixers_the_user_and_other_plugins_are_not_held(hooks: HookEnv, agent_type: str | None) -> None:
    assert decision(hooks, bash_payload(hooks, agent_type, "touch PWNED")) is None


def test_an_unknown_fixloop_agent_is_held_like_a_reader(hooks: HookEnv) -> None:
    answer = decision(hooks, bash_payload(hooks, "fixloop:someone-new", "touch PWNED"))
    assert answer is not None and answer["permissionDecision"] == "deny"


def test_a_payload_python_cannot_read_is_refused(hooks: HookEnv) -> None:
    answer = decision(hooks, '{"agent_type": "fixloop:code-reviewer", "tool_input": {"command": "touch x"')
    assert answer is not None and answer["permissionDecision"] == "deny"


def test_when_python_fails_the_call_is_refused(hooks: HookEnv) -> None:
    failing = hooks.data / "failing-python"
    failing.write_text("#!/bin/sh\nexit 1\n")
    failing.chmod(0o755)
    (hooks.data / "python3-path").write_text(f"{failing}\n")
    answer = decision(hooks, bash_payload(hooks, "fixloop:code-reviewer", "git log"))
    assert answer is not None and answer["permissionDecision"] == "deny"
    assert "could not check" in answer["permissionDecisionReason"]
