"""The one summary comment fixloop keeps on a pull request, and the check on its head commit.

Its marker carries a key of what it says apart from the run that said it (run id, tokens, cost): a publish
that changes nothing on the pull request leaves the comment, and the check, as they are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.github.publish_body import SEVERITY_LABELS, safe_text, summary_marker
from fixloop.review.filters import SEVERITY_RANK
from fixloop.workflows.publish.plan import Plan
from fixloop.workflows.publish.severity import severity_of

Json = dict[str, Any]


def failing(issues: Sequence[Json], fail_on: str | None) -> list[Json]:
    """The findings at or above `fail_on` (none when no level was given)."""
    if fail_on is None:
        return []
    return [issue for issue in issues if SEVERITY_RANK[severity_of(issue)] >= SEVERITY_RANK[fail_on]]


def conclusion(issues: Sequence[Json], fail_on: str | None) -> str:
    """The check's conclusion: failure when a remaining finding is at or above `fail_on`, success when
    none is, neutral when no level was given (the check informs, it does not gate)."""
    if fail_on is None:
        return "neutral"
    return "failure" if failing(issues, fail_on) else "success"


def _counts(issues: Sequence[Json]) -> dict[str, int]:
    counts = {name: 0 for name in SEVERITY_LABELS}
    for issue in issues:
        counts[severity_of(issue)] += 1
    return counts


def _usage_line(usage: Mapping[str, Any] | None) -> str:
    total = (usage or {}).get("total") if isinstance(usage, Mapping) else None
    if not isinstance(total, Mapping) or not total.get("calls"):
        return "Tokens and cost: not measured."
    tokens, cost = int(total.get("total_tokens") or 0), float(total.get("cost_usd") or 0)
    return f"Tokens: {tokens} · estimated cost: ${cost:.4f}"


def summary_body(
    *,
    status: str,
    issues: Sequence[Json],
    plan: Plan,
    reviewed: Sequence[str],
    skipped: Mapping[str, str],
    check: Mapping[str, str],
    usage: Mapping[str, Any] | None,
    report_url: str | None,
) -> str:
    """The summary's Markdown with its marker; `issues` are all the run's remaining findings."""
    counts = _counts(issues)
    lines = [
        "## fixloop review",
        "",
        f"**Status:** {safe_text(status)} · check `{check['conclusion']}` on `{check['commit'][:12]}`",
        "",
        "| " + " | ".join(SEVERITY_LABELS.values()) + " |",
        "| " + " | ".join("---" for _ in SEVERITY_LABELS) + " |",
        "| " + " | ".join(str(counts[name]) for name in SEVERITY_LABELS) + " |",
        "",
    ]
    left_out = sum(plan.left_out.values())
    if left_out:
        reasons = ", ".join(
            f"{count} {reason.replace('_', ' ')}" for reason, count in sorted(plan.left_out.items())
        )
        lines += [f"{left_out} finding(s) left out of this review ({reasons}).", ""]
    if plan.outside_diff:
        lines += ["### Findings outside the diff", ""]
        for issue in plan.outside_diff:
            where = f"{issue.get('file')}:{issue.get('line')}"
            label = SEVERITY_LABELS.get(severity_of(issue), "Medium")
            text = " ".join(safe_text(str(issue.get("description") or "")).split())
            lines.append(f"- **{label}** `{safe_text(where)}` ({safe_text(str(issue.get('id')))}): {text}")
        lines.append("")
    lines += [f"Reviewed {len(reviewed)} file(s)."]
    if skipped:
        lines += ["", "Not reviewed (a skipped file is no pass):", ""]
        lines += [f"- `{safe_text(name)}`: {safe_text(why)}" for name, why in sorted(skipped.items())]
    if plan.dismissed:
        lines += [
            "",
            f"{len(plan.dismissed)} finding(s) dismissed on this pull request went to the baseline.",
        ]
    if report_url:
        lines += ["", f"[HTML report]({safe_text(report_url)})"]
    key_material = json.dumps(lines, ensure_ascii=False)
    key = hashlib.sha256(key_material.encode("utf-8")).hexdigest()[:16]
    lines += ["", _usage_line(usage)]
    return "\n".join(lines) + "\n\n" + summary_marker(key)
