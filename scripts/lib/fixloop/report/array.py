"""The simple array report: one item per remaining issue (relevantFile, existingCode, suggestionContent,
improvedCode, label, suggestionLine)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.contracts.reviewer import ReviewerIssue
from fixloop.review.access import started_review
from fixloop.review.views import final_round


def simple_array(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The remaining issues (those of the final round) as supervisor items."""
    review = started_review(state)
    final = final_round(review) if review else None
    items: list[dict[str, Any]] = []
    for issue in final["issues"] if final else []:
        model = ReviewerIssue.model_validate(
            {key: issue.get(key) for key in ReviewerIssue.model_fields if issue.get(key) is not None}
        )
        items.append(model.to_supervisor_item())
    return items
