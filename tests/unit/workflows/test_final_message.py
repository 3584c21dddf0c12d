"""The run's final line of counts: "errors fixed" is for the workflows that fix errors, not a review."""

from __future__ import annotations

from typing import Any

import pytest

from fixloop.workflows.summary import final_message

SUMMARY = {"errors_fixed": 2, "files_changed": 3, "review_issues_fixed": 1, "user_interactions": 0}


def ended(workflow: str) -> dict[str, Any]:
    return {"run_id": "abcd1234", "workflow": workflow, "status": "success", "summary": dict(SUMMARY)}


def test_a_review_does_not_count_errors_fixed() -> None:
    lines = final_message(ended("review")).splitlines()
    assert lines[:2] == ["fixloop review abcd1234: success", "Files changed: 3; review issues fixed: 1."]
    assert not any("errors fixed" in line for line in lines)


@pytest.mark.parametrize("workflow", ["bugfix", "ci-job", "pr-review", "execute-plan"])
def test_the_fixing_workflows_keep_errors_fixed(workflow: str) -> None:
    lines = final_message(ended(workflow)).splitlines()
    assert lines[1] == "Files changed: 3; errors fixed: 2; review issues fixed: 1."
