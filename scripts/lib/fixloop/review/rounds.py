"""A review round's passes: opening a round, asking the reviewers, closing the pass with merged issues."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fixloop.contracts.runconfig import RunConfig
from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.core.errors import FixloopError
from fixloop.review.access import started_review
from fixloop.review.agent_results import agent_result
from fixloop.review.carry import carried_issues
from fixloop.review.filters import (
    SEVERITY_RANK,
    accepted_in_scope,
    finding_rules,
    record_suppression,
    suppress,
)
from fixloop.review.identity import Candidate, group_reports, issue_number
from fixloop.review.issue_registry import IssueRegistry
from fixloop.review.outcome import fail
from fixloop.review.prompts import review_action, review_task
from fixloop.review.shards import (
    files_to_review,
    pass_outcomes,
    plan_pass,
    sharded,
    thin_shards,
    unreviewed_files,
)
from fixloop.review.state import AgentResult, Issue, IssueSource, Round, RunState, new_round
from fixloop.review.step import Document, StepContext
from fixloop.review.views import files_modified
from fixloop.runs.changed_files import reviewable_files


def review_scope(state: RunState) -> list[str]:
    """The files to review: the run's changed files plus every file a kept fix modified, less those the
    config's path filters leave out (before any reviewer is asked, so they cost nothing)."""
    files = {str(item) for item in state.get("changed_files") or []}
    review = started_review(state)
    if review is not None:
        files.update(files_modified(review))
    config = state.get("config")
    kept, _left_out = reviewable_files(sorted(files), config if isinstance(config, dict) else {})
    return kept


def start_round(ctx: StepContext, number: int) -> Round:
    rnd = new_round(number, review_scope(ctx.state))
    ctx.review["rounds"].append(rnd)
    return rnd


def fixable_ids(
    issues: Iterable[Mapping[str, Any]], config: RunConfig, unverified: Iterable[str] | None = None
) -> list[str]:
    """Confident, auto-fixable findings; not those whose earlier fix was claimed but never made
    (`unverified`: review.fix): they stay for a person instead of going to the fixer unchanged again."""
    skip = set(unverified or ())
    return [
        str(issue["id"])
        for issue in issues
        if int(issue.get("confidence", 0)) >= config.confidence_threshold
        and issue.get("auto_fixable") is True
        and str(issue["id"]) not in skip
    ]


def request_review(ctx: StepContext, rnd: Round) -> Document:
    """Open a review pass of `rnd` (in shards when its scope is large) and return the `review` action for
    it (for its first shard)."""
    if rnd["iteration"] > 1 or rnd["pass"] > 1:
        rnd["scope"] = review_scope(ctx.state)
    rnd["review_requested_at_ms"] = ctx.now
    rnd["records"] = {}
    plan_pass(ctx, rnd)
    return review_files(ctx, rnd)


def review_files(ctx: StepContext, rnd: Round) -> Document:
    """The `review` action of the open pass's files (its current shard's, when sharded)."""
    try:
        rules = finding_rules(ctx.state, ctx.config)
    except FixloopError as error:
        return fail(ctx, _rules_error(error))
    accepted = accepted_in_scope(rules, files_to_review(rnd))
    task = review_task(ctx.state, rnd, accepted)
    for agent in REVIEWER_AGENTS:
        ctx.emit("D", "AGENT_IO", agent=agent, direction="input", iteration=rnd["iteration"], content=task)
    return review_action(ctx.state, rnd, task, accepted)


def _rules_error(error: FixloopError) -> dict[str, Any]:
    return {"code": error.code, "message": error.message, **error.details}


