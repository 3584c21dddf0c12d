"""The supervisor's simple array of the remaining issues."""

from __future__ import annotations

from helpers_review import (
    two_rounds,
)

from fixloop.report.array import simple_array


def test_simple_array_exact() -> None:
    loop = two_rounds()
    assert simple_array(loop.state) == [
        {
            "relevantFile": "src/app.py",
            "existingCode": "",
            "suggestionContent": "SQL built by string concatenation",
            "improvedCode": "Fix: SQL built by string concatenation",
            "label": "Security",
            "suggestionLine": 33,
        },
        {
            "relevantFile": "src/app.py",
            "existingCode": "",
            "suggestionContent": "Comment is outdated",
            "improvedCode": "Fix: Comment is outdated",
            "label": "Quality",
            "suggestionLine": 50,
        },
        {
            "relevantFile": "src/app.py",
            "existingCode": "",
            "suggestionContent": "Broad except hides errors",
            "improvedCode": "Fix: Broad except hides errors",
            "label": "Quality",
            "suggestionLine": 80,
        },
    ]
