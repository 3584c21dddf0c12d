"""Which edit payloads the Edit/Write hook records, and the file each names."""

from __future__ import annotations

from typing import Any

import pytest

from fixloop.hookside.file_touch import edited_path, relevant

FIXER_EDIT = {
    "hook_event_name": "PreToolUse",
    "tool_name": "Edit",
    "agent_id": "a1",
    "agent_type": "fixloop:review-fixer",
    "tool_input": {"file_path": "/p/src/app.py", "old_string": "a", "new_string": "b"},
}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({}, True),
        ({"hook_event_name": "PostToolUse"}, True),
        ({"tool_name": "Write"}, True),
        ({"tool_name": "NotebookEdit"}, True),
        ({"hook_event_name": "PostToolUseFailure"}, False),
        ({"tool_name": "Bash"}, False),
        ({"agent_type": "general-purpose"}, False),
        ({"agent_type": "other:review-fixer"}, False),
        ({"agent_type": None}, False),
    ],
)
def test_only_edits_of_fixloop_agents_are_relevant(change: dict[str, Any], expected: bool) -> None:
    assert relevant({**FIXER_EDIT, **change}) is expected


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({"file_path": "/p/a.py", "content": "x"}, "/p/a.py"),
        ({"notebook_path": "/p/n.ipynb", "new_source": "x"}, "/p/n.ipynb"),
        ({"file_path": ""}, None),
        ({"file_path": 3}, None),
        ("not an object", None),
    ],
)
def test_the_edited_file(tool_input: Any, expected: str | None) -> None:
    assert edited_path({**FIXER_EDIT, "tool_input": tool_input}) == expected