def close_round(ctx: StepContext, rnd: Round) -> Document | None:
    """Close the open review pass: agent results, coverage, merged issues with stable ids, fixable ids.

    Returns the `failed` action when coverage is insufficient, else None.
    """
    number = int(rnd["iteration"])
    agents_results: list[AgentResult] = []
    raw: list[tuple[str, dict[str, Any]]] = []
    observations: list[str] = []
    if sharded(rnd):
        outcomes = pass_outcomes(rnd)
        unreviewed = unreviewed_files(rnd)
        if unreviewed:
            rnd["unreviewed"] = unreviewed
    else:
        outcomes = [agent_result(rnd, agent) for agent in REVIEWER_AGENTS]
    for agent, (result, issues, positive) in zip(REVIEWER_AGENTS, outcomes, strict=True):
        agents_results.append(result)
        # A failed reviewer has no findings, unless it failed only some shards: those of the others count.
        raw.extend((agent, issue) for issue in issues)
        observations.extend(item for item in positive if item not in observations)
        if result["status"] == "success":
            continue
        error = result["error"]
        ctx.emit(
            "E",
            "AGENT_FAILURE",
            iteration=number,
            agent=agent,
            error_code=error["code"],
            message=error["message"],
            phase=error["phase"],
            recoverable=error["recoverable"],
        )
    rnd["closed"] = True
    rnd["closed_at_ms"] = ctx.now
    rnd["agents_results"] = agents_results
    # The raw documents are merged below; keep the records small (the issues live on in `issues`).
    for record in rnd["records"].values():
        document = record.get("document")
        if document:
            record["document"] = {key: value for key, value in document.items() if key != "issues"} | {
                "issues_count": len(document.get("issues") or [])
            }

    failed_names = [str(item["agent"]) for item in agents_results if item["status"] == "failed"]
    shortfall = _coverage_shortfall(rnd, agents_results, ctx.config.min_required_agents)
    if shortfall is not None:
        rnd["issues"] = carried_issues(ctx.review, rnd, failed_names, everything=True)
        rnd["issues_found"] = len(rnd["issues"])
        return fail(
            ctx,
            {
                "code": "INSUFFICIENT_COVERAGE",
                "message": shortfall,
                "failed_agents": [item for item in agents_results if item["status"] == "failed"],
                "suggestion": "Check why the failed agents failed, fix the cause and run the review again.",
            },
        )

    try:
        rules = finding_rules(ctx.state, ctx.config)
    except FixloopError as error:
        return fail(ctx, _rules_error(error))
    suppression = suppress(merge_issues(raw), rules)
    record_suppression(rnd, suppression)
    if suppression.dropped:
        dropped = {"iteration": number, "dropped": len(suppression.dropped), "by_reason": suppression.counts}
        ctx.emit("I", "DATA_COLLECTED", data_type="suppressed_findings", summary=dropped)
    for item in suppression.new_marks:
        where = f"{item['file']}:{item['line']}"
        ctx.emit(
            "W",
            "WARNING",
            code="INLINE_IGNORE_NOT_COUNTED",
            message=f"The `fixloop: ignore` mark at {where} is new in this change, so its "
            f"{item['category']} finding is kept: a change does not silence its own review.",
        )
    registry = IssueRegistry.from_json(ctx.review.get("registry"))
    merged = suppression.kept
    ids = registry.assign([candidate for candidate, _issue in merged], number)
    round_issues: list[Issue] = []
    for issue_id, (_candidate, issue) in zip(ids, merged, strict=True):
        issue["id"] = issue_id
        round_issues.append(issue)
    round_issues.sort(key=lambda item: (issue_number(item["id"]), item["id"]))
    ctx.review["registry"] = registry.to_json()
    rnd["issues"] = round_issues
    rnd["issues_found"] = len(round_issues)
    rnd["fixable"] = fixable_ids(round_issues, ctx.config, ctx.review.get("unverified_fixes"))
    rnd["positive_observations"] = observations
    carried = carried_issues(ctx.review, rnd, failed_names, unreviewed=rnd.get("unreviewed"))
    round_issues.extend(carried)  # counted as remaining, not found
    return None


