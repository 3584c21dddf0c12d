"""What a run did, computed by the engine: SESSION_END's summary and the coordinator's final message."""

from __future__ import annotations

from typing import Any

from fixloop.core.engine_path import ENGINE
from fixloop.review.access import started_review
from fixloop.review.views import files_modified, final_round
from fixloop.review.views import summary as review_summary
from fixloop.workflows.blocked import blocked_lines
from fixloop.workflows.context import RunState, flow_of
from fixloop.workflows.gaps import gap_lines

MAX_LISTED_ISSUES = 5
GAP_CODES = ("AGENTS_NOT_CALLED",)  # warnings that workflows.gaps already names


def _phase_data(state: RunState) -> list[dict[str, Any]]:
    return [slot.get("data") or {} for slot in flow_of(state)["phases"].values() if isinstance(slot, dict)]


def changed_files(state: RunState) -> list[str]:
    """Files the run changed: the review's kept fixes and what its phases report they changed."""
    review = started_review(state)
    files: set[str] = set(files_modified(review)) if review is not None else set()
    for data in _phase_data(state):
        files.update(str(item) for item in data.get("files_changed") or [])
    return sorted(files)


def run_summary(state: RunState) -> dict[str, Any]:
    review = started_review(state)
    # Every answer, the review loop's included, is one flow interaction; a default taken unasked is none.
    interactions = sum(1 for item in flow_of(state)["interactions"] if not item.get("default"))
    extra: dict[str, Any] = {}
    for data in _phase_data(state):  # what a phase adds (e.g. each plan task's status); the latest wins
        extra.update(data.get("summary_fields") or {})
    summary = {
        "errors_fixed": sum(int(data.get("errors_fixed") or 0) for data in _phase_data(state)),
        "files_changed": len(changed_files(state)),
        "review_issues_fixed": review_summary(review)["fixed_issues"] if review else 0,
        "user_interactions": interactions,
    }
    return {**summary, **{key: value for key, value in extra.items() if key not in summary}}


def final_message(state: RunState) -> str:
    """A few lines a person reads at the end of the command: status, counts, what remains, where to look."""
    run_id = state.get("run_id")
    workflow = str(state.get("workflow"))
    flow = flow_of(state)
    outcome = flow.get("outcome") or {}
    reason = outcome.get("reason")
    head = f"fixloop {workflow} {run_id}: {state.get('status')}" + (f" ({reason})" if reason else "")
    lines = [head]
    error = outcome.get("error")
    if isinstance(error, dict):
        lines.append(f"Error {error.get('code')}: {error.get('message')}")
    summary = state.get("summary") or {}
    errors = "" if workflow == "review" else f"errors fixed: {summary.get('errors_fixed', 0)}; "
    lines.append(
        f"Files changed: {summary.get('files_changed', 0)}; {errors}"
        f"review issues fixed: {summary.get('review_issues_fixed', 0)}."
    )
    review = started_review(state)
    if review is not None:
        counts = review_summary(review)
        final = final_round(review)
        remaining = list(final["issues"]) if final else []
        lines.append(
            f"Review: {counts['total_iterations']} round(s), {counts['initial_issues']} issue(s) found, "
            f"{counts['fixed_issues']} fixed, {len(remaining)} remaining."
        )
        for issue in remaining[:MAX_LISTED_ISSUES]:
            where = f"{issue['file']}:{issue['line']}"
            lines.append(f"- {issue['id']} ({issue['severity']}) {where}: {issue['description']}")
        if len(remaining) > MAX_LISTED_ISSUES:
            lines.append(f"- and {len(remaining) - MAX_LISTED_ISSUES} more")
    lines.extend(gap_lines(state))
    lines.extend(blocked_lines(state))
    for data in _phase_data(state):  # what a phase has to tell at the end (e.g. the drafts of a dry run)
        lines.extend(str(line) for line in data.get("final_lines") or [])
    warnings = [item for item in flow["warnings"] if item.get("code") not in GAP_CODES]
    for warning in warnings[:MAX_LISTED_ISSUES]:
        lines.append(f"Warning {warning.get('code')}: {warning.get('message')}")
    engine = f'"{ENGINE}"'
    if review is not None:
        lines.append(f"Report: {engine} review report {run_id} --format markdown")
    lines.append(f"Timeline: {engine} log timeline {run_id}")
    return "\n".join(lines)
