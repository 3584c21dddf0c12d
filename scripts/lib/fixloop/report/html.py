"""The review report as one self-contained HTML page: summary, issues per round (an inline SVG chart),
the remaining findings with the code around them, what was fixed, and the tokens each agent used.

Nothing is loaded from anywhere: the style sheet, the script and the chart are inline, and the page's
Content-Security-Policy allows nothing else. Every piece of text that comes from an agent, the run or the
repository is HTML-escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from fixloop import __version__
from fixloop.report.code_context import CodeContext, code_context, ignored_files
from fixloop.report.coordinator import coordinator_output
from fixloop.report.fail_level import FAIL_LEVELS, SEVERITY_RANK, severity_of
from fixloop.report.html_assets import CONTENT_SECURITY_POLICY, SCRIPT, STYLE
from fixloop.report.issue_chart import counts_table, issue_chart, round_counts
from fixloop.review.access import started_review
from fixloop.review.views import final_round
from fixloop.runs.coverage import coverage, reviewer_sentences
from fixloop.runs.usage import unpriced_note
from fixloop.runs.verification import STEP_NAMES

TOKEN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("calls", "Calls"),
    ("input_tokens", "Input"),
    ("output_tokens", "Output"),
    ("cache_creation_input_tokens", "Cache write"),
    ("cache_read_input_tokens", "Cache read"),
    ("total_tokens", "Total tokens"),
)


def _e(value: Any) -> str:
    """`value` as HTML text (attribute-safe too); None as an empty string."""
    return "" if value is None else escape(str(value), quote=True)


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{_e(title)}</h2>{body}</section>'


def _cards(items: Sequence[tuple[str, Any]], css: str = "") -> str:
    cells = "".join(
        f'<div><dt>{_e(label)}</dt><dd class="{_e(label.lower())}">{_e(value)}</dd></div>'
        for label, value in items
    )
    return f'<dl class="cards {css}">{cells}</dl>'


def _summary(document: Mapping[str, Any]) -> str:
    if document["status"] == "failed":
        error = document.get("error") or {}
        failed = "".join(
            f"<li>{_e(agent.get('agent'))}: <code>{_e((agent.get('error') or {}).get('code'))}</code> "
            f"{_e((agent.get('error') or {}).get('message'))}</li>"
            for agent in error.get("failed_agents") or []
        )
        body = _cards([("Status", "failed"), ("Error", error.get("code"))], "status-failed")
        body += f"<p>{_e(error.get('message'))}</p>"
        body += f"<ul>{failed}</ul>" if failed else ""
        if error.get("suggestion"):
            body += f"<p>Suggestion: {_e(error['suggestion'])}</p>"
        return _section("summary", "Summary", body)
    numbers = document["summary"]
    body = _cards(
        [
            ("Status", document["status"]),
            ("Termination", numbers["termination_reason"] or "running"),
            ("Rounds", numbers["total_iterations"]),
            ("Initial issues", numbers["initial_issues"]),
            ("Fixed", numbers["fixed_issues"]),
            ("Remaining", numbers["final_issues"]),
        ]
    )
    if document.get("message"):
        body += f'<p class="note">{_e(document["message"])}</p>'
    verification = document.get("verification")
    if verification:
        steps = ", ".join(f"{_e(name)} {_e(verification[name]['status'])}" for name in STEP_NAMES)
        body += f"<p>Verification: {steps}</p>"
    return _section("summary", "Summary", body)


def _code(context: CodeContext) -> str:
    if not context.lines:
        return f'<p class="note">Code: {_e(context.note)}</p>'
    rows = "".join(
        f'<tr class="{"flagged" if item.flagged else "context"}"><td class="ln">{item.number}</td>'
        f"<td>{_e(item.text)}</td></tr>"
        for item in context.lines
    )
    return f'<table class="code"><tbody>{rows}</tbody></table>'


def _finding(issue: Mapping[str, Any], raw: Mapping[str, Any], context: CodeContext) -> str:
    severity = severity_of(issue)
    where = f"{issue['file']}:{issue['line']}" if issue.get("line") else issue["file"]
    tags = [
        str(issue["category"]) if issue.get("category") else None,
        f"confidence {issue['confidence']}" if issue.get("confidence") is not None else None,
        ", ".join(str(agent) for agent in issue.get("agents") or []) or None,
        "auto-fixable" if issue.get("auto_fixable") else None,
    ]
    suggestion = raw.get("suggestion")
    return (
        f'<article class="finding sev-{severity}" data-severity="{severity}" data-id="{_e(issue["id"])}">'
        f'<header><span class="badge sev-{severity}">{severity}</span> <strong>{_e(issue["id"])}</strong> '
        f'<code class="where">{_e(where)}</code> '
        f'<span class="tags">{_e(" · ".join(tag for tag in tags if tag))}</span></header>'
        f'<p class="description">{_e(issue["description"])}</p>'
        + (f'<p class="suggestion"><strong>Suggestion:</strong> {_e(suggestion)}</p>' if suggestion else "")
        + _code(context)
        + "</article>"
    )


def _findings(state: Mapping[str, Any], document: Mapping[str, Any], root: Path) -> str:
    remaining: list[dict[str, Any]] = sorted(  # the worst first
        document.get("remaining_issues") or [], key=lambda issue: -SEVERITY_RANK[severity_of(issue)]
    )
    title = f"Remaining findings ({len(remaining)})"
    if not remaining:
        return _section("findings", title, '<p class="empty">None.</p>')
    review = started_review(state)
    final = final_round(review) if review is not None else None
    raw: dict[str, Mapping[str, Any]] = {
        str(item["id"]): item for item in (final["issues"] if final is not None else [])
    }
    hidden = ignored_files(root, [str(issue["file"]) for issue in remaining])
    present = [level for level in FAIL_LEVELS if any(severity_of(issue) == level for issue in remaining)]
    filters = "".join(
        f'<label><input type="checkbox" checked data-severity="{level}"> {level}</label>' for level in present
    )
    parts: list[str] = []
    for issue in remaining:
        source = raw.get(str(issue["id"]), {})
        end_line = source.get("end_line")
        context = code_context(root, str(issue["file"]), issue.get("line"), end_line, ignored=hidden)
        parts.append(_finding(issue, source, context))
    articles = "".join(parts)
    return _section("findings", title, f'<div class="filters">Show: {filters}</div>{articles}')


def _issue_table(issues: Sequence[Mapping[str, Any]]) -> str:
    if not issues:
        return '<p class="empty">None.</p>'
    rows = "".join(
        f"<tr><td>{_e(item['id'])}</td><td>{_e(item.get('severity'))}</td>"
        f"<td><code>{_e(item['file'])}{':' + _e(item['line']) if item.get('line') else ''}</code></td>"
        f"<td>{_e(item.get('category'))}</td><td>{_e(item['description'])}</td></tr>"
        for item in issues
    )
    return (
        "<table><thead><tr><th>Id</th><th>Severity</th><th>Location</th><th>Category</th>"
        f"<th>Description</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _usage(usage: Mapping[str, Any] | None) -> str:
    if not usage:
        return ""
    head = "".join(f'<th class="num">{label}</th>' for _key, label in TOKEN_COLUMNS)

    def row(name: str, item: Mapping[str, Any], tag: str = "td") -> str:
        cells = "".join(f'<td class="num">{int(item.get(key) or 0)}</td>' for key, _label in TOKEN_COLUMNS)
        cost = float(item.get("cost_usd") or 0.0)
        return f"<tr><{tag}>{_e(name)}</{tag}>{cells}<td class='num'>{cost:.4f}</td></tr>"

    rows = "".join(row(agent, item) for agent, item in sorted((usage.get("by_agent") or {}).items()))
    rows += row("total", usage.get("total") or {}, "th")
    table = (
        f'<table class="usage"><thead><tr><th>Agent</th>{head}<th class="num">Cost (USD)</th></tr></thead>'
        f"<tbody>{rows}</tbody></table><p class='note'>Costs are estimates from the configured prices.</p>"
    )
    unpriced = unpriced_note(usage)
    if unpriced:
        table += f"<p class='note warning'>{_e(unpriced)}</p>"
    return _section("usage", "Tokens per agent", table)


def _lists(document: Mapping[str, Any]) -> str:
    files = document.get("files_modified") or []
    body = "".join(f"<li><code>{_e(name)}</code></li>" for name in files)
    listed = f"<ul>{body}</ul>" if files else '<p class="empty">None.</p>'
    parts = [_section("files", "Files modified", listed)]
    observations = document.get("positive_observations") or []
    if observations:
        items = "".join(f"<li>{_e(text)}</li>" for text in observations)
        parts.append(_section("observations", "Positive observations", f"<ul>{items}</ul>"))
    return "".join(parts)


def _coverage(state: Mapping[str, Any]) -> str:
    doc = coverage(state)
    body = f"<p>{doc['reviewed_files']} of {doc['changed_files']} changed file(s) reviewed.</p>"
    body += "".join(f"<p>{_e(sentence)}</p>" for sentence in reviewer_sentences(doc.get("by_reviewer")))
    if doc["not_reviewed"]:
        rows = "".join(
            f"<tr><td><code>{_e(item['file'])}</code></td><td>{_e(item['reason'])}</td></tr>"
            for item in doc["not_reviewed"]
        )
        body += (
            f"<table><thead><tr><th>Not reviewed</th><th>Why</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    return _section("coverage", "Coverage", body)


def html_report(state: Mapping[str, Any], root: Path) -> str:
    """The page for the run in `state` (with its `usage`); code is read from the project at `root`."""
    document = coordinator_output(state)
    run_id = str(state.get("run_id") or "")
    parts = [_summary(document)]
    if document["status"] != "failed":
        counts = round_counts(document.get("review_iterations") or [])
        parts.append(_section("rounds", "Issues per round", issue_chart(counts) + counts_table(counts)))
        parts.append(_findings(state, document, root))
        parts.append(_section("fixed", "Fixed issues", _issue_table(document.get("fixed_issues") or [])))
        parts.append(_lists(document))
        parts.append(_coverage(state))
    parts.append(_usage(document.get("usage")))
    meta = f"Run <code>{_e(run_id)}</code> · workflow {_e(state.get('workflow'))}"
    if state.get("created_at"):
        meta += f" · started {_e(state['created_at'])}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(CONTENT_SECURITY_POLICY)}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>fixloop review report — run {_e(run_id)}</title><style>{STYLE}</style></head>"
        f'<body><header class="page"><h1>fixloop review report</h1><p class="meta">{meta}</p></header>'
        f"<main>{''.join(parts)}</main>"
        f"<footer>Made by fixloop {_e(__version__)}.</footer><script>{SCRIPT}</script></body></html>\n"
    )
