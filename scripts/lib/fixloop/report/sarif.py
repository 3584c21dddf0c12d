"""The review report as SARIF 2.1.0 for code scanning: one result per remaining issue.

ruleIds are `fixloop/<agent>/<category>`; each result carries the issue's fingerprint, so code scanning
follows an issue across runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from fixloop import __version__
from fixloop.review.access import started_review
from fixloop.review.state import Issue
from fixloop.review.views import final_round
from fixloop.runs.coverage import coverage

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
FINGERPRINT_KEY = "fixloopIssue/v1"
SARIF_LEVELS: dict[str, str] = {"critical": "error", "high": "error", "medium": "warning", "low": "note"}
SECURITY_SEVERITY: dict[str, str] = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "2.0"}


def _slug(value: str) -> str:
    text = "".join(ch if ch.isalnum() else "-" for ch in value.strip().lower())
    while "--" in text:
        text = text.replace("--", "-")
    return text.strip("-") or "general"


def rule_id(agent: str, category: str) -> str:
    return f"fixloop/{_slug(agent)}/{_slug(category)}"


def _rule_name(agent: str, category: str) -> str:
    words = f"{_slug(agent)}-{_slug(category)}".split("-")
    return "".join(word.capitalize() for word in words if word)


def _rule(identifier: str, agent: str, category: str, severity: str, level: str) -> dict[str, Any]:
    properties: dict[str, Any] = {"tags": ["fixloop", _slug(agent), _slug(category)]}
    if "security" in _slug(category):
        properties["tags"].append("security")
        properties["security-severity"] = SECURITY_SEVERITY.get(severity, "5.5")
    return {
        "id": identifier,
        "name": _rule_name(agent, category),
        "shortDescription": {"text": f"{agent}: {category}"},
        "defaultConfiguration": {"level": level},
        "properties": properties,
    }


def _result(issue: Issue, identifier: str, rule_index: int, severity: str, level: str) -> dict[str, Any]:
    line = int(issue.get("line") or 1)
    end_line = max(line, int(issue.get("end_line") or line))
    message = str(issue["description"])
    if issue.get("suggestion"):
        message += f"\n\nSuggestion: {issue['suggestion']}"
    return {
        "ruleId": identifier,
        "ruleIndex": rule_index,
        "level": level,
        "message": {"text": message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {
                        "uri": quote(str(issue["file"]), safe="/"),
                        "uriBaseId": "%SRCROOT%",
                    },
                    "region": {"startLine": line, "endLine": end_line},
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: str(issue["fingerprint"])},
        "properties": {
            "fixloopId": issue["id"],
            "severity": severity,
            "confidence": issue.get("confidence"),
            "autoFixable": bool(issue.get("auto_fixable")),
            "agents": list(issue.get("agents") or ["fixloop"]),
        },
    }


def _invocation(state: Mapping[str, Any]) -> dict[str, Any]:
    """The run's invocation: a warning notification per changed file not reviewed (with why), and the
    coverage counts in its properties."""
    doc = coverage(state)
    notifications = [
        {
            "level": "warning",
            "descriptor": {"id": f"fixloop/not-reviewed/{item['code']}"},
            "message": {"text": f"Not reviewed: {item['reason']}."},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": item["file"]}}}],
        }
        for item in doc["not_reviewed"]
    ]
    counts = {key: doc[key] for key in ("changed_files", "reviewed_files", "not_reviewed_by_reason")}
    return {
        "executionSuccessful": state.get("status") not in ("failed",),
        "toolExecutionNotifications": notifications,
        "properties": {"coverage": counts},
    }


def sarif(state: Mapping[str, Any]) -> dict[str, Any]:
    """SARIF 2.1.0 with one result per remaining issue; ruleIds are `fixloop/<agent>/<category>`."""
    review = started_review(state)
    final = final_round(review) if review else None
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    for issue in final["issues"] if final else []:
        agent = (issue.get("agents") or ["fixloop"])[0]
        category = str(issue.get("category") or "general")
        identifier = rule_id(agent, category)
        severity = str(issue.get("severity") or "medium")
        level = SARIF_LEVELS.get(severity, "warning")
        if identifier not in index:
            index[identifier] = len(rules)
            rules.append(_rule(identifier, agent, category, severity, level))
        results.append(_result(issue, identifier, index[identifier], severity, level))
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "fixloop",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }
        },
        "automationDetails": {
            "id": f"fixloop/{state.get('workflow') or 'review'}/{state.get('run_id') or ''}"
        },
        "results": results,
        "invocations": [_invocation(state)],
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
