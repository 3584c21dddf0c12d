"""`fixloop review merge`: the JSON reports (and SARIF logs) of the shards of one change, reviewed by
separate runs (a CI matrix), as one report, one SARIF log and one --fail-on decision.

The merge of N shard reports equals the report of one run over the same findings: issues are
concatenated (each shard reviewed other files, so no finding is in two shards) and sorted by file, line and
id; counts are summed; coverage lists are joined; the status is the worst of the shards'."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.report.fail_level import SEVERITY_RANK, severity_of
from fixloop.report.sarif import SARIF_SCHEMA, SARIF_VERSION
from fixloop.runs.coverage import coverage_of, merge_reviewer_coverage

STATUS_ORDER = ("success", "dry_run_complete", "partial", "failed")  # best to worst
ISSUE_LISTS = ("fixed_issues", "remaining_issues", "introduced_issues")
SUMMED = ("initial_issues", "final_issues", "fixed_issues")


def _issue_key(issue: Mapping[str, Any]) -> tuple[str, int, str]:
    return (str(issue.get("file")), int(issue.get("line") or 0), str(issue.get("id")))


def _worst_status(statuses: Sequence[str]) -> str:
    ranked = [STATUS_ORDER.index(s) if s in STATUS_ORDER else len(STATUS_ORDER) - 1 for s in statuses]
    return STATUS_ORDER[max(ranked)] if ranked else "success"


def merge_coverage(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    reviewed = sorted(name for part in parts for name in part.get("reviewed") or [])
    not_reviewed = sorted(
        (dict(item) for part in parts for item in part.get("not_reviewed") or []), key=lambda i: i["file"]
    )
    by_reviewer = merge_reviewer_coverage([part.get("by_reviewer") for part in parts])
    return {**coverage_of(reviewed, not_reviewed), "by_reviewer": by_reviewer}


def merge_reports(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One JSON report from the shards' (`fixloop review report RUN --format json`)."""
    merged: dict[str, Any] = {
        "run_ids": [report.get("run_id") for report in reports],
        "status": _worst_status([str(report.get("status")) for report in reports]),
    }
    summaries = [report.get("summary") or {} for report in reports]
    merged["summary"] = {
        "shards": len(reports),
        "total_iterations": max((int(s.get("total_iterations") or 0) for s in summaries), default=0),
        **{key: sum(int(s.get(key) or 0) for s in summaries) for key in SUMMED},
        "termination_reasons": sorted({str(s.get("termination_reason")) for s in summaries}),
    }
    for key in ISSUE_LISTS:
        issues = [dict(issue) for report in reports for issue in report.get(key) or []]
        merged[key] = sorted(issues, key=_issue_key)
    merged["files_modified"] = sorted(
        {name for report in reports for name in report.get("files_modified") or []}
    )
    merged["coverage"] = merge_coverage([report.get("coverage") or {} for report in reports])
    return merged


def merge_sarif(logs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One SARIF log: every shard's results in one run, its rules deduplicated and re-indexed, the
    shards' coverage notifications joined."""
    if not logs:
        return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": []}
    first = logs[0]
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    for log in logs:
        for run in log.get("runs") or []:
            shard_rules = run["tool"]["driver"].get("rules") or []
            for result in run.get("results") or []:
                rule = shard_rules[result["ruleIndex"]]
                if rule["id"] not in index:
                    index[rule["id"]] = len(rules)
                    rules.append(rule)
                results.append({**result, "ruleIndex": index[rule["id"]]})
            for invocation in run.get("invocations") or []:
                notifications += invocation.get("toolExecutionNotifications") or []
    template = first["runs"][0]
    driver = {**template["tool"]["driver"], "rules": rules}
    run = {
        "tool": {**template["tool"], "driver": driver},
        "automationDetails": {"id": "fixloop/review/merged"},
        "results": sorted(results, key=_result_key),
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": sorted(notifications, key=_notification_key),
            }
        ],
    }
    return {"$schema": first.get("$schema"), "version": first.get("version"), "runs": [run]}


def _result_key(result: Mapping[str, Any]) -> tuple[str, int, str]:
    location = result["locations"][0]["physicalLocation"]
    return (
        str(location["artifactLocation"]["uri"]),
        int(location["region"]["startLine"]),
        str(result.get("properties", {}).get("fixloopId")),
    )


def _notification_key(item: Mapping[str, Any]) -> str:
    return str(item["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])


def failing(report: Mapping[str, Any], level: str) -> list[dict[str, Any]]:
    """The merged report's remaining findings at or above `level` (as `--fail-on` counts them)."""
    threshold = SEVERITY_RANK[level]
    return [
        {"id": i.get("id"), "severity": severity_of(i), "file": i.get("file"), "line": i.get("line")}
        for i in report.get("remaining_issues") or []
        if SEVERITY_RANK[severity_of(i)] >= threshold
    ]
