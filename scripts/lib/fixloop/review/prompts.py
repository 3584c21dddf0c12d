"""What the coordinator dispatches: the reviewers' task document and every prompt sent to the reviewers,
the verifier and the fixer, each in the action document that carries it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.contracts.prompt_text import contract_text, review_guide_text
from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT
from fixloop.core.thresholds import QUALITY_PASS_SCORE
from fixloop.review.access import config_of, run_id_of
from fixloop.review.batches import batch_text, current_batch
from fixloop.review.filter_text import accepted_lines, finding_rule_requirements
from fixloop.review.shards import files_to_review, shard_position
from fixloop.review.state import Round, first_retry_context
from fixloop.review.step import Document
from fixloop.runs.baseline import BaselineEntry

# The issue fields an agent sees (the merge bookkeeping, fingerprint and sources, stays in the state).
AGENT_ISSUE_FIELDS = (
    "id",
    "file",
    "line",
    "end_line",
    "severity",
    "confidence",
    "category",
    "rule",
    "description",
    "suggestion",
    "existing_code",
    "improved_code",
    "auto_fixable",
    "agents",
)


def issue_for_agent(issue: Mapping[str, Any]) -> dict[str, Any]:
    return {key: issue.get(key) for key in AGENT_ISSUE_FIELDS if issue.get(key) is not None}


def _issues_for_agent(rnd: Round, ids: list[str]) -> list[dict[str, Any]]:
    wanted = set(ids)
    return [issue_for_agent(issue) for issue in rnd["issues"] if issue["id"] in wanted]


# ---- reviewers ------------------------------------------------------------------------------------


def review_task(
    state: Mapping[str, Any], rnd: Round, accepted: Sequence[BaselineEntry] = ()
) -> dict[str, Any]:
    """The task document (task_id, review_type, working_directory, requirements, retry_context) shared by
    the reviewers of this round's current pass; `accepted`: the baseline's findings in the round's files."""
    config = config_of(state)
    run_id = run_id_of(state)
    base_ref = state.get("base_ref")
    retry = rnd.get("retry_context") or first_retry_context()
    requirements = [
        f"Only report issues with confidence >= {config.confidence_threshold}.",
        "Only review the listed files; report paths relative to the working directory.",
        "Set auto_fixable to true only for a mechanical fix that needs no design decision.",
        *finding_rule_requirements(config, len(accepted)),
    ]
    if retry["attempt_number"] > 1:
        requirements.append(
            "The previous review of this round was rejected as low quality: verify every finding against the "
            "code, cite exact lines, and drop speculative or style-only findings."
        )
        for missing in rnd.get("missing_issues") or []:
            requirements.append(f"The verifier says the review missed: {missing}")
    workflow = state.get("workflow")
    desc = (
        f"fixloop run {run_id}, review round {rnd['iteration']} (workflow {workflow}): review "
        f"{len(files_to_review(rnd))} changed file(s)" + (f" against {base_ref}" if base_ref else "") + "."
    )
    position = shard_position(rnd)
    if position is not None:
        desc += (
            f" Shard {position[0]} of {position[1]} of a {len(rnd['scope'])}-file change: the other shards "
            "go to other calls, so review only these files."
        )
    return {
        "task_id": f"{run_id}-r{rnd['iteration']}",
        "review_type": "diff" if base_ref else "file",
        "working_directory": str(state.get("project_dir") or "/"),
        "task_desc": desc,
        "priority_focus": [],
        "extra_requirements": requirements,
        "retry_context": retry,
    }


def reviewer_prompt(
    state: Mapping[str, Any], rnd: Round, task: Mapping[str, Any], accepted: Sequence[BaselineEntry] = ()
) -> str:
    config = config_of(state)
    files = files_to_review(rnd)
    base_ref = state.get("base_ref")
    position = shard_position(rnd)
    lines = [
        f"fixloop run {run_id_of(state)}: review round {rnd['iteration']}"
        + (f", attempt {task['retry_context']['attempt_number']}" if rnd.get("pass", 1) > 1 else "")
        + (f", shard {position[0]} of {position[1]}" if position is not None else "")
        + ".",
        f"Working directory: {task['working_directory']}",
        "",
        "Review these changed files (paths relative to the working directory):",
        *[f"- {name}" for name in files],
    ]
    if base_ref:
        lines += ["", f"The changes are against {base_ref}: see them with `git diff {base_ref} -- <file>`."]
    lines += accepted_lines(accepted)
    lines += [
        "",
        review_guide_text(config.confidence_threshold),
        "Set auto_fixable to true only when the fix is mechanical and needs no design decision.",
    ]
    retry = task.get("retry_context") or {}
    if int(retry.get("attempt_number", 1)) > 1:
        lines += [
            "",
            f"RETRY (attempt {retry['attempt_number']}): the previous review of this round was rejected.",
            *[f"- previous error: {item}" for item in retry.get("previous_errors", [])],
            "Be stricter this time: check every finding against the code, give exact file and line, "
            "and leave out speculative or style-only findings.",
        ]
        for missing in rnd.get("missing_issues") or []:
            lines.append(f"- the verifier says the review missed: {missing}")
    lines += [
        "",
        "Task document:",
        json.dumps(task, ensure_ascii=False, indent=2),
        "",
        contract_text("reviewer"),
    ]
    return "\n".join(lines)


