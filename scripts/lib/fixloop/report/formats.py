"""What a review run reports: the coordinator output document, the supervisor's simple array, a Markdown
report and SARIF 2.1.0 for code scanning. All are computed from the run state alone."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from fixloop import __version__
from fixloop.contracts.coordinator import CoordinatorOutput
from fixloop.contracts.reviewer import ReviewerIssue
from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.review.machine import (
    STATE_VERSION,
    VERIFICATION_STEPS,
    closed_rounds,
    files_modified,
    final_round,
    fixed_issue_ids,
    introduced_issue_ids,
    kept_rounds,
    summary,
)

AGENT_NAME = "review-coordinator"
NO_CHANGES_MESSAGE = "No changed files to review."
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
FINGERPRINT_KEY = "fixloopIssue/v1"
SARIF_LEVELS: dict[str, str] = {"critical": "error", "high": "error", "medium": "warning", "low": "note"}
SECURITY_SEVERITY: dict[str, str] = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "2.0"}
STEP_FIELDS = ("status", "duration_ms", "reason", "exit_code", "command", "output_tail")


def _review(state: Mapping[str, Any]) -> dict[str, Any] | None:
    review = state.get("review")
    if isinstance(review, dict) and review.get("version") == STATE_VERSION:
        return review
    return None


def issue_ref(issue: Mapping[str, Any]) -> dict[str, Any]:
    """The coordinator output's issue entry."""
    ref = {
        "id": issue["id"],
        "file": issue["file"],
        "description": issue["description"],
        "line": issue.get("line"),
        "severity": issue.get("severity"),
        "category": issue.get("category"),
        "confidence": issue.get("confidence"),
        "agents": list(issue.get("agents") or []),
        "auto_fixable": issue.get("auto_fixable"),
    }
    return ref


