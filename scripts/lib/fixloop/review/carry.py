"""Findings a round could not confirm or refute stay open: no finding is lost because its reviewer failed.

A round's findings come from the reviewers that answered. A finding of the round before, that no fix
verifiably resolved, whose every reporting reviewer failed (or was never called) this time, was neither seen
again nor seen gone: it is carried into this round as it was (`carried_over`), so it stays among the
remaining findings of the report. A round that closed without enough reviewers carries every such finding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fixloop.review.access import previous_round
from fixloop.review.state import Issue, Review, Round


def carried_issues(
    review: Review,
    rnd: Round,
    failed_agents: Iterable[str],
    everything: bool = False,
    unreviewed: Mapping[str, list[str]] | None = None,
) -> list[Issue]:
    """The findings of the round before `rnd` that it neither confirmed nor refuted (all of them with
    `everything`: the round is inconclusive), as copies marked `carried_over`. In a round reviewed in
    shards a reviewer failed only for the files of its failed shards (`unreviewed`: reviewer -> files)."""
    previous = previous_round(review, rnd)
    if previous is None or not previous.get("closed"):
        return []
    failed = set(failed_agents)
    seen = {issue["id"] for issue in rnd.get("issues") or []}
    fixed = _verified_fixes(previous)
    found: list[Issue] = []
    for issue in previous.get("issues") or []:
        if issue["id"] in fixed or issue["id"] in seen:
            continue
        if everything or set(issue.get("agents") or []) <= _failed_for(issue, failed, unreviewed):
            copy: dict[str, Any] = {**issue, "carried_over": True}
            found.append(copy)  # type: ignore[arg-type]
    return found


def _failed_for(issue: Issue, failed: set[str], unreviewed: Mapping[str, list[str]] | None) -> set[str]:
    """The reviewers that failed to look at the issue's file."""
    if unreviewed is None:
        return failed
    return {agent for agent in failed if agent not in unreviewed or issue["file"] in unreviewed[agent]}


def _verified_fixes(rnd: Round) -> set[str]:
    fix: dict[str, Any] = dict(rnd.get("fix") or {})
    if rnd.get("rolled_back"):
        return set()
    results = fix.get("results") or []
    return {str(item.get("issue_id")) for item in results if item.get("status") == "succeeded"}
