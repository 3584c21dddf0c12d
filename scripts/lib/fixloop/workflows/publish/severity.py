"""A finding's severity for publishing: one of the four, medium when it has none (as in every report)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.review.filters import SEVERITY_RANK

DEFAULT_SEVERITY = "medium"


def severity_of(issue: Mapping[str, Any]) -> str:
    severity = issue.get("severity")
    return severity if isinstance(severity, str) and severity in SEVERITY_RANK else DEFAULT_SEVERITY