def _coverage_shortfall(rnd: Round, agents_results: Sequence[AgentResult], required: int) -> str | None:
    """Why the pass does not count, when too few reviewers answered (for some shard, in shards)."""
    if sharded(rnd):
        thin = thin_shards(rnd, required)
        if not thin:
            return None
        shards = ", ".join(f"shard {shard} ({count}/{len(REVIEWER_AGENTS)})" for shard, count in thin)
        return (
            f"Too few review agents answered for {shards} of {len(rnd['shards'])} "
            f"(at least {required} required for every shard)"
        )
    succeeded = sum(1 for item in agents_results if item["status"] == "success")
    if succeeded >= required:
        return None
    return f"Only {succeeded}/{len(REVIEWER_AGENTS)} review agents succeeded (at least {required} required)"


def _new_issue(agent: str, candidate: Candidate, issue: Mapping[str, Any], source: IssueSource) -> Issue:
    """The merged issue of a first report (`issue`: a reviewer's issue as its contract validated it)."""
    return {
        "id": "",  # given by the registry once the round's issues are merged
        "fingerprint": candidate.fingerprint,
        "file": candidate.file,
        "line": candidate.line,
        "end_line": issue.get("end_line"),
        "severity": issue["severity"],
        "confidence": issue["confidence"],
        "category": issue["category"],
        "rule": issue.get("rule"),
        "description": issue["description"],
        "suggestion": issue["suggestion"],
        "auto_fixable": issue.get("auto_fixable") is True,
        "existing_code": issue.get("existing_code"),
        "improved_code": issue.get("improved_code"),
        "agents": [agent],
        "sources": [source],
    }


def merge_issues(raw: Sequence[tuple[str, Mapping[str, Any]]]) -> list[tuple[Candidate, Issue]]:
    """One issue per finding (identity.group_reports), listing every reporting agent and every report in
    its sources, in first-seen order (linear time).

    The merged issue takes its text from the most confident report (then the most severe, then the first),
    the highest confidence and severity of all reports, the span of all their lines, and is auto-fixable
    when any report says so.
    """
    candidates = [(agent, Candidate.of(issue)) for agent, issue in raw]
    merged: list[tuple[Candidate, Issue, tuple[int, int]]] = []  # (first report, issue, best rank)
    for group, (agent, candidate), (_agent, issue) in zip(
        group_reports(candidates), candidates, raw, strict=True
    ):
        source: IssueSource = {
            "agent": agent,
            "id": issue["id"],
            "line": candidate.line,
            "end_line": issue.get("end_line"),
            "confidence": issue["confidence"],
        }
        rank = (int(issue["confidence"]), SEVERITY_RANK.get(str(issue["severity"]), 0))
        if group == len(merged):
            merged.append((candidate, _new_issue(agent, candidate, issue, source), rank))
            continue
        first, entry, best = merged[group]
        if agent not in entry["agents"]:
            entry["agents"].append(agent)
        entry["sources"].append(source)
        entry["auto_fixable"] = entry["auto_fixable"] or issue.get("auto_fixable") is True
        entry["confidence"] = max(int(entry["confidence"]), rank[0])
        if rank[1] > SEVERITY_RANK.get(str(entry["severity"]), 0):
            entry["severity"] = issue["severity"]
        if rank > best:
            entry["category"] = issue["category"]
            entry["rule"] = issue.get("rule")
            entry["description"] = issue["description"]
            entry["suggestion"] = issue["suggestion"]
            entry["existing_code"] = issue.get("existing_code")
            entry["improved_code"] = issue.get("improved_code")
            merged[group] = (first, entry, rank)
    for _first, entry, _rank in merged:
        _span_sources(entry)
    return [(candidate, entry) for candidate, entry, _rank in merged]


def _span_sources(entry: Issue) -> None:
    """The merged issue's lines: from the first line of any report to the last line of any."""
    lines = [int(item["line"]) for item in entry["sources"]]
    ends = [int(item["end_line"] or item["line"]) for item in entry["sources"]]
    entry["line"] = min(lines)
    spans = len(set(lines)) > 1 or any(item["end_line"] for item in entry["sources"])
    entry["end_line"] = max(ends) if spans else None