def _latest_issues(review: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each issue id -> its most recent version among the kept rounds."""
    latest: dict[str, dict[str, Any]] = {}
    for rnd in kept_rounds(review):
        for issue in rnd["issues"]:
            latest[issue["id"]] = issue
    return latest


def _verification_doc(result: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not result:
        return None
    doc: dict[str, Any] = {}
    for name in VERIFICATION_STEPS:
        step = result.get(name)
        if not isinstance(step, Mapping) or "status" not in step:
            return None
        doc[name] = {key: step[key] for key in STEP_FIELDS if step.get(key) is not None}
    return doc


def last_verification(review: Mapping[str, Any]) -> dict[str, Any] | None:
    for rnd in reversed(review.get("rounds") or []):
        if rnd.get("verification"):
            return _verification_doc(rnd["verification"])
    return _verification_doc(review["gate"].get("verification"))


def review_iterations(review: Mapping[str, Any]) -> list[dict[str, Any]]:
    iterations: list[dict[str, Any]] = []
    for rnd in closed_rounds(review):
        entry: dict[str, Any] = {
            "iteration": rnd["iteration"],
            "agents_results": rnd["agents_results"],
            "issues_found": rnd["issues_found"],
            "fixable_issues": len(rnd["fixable"]),
        }
        fix = rnd.get("fix")
        if fix and fix.get("done"):
            entry["fix_result"] = dict(fix["result"])
        entry["resolved_issues"] = list(rnd.get("resolved_issues") or [])
        entry["introduced_issues"] = list(rnd.get("introduced_issues") or [])
        entry["persisting_issues"] = list(rnd.get("persisting_issues") or [])
        entry["removed_by_verifier"] = list(rnd.get("removed_by_verifier") or [])
        iterations.append(entry)
    return iterations


def coordinator_output(state: Mapping[str, Any]) -> dict[str, Any]:
    """The review-coordinator design's output document (validated against CoordinatorOutput)."""
    review = _review(state)
    outcome = (review or {}).get("outcome") or {}
    if outcome.get("termination_reason") == "no_changes":
        skipped = {"status": "skipped", "reason": "no_changes"}
        document: dict[str, Any] = {
            "status": "success",
            "agent": AGENT_NAME,
            "verification": {name: dict(skipped) for name in VERIFICATION_STEPS},
            "review_iterations": [],
            "summary": {
                "total_iterations": 0,
                "initial_issues": 0,
                "final_issues": 0,
                "fixed_issues": 0,
                "termination_reason": "no_changes",
            },
            "message": NO_CHANGES_MESSAGE,
        }
    elif outcome.get("status") == "failed":
        document = {"status": "failed", "agent": AGENT_NAME, "error": outcome["error"]}
    elif review is None:
        document = {
            "status": "partial",
            "agent": AGENT_NAME,
            "review_iterations": [],
            "summary": summary({}),
            "message": "The review has not started.",
        }
    else:
        final = final_round(review)
        latest = _latest_issues(review)
        introduced = set(introduced_issue_ids(review))
        remaining = [issue_ref(issue) for issue in (final["issues"] if final else [])]
        document = {"status": outcome.get("status", "partial"), "agent": AGENT_NAME}
        verification = last_verification(review)
        if verification is not None:
            document["verification"] = verification
        document.update(
            review_iterations=review_iterations(review),
            summary=summary(review),
            fixed_issues=[issue_ref(latest[issue_id]) for issue_id in fixed_issue_ids(review)],
            remaining_issues=remaining,
            introduced_issues=[item for item in remaining if item["id"] in introduced],
            positive_observations=list(final["positive_observations"]) if final else [],
            files_modified=files_modified(review),
        )
        if not outcome:
            action = (review.get("last_action") or {}).get("action")
            document["message"] = "The review is still running" + (
                f" (last action: {action})." if action else "."
            )
    CoordinatorOutput.model_validate(document)
    return document


def simple_array(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The supervisor design's simple array: one item per remaining issue."""
    review = _review(state)
    final = final_round(review) if review else None
    items: list[dict[str, Any]] = []
    for issue in final["issues"] if final else []:
        model = ReviewerIssue.model_validate(
            {key: issue.get(key) for key in ReviewerIssue.model_fields if issue.get(key) is not None}
        )
        items.append(model.to_supervisor_item())
    return items


# ---- Markdown ------------------------------------------------------------------------------------


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
            "Verification: "
            + ", ".join(f"{name} {verification[name]['status']}" for name in VERIFICATION_STEPS),
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
    return "\n".join(lines).rstrip() + "\n"


# ---- SARIF ---------------------------------------------------------------------------------------


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


def sarif(state: Mapping[str, Any]) -> dict[str, Any]:
    """SARIF 2.1.0 with one result per remaining issue; ruleIds are `fixloop/<agent>/<category>`."""
    review = _review(state)
    final = final_round(review) if review else None
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    for issue in final["issues"] if final else []:
        agents = list(issue.get("agents") or ["fixloop"])
        category = str(issue.get("category") or "general")
        identifier = rule_id(agents[0], category)
        severity = str(issue.get("severity") or "medium")
        level = SARIF_LEVELS.get(severity, "warning")
        if identifier not in index:
            index[identifier] = len(rules)
            properties: dict[str, Any] = {"tags": ["fixloop", _slug(agents[0]), _slug(category)]}
            if "security" in _slug(category):
                properties["tags"].append("security")
                properties["security-severity"] = SECURITY_SEVERITY.get(severity, "5.5")
            rules.append(
                {
                    "id": identifier,
                    "name": _rule_name(agents[0], category),
                    "shortDescription": {"text": f"{agents[0]}: {category}"},
                    "defaultConfiguration": {"level": level},
                    "properties": properties,
                }
            )
        line = int(issue.get("line") or 1)
        end_line = max(line, int(issue.get("end_line") or line))
        message = str(issue["description"])
        if issue.get("suggestion"):
            message += f"\n\nSuggestion: {issue['suggestion']}"
        results.append(
            {
                "ruleId": identifier,
                "ruleIndex": index[identifier],
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
                    "agents": agents,
                },
            }
        )
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
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
