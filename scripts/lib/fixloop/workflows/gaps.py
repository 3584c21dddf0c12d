"""What a run did not do, for its final message: every gap named, none summed away.

- agents that failed (a reviewer with no valid answer: its part of the review is missing);
- agents that were handed out but never called (workflows.pending);
- claims the engine could not verify (a fixer's `succeeded` without a recorded edit of the file);
- findings left out by the project's limits and filters, per reason;
- every inline `fixloop: ignore` that dropped a finding, and every one the change added (not counted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.review.access import started_review
from fixloop.review.filters import suppressed_counts
from fixloop.review.views import closed_rounds
from fixloop.runs.coverage import not_reviewed_lines
from fixloop.workflows.claims import unverified_claim_lines
from fixloop.workflows.context import RunState, flow_of

MAX_LINES = 8


def gap_lines(state: RunState) -> list[str]:
    lines: list[str] = []
    review = started_review(state)
    lines.extend(not_reviewed_lines(state) if review is not None else [])
    not_called = flow_of(state).get("not_called") or []
    never_called = {str(agent) for entry in not_called for agent in entry["agents"]}
    if review is not None:
        for rnd in closed_rounds(review):
            lines.extend(_failed_reviewers(rnd, never_called))
            lines.extend(_unverified_fixes(rnd))
    for entry in flow_of(state).get("not_called") or []:
        agents = ", ".join(str(agent) for agent in entry.get("agents") or [])
        lines.append(f"Missing: {agents}, never called ({entry.get('label')}, step {entry.get('step')}).")
    lines.extend(unverified_claim_lines(state))
    if review is not None:
        closed = closed_rounds(review)
        dropped = suppressed_counts(closed[-1]) if closed else {}
        if dropped:
            parts = ", ".join(f"{count} by {reason}" for reason, count in sorted(dropped.items()))
            lines.append(f"Findings left out in round {closed[-1]['iteration']}: {parts}.")
        if closed:
            lines.extend(_inline_marks(closed))
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"... and {len(lines) - MAX_LINES} more gaps: see the report."]
    return lines


def _failed_reviewers(rnd: Mapping[str, Any], never_called: set[str]) -> list[str]:
    """A line per reviewer that failed; one that was never called has its own line (not_called)."""
    found = []
    for item in rnd.get("agents_results") or []:
        if item.get("status") != "failed":
            continue
        error = item.get("error") or {}
        if error.get("code") == "NULL_RESPONSE" and item.get("agent") in never_called:
            continue
        unreviewed = (rnd.get("unreviewed") or {}).get(item.get("agent")) or []
        files = f"; {len(unreviewed)} file(s) not reviewed by it" if unreviewed else ""
        found.append(
            f"Missing review: {item.get('agent')} failed in round {rnd['iteration']} "
            f"({error.get('code')}: {error.get('message')}{files})."
        )
    return found


def _unverified_fixes(rnd: Mapping[str, Any]) -> list[str]:
    fix = rnd.get("fix") or {}
    ids = [str(item.get("issue_id")) for item in fix.get("results") or [] if item.get("unverified")]
    if not ids:
        return []
    return [
        f"Fix claims not verified in round {rnd['iteration']}: {', '.join(ids)} (the fixer said fixed, "
        "but no edit of the file was recorded): counted as failed."
    ]


def _inline_marks(closed: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line naming the findings dropped by an inline mark, one naming the marks the change added."""
    last = closed[-1]
    dropped = [
        item for item in last.get("suppressed_findings") or [] if item.get("reason") == "inline_ignore"
    ]
    refused = {_where(item): item for rnd in closed for item in rnd.get("inline_marks_refused") or []}
    lines = []
    if dropped:
        lines.append(f"Suppressed by a `fixloop: ignore` already in the code: {_places(dropped)}.")
    if refused:
        lines.append(
            f"Not suppressed: the `fixloop: ignore` at {_places(list(refused.values()))} is new in this "
            "change (a change does not silence its own review). To accept the finding, add its issue to "
            "the baseline (`fixloop baseline add RUN ISSUE`), or commit the mark before the review."
        )
    return lines


def _where(item: Mapping[str, Any]) -> str:
    return f"{item.get('file')}:{item.get('line')}"


def _places(items: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(f"{_where(item)} ({item.get('category')})" for item in items)
