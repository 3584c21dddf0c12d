"""The text fixloop posts on a pull request: secrets masked, no @-mention, and a hidden marker per comment.

Every body goes through `safe_text` (core.redact, then `@name` neutralised with a zero-width space so
GitHub links and notifies nobody). An inline comment's marker carries its finding's fingerprint and
category, so a later publish knows which findings already have a thread; the summary's marker carries the
key of what it says, so an unchanged summary is never edited.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.core.redact import redact

ZERO_WIDTH_SPACE = "\u200b"
_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9_])")
_FINDING_MARKER = re.compile(r"<!--\s*fixloop: finding ([0-9a-f]{8,64}) category ([\w.-]*) -->")
_FIXED_MARKER = re.compile(r"<!--\s*fixloop: fixed ([0-9a-f]{8,64}) -->")
_SUMMARY_MARKER = re.compile(r"<!--\s*fixloop: pr summary key ([0-9a-f]+) -->")
SEVERITY_LABELS = {"critical": "Critical", "high": "High", "medium": "Medium", "low": "Low"}


def safe_text(text: str) -> str:
    """`text` with secrets masked and every `@name` made plain text."""
    return _MENTION.sub("@" + ZERO_WIDTH_SPACE, redact(text))


def finding_marker(fingerprint: str, category: str) -> str:
    slug = re.sub(r"[^\w.-]+", "-", category.lower()).strip("-")
    return f"<!-- fixloop: finding {fingerprint} category {slug} -->"


def fixed_marker(fingerprint: str) -> str:
    return f"<!-- fixloop: fixed {fingerprint} -->"


def summary_marker(key: str) -> str:
    return f"<!-- fixloop: pr summary key {key} -->"


def finding_of(body: str) -> tuple[str, str] | None:
    """(fingerprint, category) of the finding an inline comment's marker names."""
    found = _FINDING_MARKER.findall(body)
    return (found[-1][0], found[-1][1]) if found else None


def fixed_of(body: str) -> str | None:
    found = _FIXED_MARKER.findall(body)
    return found[-1] if found else None


def summary_key_of(body: str) -> str | None:
    found = _SUMMARY_MARKER.findall(body)
    return found[-1] if found else None


def description_of(body: str) -> str:
    """The description an inline comment of fixloop shows: its second paragraph."""
    parts = [part for part in body.split("\n\n") if part.strip()]
    return parts[1].strip() if len(parts) > 1 else ""


def _fence(code: str) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", code)), default=2)
    return "`" * (longest + 1)


def suggestion_block(improved_code: str) -> str:
    """A ```suggestion block whose lines replace the commented lines on "Commit suggestion"."""
    code = improved_code.rstrip("\n")
    fence = _fence(code)
    return f"{fence}suggestion\n{code}\n{fence}"


def finding_body(issue: Mapping[str, Any], suggestion: str | None) -> str:
    """One inline comment: severity, category and id; the description; the advice; the suggestion."""
    severity = SEVERITY_LABELS.get(str(issue.get("severity")), "Medium")
    category = str(issue.get("category") or "")
    head = f"**{severity}** · {safe_text(category)} · {safe_text(str(issue.get('id') or ''))}"
    description = " ".join(safe_text(str(issue.get("description") or "")).split())
    parts = [head, description]
    advice = safe_text(str(issue.get("suggestion") or "")).strip()
    if advice:
        parts.append(advice)
    if suggestion is not None:
        parts.append(suggestion_block(suggestion))  # code: a mention in a code block renders as text
    parts.append(finding_marker(str(issue["fingerprint"]), category))
    return "\n\n".join(parts)


def replaceable(existing_code: str | None, file_lines: Sequence[str], first: int, last: int) -> bool:
    """Whether `existing_code` is exactly lines `first`..`last` of the file (so a suggestion replacing
    those lines with the improved code is the fix, not a guess)."""
    if existing_code is None or first < 1 or last > len(file_lines) or last < first:
        return False
    shown = "\n".join(line.rstrip("\r") for line in file_lines[first - 1 : last])
    return shown == existing_code.rstrip("\n")
