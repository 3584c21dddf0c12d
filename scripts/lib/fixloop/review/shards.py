"""A large change reviewed in shards: a review pass whose scope is over `review_shard_files` files (or
`review_shard_lines` lines) is split into shards of related files (runs.shards), and the six reviewers
review one shard at a time, one call each. Each shard's answers are folded into the pass as it completes;
the pass closes once every shard has been reviewed, with each reviewer's findings from all its shards.

A reviewer counts as succeeded for the round only when it answered for every shard; a failed shard leaves
its files unreviewed by that reviewer (`unreviewed`, in the report's coverage), and a shard that fewer than
`min_required_agents` reviewers answered makes the round fail, as a whole review with too few would.
"""

from __future__ import annotations

from typing import Any

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.review.agent_results import AgentOutcome, agent_result, error_doc
from fixloop.review.state import AgentResult, Round
from fixloop.review.step import StepContext
from fixloop.runs.shards import plan_shards


def plan_pass(ctx: StepContext, rnd: Round) -> None:
    """Split the pass's scope into shards when it is over the configured size (else no shards)."""
    rnd.pop("shards", None)
    rnd.pop("shard", None)
    rnd.pop("shard_results", None)
    rnd.pop("unreviewed", None)
    scope = list(rnd.get("scope") or [])
    max_files = ctx.config.review_shard_files
    max_lines = ctx.config.review_shard_lines
    counts = ctx.effects.line_counts(scope) if ctx.effects is not None else {}
    if len(scope) <= max_files and sum(counts.values()) <= max_lines:
        return
    shards = plan_shards(scope, max_files, max_lines, counts)
    if len(shards) < 2:
        return
    rnd["shards"] = shards
    rnd["shard"] = 1
    rnd["shard_results"] = {}
    summary = {
        "iteration": rnd["iteration"],
        "files": len(scope),
        "lines": sum(counts.values()),
        "shards": len(shards),
        "shard_sizes": [len(members) for members in shards],
        "max_files": max_files,
        "max_lines": max_lines,
    }
    ctx.emit("I", "DATA_COLLECTED", data_type="review_shards", summary=summary)


def sharded(rnd: Round) -> bool:
    return bool(rnd.get("shards"))


def shard_position(rnd: Round) -> tuple[int, int] | None:
    """(current shard, number of shards) of a sharded pass, else None."""
    shards = rnd.get("shards")
    return (int(rnd.get("shard") or 1), len(shards)) if shards else None


def files_to_review(rnd: Round) -> list[str]:
    """The files the reviewers are asked to review now: the current shard's, or the whole scope."""
    position = shard_position(rnd)
    if position is None:
        return list(rnd.get("scope") or [])
    shards: list[list[str]] = rnd["shards"]
    return list(shards[position[0] - 1])


def fold_shard(ctx: StepContext, rnd: Round) -> bool:
    """Fold the current shard's answers into the pass; True when another shard is still to be reviewed
    (the pass moves on to it, with fresh records)."""
    position = shard_position(rnd)
    assert position is not None
    current, total = position
    results: dict[str, Any] = rnd["shard_results"]
    succeeded = 0
    for agent in REVIEWER_AGENTS:
        outcome = agent_result(rnd, agent)
        entry = results.setdefault(agent, {"issues": [], "positive": [], "failed": []})
        if outcome.result["status"] == "success":
            succeeded += 1
            entry["issues"].extend(outcome.issues)
            entry["positive"].extend(item for item in outcome.positive if item not in entry["positive"])
            continue
        error = outcome.result["error"]
        entry["failed"].append({"shard": current, **error})
    summary = {
        "iteration": rnd["iteration"],
        "shard": current,
        "of": total,
        "files": len(files_to_review(rnd)),
        "agents_succeeded": succeeded,
    }
    ctx.emit("I", "DATA_COLLECTED", data_type="review_shard_done", summary=summary)
    if current >= total:
        return False
    rnd["shard"] = current + 1
    rnd["records"] = {}
    return True


def pass_outcomes(rnd: Round) -> list[AgentOutcome]:
    """Each reviewer's outcome over the whole pass: its findings from every shard it answered for; failed
    (with the first failure, naming the shards) when it failed on any shard."""
    results: dict[str, Any] = rnd["shard_results"]
    total = len(rnd["shards"])
    outcomes: list[AgentOutcome] = []
    for agent in REVIEWER_AGENTS:
        entry = results.get(agent) or {"issues": [], "positive": [], "failed": []}
        failed = entry["failed"]
        issues = list(entry["issues"])
        if not failed:
            result: AgentResult = {"agent": agent, "status": "success", "issues_count": len(issues)}
        else:
            first = failed[0]
            numbers = ", ".join(str(item["shard"]) for item in failed)
            message = f"shard(s) {numbers} of {total}: {first['message']}"
            error = error_doc(
                str(first["code"]),
                message,
                str(first["phase"]),
                bool(first["recoverable"]),
                first["stack_trace"],
            )
            result = {"agent": agent, "status": "failed", "error": error}
        outcomes.append(AgentOutcome(result, issues, list(entry["positive"])))
    return outcomes


def unreviewed_files(rnd: Round) -> dict[str, list[str]]:
    """reviewer -> the files of the shards it failed on (only reviewers that failed on some shard)."""
    shards: list[list[str]] = rnd.get("shards") or []
    results: dict[str, Any] = rnd.get("shard_results") or {}
    found: dict[str, list[str]] = {}
    for agent, entry in sorted(results.items()):
        files = [name for item in entry["failed"] for name in shards[int(item["shard"]) - 1]]
        if files:
            found[agent] = sorted(files)
    return found


def thin_shards(rnd: Round, min_required: int) -> list[tuple[int, int]]:
    """(shard, reviewers that answered) of each shard that fewer than `min_required` reviewers answered."""
    shards: list[list[str]] = rnd.get("shards") or []
    results: dict[str, Any] = rnd.get("shard_results") or {}
    failures = [0] * len(shards)
    for entry in results.values():
        for item in entry["failed"]:
            failures[int(item["shard"]) - 1] += 1
    answered = [len(REVIEWER_AGENTS) - count for count in failures]
    return [(number, count) for number, count in enumerate(answered, 1) if count < min_required]
