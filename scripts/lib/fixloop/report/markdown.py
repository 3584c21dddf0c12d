"""The review report in Markdown: the coordinator output document laid out for a person."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.report.coordinator import coordinator_output
from fixloop.runs.verification import STEP_NAMES


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ").strip()


def _issue_rows(issues: list[dict[str, Any]]) -> list[str]:
    if not issues:
        return ["None."]
    rows = [
        "| Id | Severity | Confidence | Location | Category | Description | Agents |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for issue in issues:
        location = f"{issue['file']}:{issue['line']}" if issue.get("line") else issue["file"]
        rows.append(
            f"| {_cell(issue['id'])} | {_cell(issue.get('severity'))} | {_cell(issue.get('confidence'))} "
            f"| `{_cell(location)}` | {_cell(issue.get('category'))} | {_cell(issue['description'])} "
            f"| {_cell(', '.join(issue.get('agents') or []))} |"
        )
    return rows


def markdown(state: Mapping[str, Any]) -> str:
    document = coordinator_output(state)
    run_id = state.get("run_id")
    lines = [f"# fixloop review report — run {run_id}", ""]
    if document["status"] == "failed":
        error = document["error"]
        lines += [f"**Status:** failed — `{error.get('code')}`: {error.get('message')}", ""]
        for agent in error.get("failed_agents") or []:
            failure = agent.get("error") or {}
            lines.append(f"- {agent.get('agent')}: `{failure.get('code')}` {failure.get('message')}")
        if error.get("suggestion"):
            lines += ["", f"Suggestion: {error['suggestion']}"]
        return "\n".join(lines).rstrip() + "\n"
    numbers = document["summary"]
    lines += [
        "## Summary",
        "",
        "| Status | Termination | Iterations | Initial issues | Fixed | Remaining |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| {document['status']} | {numbers['termination_reason'] or 'running'} "
        f"| {numbers['total_iterations']} | {numbers['initial_issues']} | {numbers['fixed_issues']} "
        f"| {numbers['final_issues']} |",
        "",
    ]
    if document.get("message"):
        lines += [document["message"], ""]
    verification = document.get("verification")
    if verification:
        lines += [
            "Verification: " + ", ".join(f"{name} {verification[name]['status']}" for name in STEP_NAMES),
            "",
        ]
    iterations = document.get("review_iterations") or []
    if iterations:
        lines += [
            "## Iterations",
            "",
            "| Iteration | Agents ok | Issues | Fixable | Fix attempted/succeeded/failed | Resolved "
            "| Introduced | Removed by verifier |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for item in iterations:
            ok = sum(1 for result in item["agents_results"] if result["status"] == "success")
            fix = item.get("fix_result")
            fix_text = f"{fix['attempted']}/{fix['succeeded']}/{fix['failed']}" if fix else "-"
            lines.append(
                f"| {item['iteration']} | {ok}/{len(REVIEWER_AGENTS)} | {item['issues_found']} "
                f"| {item['fixable_issues']} | {fix_text} | {len(item['resolved_issues'])} "
                f"| {len(item['introduced_issues'])} | {len(item['removed_by_verifier'])} |"
            )
        lines.append("")
    for title, key in (
        ("Fixed issues", "fixed_issues"),
        ("Introduced issues", "introduced_issues"),
        ("Remaining issues", "remaining_issues"),
    ):
        lines += [f"## {title}", "", *_issue_rows(document.get(key) or []), ""]
    lines += ["## Files modified", ""]
    modified = document.get("files_modified") or []
    lines += [f"- `{name}`" for name in modified] if modified else ["None."]
    observations = document.get("positive_observations") or []
    if observations:
        lines += ["", "## Positive observations", "", *[f"- {item}" for item in observations]]
    usage = document.get("usage")
    if usage:
        lines += ["", *usage_rows(usage)]
    return "\n".join(lines).rstrip() + "\n"


def usage_rows(usage: Mapping[str, Any]) -> list[str]:
    """Tokens per agent and per round, and the estimated cost, as a table."""
    rows = [
        "## Tokens and cost (estimated)",
        "",
        "| | Calls | Input | Output | Cache write | Cache read | Total tokens | Cost (USD) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def row(name: str, item: Mapping[str, Any]) -> str:
        return (
            f"| {_cell(name)} | {item['calls']} | {item['input_tokens']} | {item['output_tokens']} "
            f"| {item['cache_creation_input_tokens']} | {item['cache_read_input_tokens']} "
            f"| {item['total_tokens']} | {item['cost_usd']:.4f} |"
        )

    rows += [row(agent, item) for agent, item in sorted((usage.get("by_agent") or {}).items())]
    rows += [row(f"round {number}", item) for number, item in sorted((usage.get("by_round") or {}).items())]
    rows.append(row("**total**", usage["total"]))
    return rows
