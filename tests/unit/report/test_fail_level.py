"""`--fail-on LEVEL`: the remaining findings at or above a severity."""

from __future__ import annotations

import pytest
from helpers_review import make_state, two_rounds

from fixloop.report.fail_level import failing_findings, severity_of


@pytest.mark.parametrize(
    ("level", "ids"),
    [
        ("critical", ["FL-002"]),
        ("high", ["FL-002", "FL-004"]),
        ("medium", ["FL-002", "FL-004"]),
        ("low", ["FL-002", "FL-003", "FL-004"]),
    ],
)
def test_findings_at_or_above_the_level(level: str, ids: list[str]) -> None:
    # remaining: FL-002 critical, FL-003 low, FL-004 high
    assert [item["id"] for item in failing_findings(two_rounds().state, level)] == ids


def test_a_failing_finding_says_where_it_is() -> None:
    assert failing_findings(two_rounds().state, "critical") == [
        {"id": "FL-002", "severity": "critical", "file": "src/app.py", "line": 33}
    ]


def test_no_review_no_failing_finding() -> None:
    assert failing_findings(make_state(), "low") == []


def test_a_missing_or_unknown_severity_counts_as_medium() -> None:
    assert severity_of({}) == "medium"
    assert severity_of({"severity": "blocker"}) == "medium"
    assert severity_of({"severity": "low"}) == "low"
