"""`--fail-on LEVEL`: whether a run's remaining findings should fail a CI job.

A finding fails the job when its severity is LEVEL or worse (critical > high > medium > low); a finding
without a severity counts as medium, as in the SARIF report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.review.access import started_review
from fixloop.review.views import final_round

SEVERITY_RANK: dict[str, int] = {"low": 1, "medium": 2, "high": 3, "critical": 4}
FAIL_LEVELS: tuple[str, ...] = ("critical", "high", "medium", "low")
DEFAULT_SEVERITY = "medium"


def severity_of(issue: Mapping[str, Any]) -> str:
    severity = issue.get("severity")
    return severity if isinstance(severity, str) and severity in SEVERITY_RANK else DEFAULT_SEVERITY


def failing_findings(state: Mapping[str, Any], level: str) -> list[dict[str, Any]]:
    """The remaining findings (the review's final round) at or above `level`, as id, severity, file,
    line."""
    threshold = SEVERITY_RANK[level]
    review = started_review(state)
    final = final_round(review) if review is not None else None
    return [
        {
            "id": issue["id"],
            "severity": severity_of(issue),
            "file": issue.get("file"),
            "line": issue.get("line"),
        }
        for issue in (final["issues"] if final is not None else [])
        if SEVERITY_RANK[severity_of(issue)] >= threshold
    ]
