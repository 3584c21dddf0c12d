"""`/fixloop:answer [RUN] LABEL`: the typed answer reaches the run, and a run answered from another session
goes on in that session."""

from __future__ import annotations

import json
from pathlib import Path

from workflows.flow_helpers import REVIEWER_AGENTS, agents_of, next_action, review_project, start

from fixloop.runs.command_start import prompt_path
from fixloop.store.layout import run_for_session
from fixloop.workflows.answer_command import answer_from_prompt

OTHER_SESSION = "0f3c2a1b-7d6e-4c5b-9a8f-112233445566"


def typed(root: Path, prompt: str, session: str) -> None:
    path = prompt_path(root, session)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"prompt": prompt, "prompt_id": "p1", "ts_ms": 1}), encoding="utf-8")


def test_an_answer_from_another_session_binds_the_run_to_it(git_project: Path) -> None:
    review_project(git_project, approve=False, test_command="true", lint_command=None, typecheck_command=None)
    run_id = start(git_project, interactive=True)
    assert next_action(run_id)["action"] == "ask_user"
    assert run_for_session(git_project, OTHER_SESSION) is None
    typed(git_project, f"/fixloop:answer {run_id} approve", OTHER_SESSION)
    answered = answer_from_prompt(git_project, {"CLAUDE_CODE_SESSION_ID": OTHER_SESSION})
    assert (answered["run_id"], answered["choice"]) == (run_id, "approve")
    assert run_for_session(git_project, OTHER_SESSION) == run_id
    assert agents_of(next_action(run_id)) == list(REVIEWER_AGENTS)
