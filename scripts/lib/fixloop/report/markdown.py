"""The review report in Markdown: the coordinator output document laid out for a person."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.report.coordinator import coordinator_output
from fixloop.runs.coverage import coverage, reviewer_sentences
from fixloop.runs.usage import unpriced_note
from fixloop.runs.verification import STEP_NAMES

_HTML_ACTIVE = str.maketrans({"<": "\\<", ">": "\\>", "&": "\\&"})


def _outside_code_spans(text: str) -> str:
    """`text` with `<`, `>` and `&` backslash-escaped wherever they are not inside a code span, so an
    agent's `List<Item>` or `<empty>` reads as written instead of becoming HTML."""
    parts: list[str] = []
    position = 0
    while position < len(text):
        start = text.find("`", position)
        if start < 0:
            break
        fence_end = start
        while fence_end < len(text) and text[fence_end] == "`":
            fence_end += 1
        fence = text[start:fence_end]
        close = fence_end
        while True:  # a span closes at the next run of exactly as many backticks
            close = text.find(fence, close)
            if close < 0 or close + len(fence) == len(text) or text[close + len(fence)] != "`":
                break
            while close < len(text) and text[close] == "`":
                close += 1
        parts.append(text[position:start].translate(_HTML_ACTIVE))
        if close < 0:  # an unmatched run is literal backticks
            parts.append(fence)
            position = fence_end
        else:
            parts.append(text[start : close + len(fence)])
            position = close + len(fence)
    parts.append(text[position:].translate(_HTML_ACTIVE))
    return "".join(parts)


def _text(value: Any) -> str:
    """One line of agent text for Markdown outside a table."""
    text = "" if value is None else str(value)
    return _outside_code_spans(" ".join(text.split("\n")).strip())


def _cell(value: Any) -> str:
    """One table cell of agent text: also no bare `|`, which would end the cell."""
    return _text(value).replace("|", "\\|")


def _code(value: Any) -> str:
    """`value` as an inline code span whatever backticks it holds."""
    text = " ".join(str(value).split("\n")).replace("|", "\\|")
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


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
            f"| {_code(location)} | {_cell(issue.get('category'))} | {_cell(issue['description'])} "
            f"| {_cell(', '.join(issue.get('agents') or []))} |"
        )
    return rows


def run_warnings(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What the run warned about (e.g. nothing verifies the changes), for every report."""
    flow = state.get("flow")
    warnings = flow.get("warnings") if isinstance(flow, dict) else None
    return [item for item in warnings or [] if isinstance(item, dict) and item.get("code")]


def markdown(state: Mapping[str, Any]) -> str:
    document = coordinator_output(state)
    run_id = state.get("run_id")
    lines = [f"# fixloop review report — run {run_id}", ""]
    if document["status"] == "failed":
        error = document["error"]
        lines += [f"**Status:** failed — {_code(error.get('code'))}: {_text(error.get('message'))}", ""]
        for agent in error.get("failed_agents") or []:
            failure = agent.get("error") or {}
            lines.append(
                f"- {_text(agent.get('agent'))}: {_code(failure.get('code'))} {_text(failure.get('message'))}"
            )
        if error.get("suggestion"):
            lines += ["", f"Suggestion: {_text(error['suggestion'])}"]
        return "\n".join(lines).rstrip() + "\n"
    numbers = document["summary"]
    warnings = run_warnings(state)
    if warnings:
        lines += [
            "## Warnings",
            "",
            *[f"- {_code(item['code'])}: {_text(item['message'])}" for item in warnings],
            "",
        ]
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
        lines += [_text(document["message"]), ""]
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
        lines += suppressed_lines(iterations)
    for title, key in (
        ("Fixed issues", "fixed_issues"),
        ("Introduced issues", "introduced_issues"),
        ("Remaining issues", "remaining_issues"),
    ):
        lines += [f"## {title}", "", *_issue_rows(document.get(key) or []), ""]
    lines += coverage_lines(state)
    lines += ["## Files modified", ""]
    modified = document.get("files_modified") or []
    lines += [f"- {_code(name)}" for name in modified] if modified else ["None."]
    observations = document.get("positive_observations") or []
    if observations:
        lines += ["", "## Positive observations", "", *[f"- {_text(item)}" for item in observations]]
    usage = document.get("usage")
    if usage:
        lines += ["", *usage_rows(usage)]
    return "\n".join(lines).rstrip() + "\n"


def coverage_lines(state: Mapping[str, Any]) -> list[str]:
    """What the review covered: the count reviewed, and each changed file left out with why."""
    doc = coverage(state)
    lines = [
        "## Coverage",
        "",
        f"{doc['reviewed_files']} of {doc['changed_files']} changed file(s) reviewed.",
    ]
    sentences = reviewer_sentences(doc.get("by_reviewer"))
    lines += ["", " ".join(sentences)] if sentences else []
    if doc["not_reviewed"]:
        lines += ["", "| Not reviewed | Why |", "| --- | --- |"]
        lines += [f"| {_code(item['file'])} | {_cell(item['reason'])} |" for item in doc["not_reviewed"]]
    return [*lines, ""]


def suppressed_lines(iterations: list[dict[str, Any]]) -> list[str]:
    """How many findings the project's rules (baseline, inline ignores, filters, limits) dropped."""
    lines = []
    for item in iterations:
        counts: dict[str, int] = item.get("suppressed") or {}
        if counts:
            reasons = ", ".join(f"{reason} {count}" for reason, count in counts.items())
            total = sum(counts.values())
            lines.append(
                f"Round {item['iteration']}: {total} finding(s) dropped by the project's rules ({reasons})."
            )
    return [*lines, ""] if lines else []


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
    unpriced = unpriced_note(usage)
    return [*rows, "", unpriced] if unpriced else rows
