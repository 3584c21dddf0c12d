"""Shared by the finding identity and baseline tests: whether two findings are one, asked of every place that
decides identity (closeness, grouping within a round, ids across rounds, the baseline), and a finding's
baseline entry."""

from __future__ import annotations

from typing import Any

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.review.filters import Baseline
from fixloop.review.identity import Candidate, closeness, group_reports
from fixloop.review.issue_registry import IssueRegistry
from fixloop.runs.baseline import BaselineEntry

# A fingerprint of the older rule, which never equals the current one: only the identity can match it.
OLDER_RULE_FINGERPRINT = "0123456789abcdef0123"


def baseline_entry(finding: dict[str, Any], fingerprint: str = OLDER_RULE_FINGERPRINT) -> BaselineEntry:
    """`finding` accepted in the baseline, under `fingerprint`."""
    return {
        "fingerprint": fingerprint,
        "file": finding["file"],
        "line": finding["line"],
        "category": finding["category"],
        "description": finding["description"],
        "reason": "accepted",
        "issue_id": None,
        "run_id": None,
        "added_at": None,
    }


def assert_identity(first: dict[str, Any], second: dict[str, Any], same: bool) -> None:
    """Every place that decides identity holds `first` and `second` for one finding exactly when `same`."""
    a, b = Candidate.of(first), Candidate.of(second)
    assert (closeness(a, b) is not None) is same
    assert (closeness(b, a) is not None) is same
    # two reviewers in one round: one finding when the same
    assert group_reports([(REVIEWER_AGENTS[0], a), (REVIEWER_AGENTS[1], b)]) == ([0, 0] if same else [0, 1])
    # across rounds: the same id when the same
    registry = IssueRegistry()
    [old] = registry.assign([a], 1)
    [new] = registry.assign([b], 2)
    assert (new == old) is same
    # the baseline accepts the second when the first is accepted, only when they are the same
    assert Baseline([baseline_entry(first)]).accepts(b) is same
