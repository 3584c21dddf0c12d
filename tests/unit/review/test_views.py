"""What the state says to its readers: `review status`."""

from __future__ import annotations

from helpers_review import (
    CR,
    open_review,
    reviewer_doc,
)

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.review.views import status_document


def test_status_document_lists_missing_reviewers() -> None:
    loop = open_review()
    loop.record(CR, reviewer_doc(CR))
    status = status_document(loop.state)
    assert status["round"]["missing"] == list(REVIEWER_AGENTS[1:])
    assert status["round"]["recorded"] == {CR: {"valid": True, "attempts": 1}}
    assert status["last_action"]["action"] == "review"
    assert status["status"] == "running"