def review_action(
    state: Mapping[str, Any], rnd: Round, task: Mapping[str, Any], accepted: Sequence[BaselineEntry] = ()
) -> Document:
    run_id = run_id_of(state)
    position = shard_position(rnd)
    return {
        "action": "review",
        "round": rnd["iteration"],
        "shard": list(position) if position is not None else None,
        "attempt": task["retry_context"]["attempt_number"],
        "agents": [f"fixloop:{agent}" for agent in REVIEWER_AGENTS],
        "task": dict(task),
        "prompt": reviewer_prompt(state, rnd, task, accepted),
        "next_command": f"fixloop review next {run_id}",
    }


# ---- the verifier ---------------------------------------------------------------------------------


def verify_findings_action(state: Mapping[str, Any], rnd: Round) -> Document:
    """The verifier's action for the current batch of the round's fixable findings (review.batches)."""
    verifier: Mapping[str, Any] = rnd.get("verifier") or {}
    issues = _issues_for_agent(rnd, current_batch(rnd["fixable"], verifier))
    run_id = run_id_of(state)
    task_id = f"{run_id}-r{rnd['iteration']}"
    retry_errors = list(verifier.get("errors") or [])
    batch = batch_text(verifier)
    lines = [
        f"fixloop run {run_id}: verify the {len(issues)} fixable finding(s) of review round "
        f"{rnd['iteration']}{batch} before they are fixed. Working directory: {state.get('project_dir')}",
        "",
        "For every issue id: check it against the code (accuracy_check: CORRECT, INCORRECT or "
        "PARTIALLY_CORRECT, with evidence; deletion_required for a wrong or harmful suggestion) and against "
        "the project's rules (rule_compliance_check). Then score the review as a whole (quality_assessment: "
        f"overall_score 0-100; below {QUALITY_PASS_SCORE} sends the review back to the reviewers) and list "
        "important issues the review missed (missing_issues).",
    ]
    if batch:
        lines.append(
            f"This is{batch} of the round's {len(rnd['fixable'])} fixable findings: check the issues given "
            "here and score the review by them; the other batches go to other calls."
        )
    if retry_errors:
        lines += ["", f"RETRY (attempt {verifier.get('dispatches', 1)}): the previous verification failed:"]
        lines += [f"- {item}" for item in retry_errors]
    lines += [
        "",
        "Issues:",
        json.dumps(issues, ensure_ascii=False, indent=1),
        "",
        f'Your task_id is "{task_id}".',
        contract_text("verifier"),
    ]
    return {
        "action": "verify_findings",
        "round": rnd["iteration"],
        "batch": int(verifier.get("batch") or 1),
        "batches": int(verifier.get("batches") or 1),
        "agent": f"fixloop:{VERIFIER_AGENT}",
        "task_id": task_id,
        "issues": issues,
        "prompt": "\n".join(lines),
        "next_command": f"fixloop review next {run_id}",
    }


# ---- the fixer ------------------------------------------------------------------------------------


def fix_action(state: Mapping[str, Any], rnd: Round) -> Document:
    """The fixer's action for the current batch of the round's fixable findings (review.batches)."""
    fix = rnd["fix"]
    assert fix is not None
    issues = _issues_for_agent(rnd, current_batch(fix["issue_ids"], fix))
    run_id = run_id_of(state)
    lines = [
        f"fixloop run {run_id}: fix the {len(issues)} issue(s) of review round {rnd['iteration']}"
        f"{batch_text(fix)}. Working directory: {state.get('project_dir')}",
        "",
        "Rules: change only what each issue needs; do not touch unrelated code or files; do not commit, "
        "stash, reset or check out anything (fixloop snapshots the files and can roll your changes "
        "back); skip an issue rather than guess.",
        "",
        "Issues:",
        json.dumps(issues, ensure_ascii=False, indent=1),
        "",
        contract_text("fixer"),
    ]
    return {
        "action": "fix",
        "round": rnd["iteration"],
        "batch": int(fix.get("batch") or 1),
        "batches": int(fix.get("batches") or 1),
        "agent": f"fixloop:{FIXER_AGENT}",
        "issues": issues,
        "prompt": "\n".join(lines),
        "snapshot": (fix.get("snapshot") or {}).get("dir"),
        "next_command": f"fixloop review next {run_id}",
    }
