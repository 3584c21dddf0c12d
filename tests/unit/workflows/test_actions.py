"""The actions of `fixloop next` as the coordinator reads them (`fixloop next --text`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers_runs import FakeClock
from workflows.flow_helpers import CHECK_FAILS, invoke_text, next_action, review_project, start

from fixloop.workflows.actions import render

RUN = "abcd1234"


def call(agent: str, description: str) -> dict[str, str]:
    return {"subagent_type": f"fixloop:{agent}", "description": description, "prompt": f"Do {agent}'s task."}


def test_agents_are_called_in_one_message() -> None:
    action = {
        "action": "agents",
        "run_id": RUN,
        "step": 4,
        "label": "review round 2",
        "calls": [
            call("code-reviewer", "Review round 2: code-reviewer"),
            call("test-analyzer", "Review round 2: test-analyzer"),
        ],
    }
    assert render(action) == (
        "fixloop next (run abcd1234, step 4: review round 2): call these 2 agents, all in ONE message, "
        "with run_in_background false:\n"
        "- subagent_type: fixloop:code-reviewer | description: Review round 2: code-reviewer "
        "| prompt: Do code-reviewer's task.\n"
        "- subagent_type: fixloop:test-analyzer | description: Review round 2: test-analyzer "
        "| prompt: Do test-analyzer's task."
    )


def test_one_agent() -> None:
    action = {
        "action": "agent",
        "run_id": RUN,
        "step": 3,
        "label": "fix round 1",
        "calls": [call("review-fixer", "Fix round 1")],
    }
    assert render(action) == (
        "fixloop next (run abcd1234, step 3: fix round 1): call this agent, with run_in_background false:\n"
        "- subagent_type: fixloop:review-fixer | description: Fix round 1 | prompt: Do review-fixer's task."
    )


def test_a_question_ends_the_turn_with_the_question() -> None:
    action: dict[str, Any] = {
        "action": "ask_user",
        "run_id": RUN,
        "context": "review_diverged",
        "question": "The loop diverged. Roll back?",
        "options": [
            {"label": "rollback", "description": "Undo the last round's fixes"},
            {"label": "manual", "description": "Keep the changes"},
        ],
        "default": "manual",
        "answer": f"/fixloop:answer {RUN} LABEL",
    }
    assert render(action) == (
        "fixloop next (run abcd1234): the user must decide. End now; your final message is exactly:\n"
        "fixloop needs your decision (run abcd1234): The loop diverged. Roll back?\n"
        "- rollback: Undo the last round's fixes\n"
        "- manual (default): Keep the changes\n"
        "Answer with: /fixloop:answer abcd1234 <label>"
    )


def test_the_end_ends_the_turn_with_the_final_message() -> None:
    action = {
        "action": "stop",
        "run_id": RUN,
        "status": "success",
        "message": "fixloop review abcd1234: success",
    }
    assert render(action) == (
        "fixloop next (run abcd1234): the run has ended. End now; your final message is exactly:\n"
        "fixloop review abcd1234: success"
    )


def test_next_text_prints_the_rendered_action(git_project: Path, fake_clock: FakeClock) -> None:
    review_project(git_project, test_command=CHECK_FAILS, questions="ask")
    run_id = start(git_project)
    asked = next_action(run_id)
    assert asked["action"] == "ask_user"
    assert invoke_text("next", run_id, "--text") == (0, render(asked) + "\n")
    assert invoke_text("answer", run_id, "cancel")[0] == 0
    stop = next_action(run_id)
    assert (stop["status"], stop["reason"]) == ("user_cancelled", "user_cancelled")
    assert invoke_text("next", run_id, "--text") == (0, render(stop) + "\n")
