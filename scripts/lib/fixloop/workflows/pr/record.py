"""The run state's `pr_review` object, and taking what a phase needs from an earlier run of the same PR.

Keys, each set by one phase: pr (0), fetched (1), kept and dropped (2), classifications (3), fixes and
commit (4), drafts (5), posted (6). A run started at a later phase (`--phase=6`) takes the keys it lacks
from the latest earlier fix-pr-review run of the same pull request that has them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.github.pulls import parse_reference
from fixloop.runs import lifecycle
from fixloop.store import gitfiles, layout
from fixloop.workflows.context import PhaseContext, RunState

WORKFLOW = "pr-review"
# key -> the phase that sets it, in phase order; what an inheriting run copies along with it
PRODUCED_BY: dict[str, int] = {
    "pr": 0,
    "fetched": 1,
    "kept": 2,
    "dropped": 2,
    "classifications": 3,
    "fixes": 4,
    "commit": 4,
    "drafts": 5,
    "posted": 6,
}
WHAT: dict[str, str] = {
    "pr": "the pull request",
    "fetched": "the review threads",
    "kept": "the threads to answer",
    "classifications": "the threads' labels",
    "fixes": "the fixes",
    "drafts": "the reply drafts",
}


def pr_record(state: RunState) -> dict[str, Any]:
    record = state.get("pr_review")
    if not isinstance(record, dict):
        record = {}
        state["pr_review"] = record
    return record


def _identity(state: RunState) -> dict[str, Any]:
    """What names this run's pull request: number, owner, name (when known) or else the branch."""
    record = state.get("pr_review") or {}
    pr = record.get("pr") if isinstance(record, dict) else None
    if isinstance(pr, dict):
        return {"number": pr.get("number"), "owner": pr.get("owner"), "name": pr.get("name"), "branch": None}
    try:
        ref = parse_reference(str((state.get("inputs") or {}).get("pr") or ""))
    except FixloopError:
        return {"number": None, "owner": None, "name": None, "branch": None}
    branch = None if ref.number is not None else gitfiles.current_branch(Path(str(state["project_dir"])))
    return {"number": ref.number, "owner": ref.owner, "name": ref.name, "branch": branch}


def _same_pr(identity: dict[str, Any], pr: Any) -> bool:
    if not isinstance(pr, dict):
        return False
    if identity["number"] is None:
        return identity["branch"] is not None and pr.get("head_ref") == identity["branch"]
    if pr.get("number") != identity["number"]:
        return False
    return all(
        identity[key] is None or str(pr.get(key) or "").lower() == str(identity[key]).lower()
        for key in ("owner", "name")
    )


def earlier_run(root: Path, state: RunState, key: str) -> RunState | None:
    """The latest fix-pr-review run before this one, of the same pull request, whose record has `key`."""
    identity = _identity(state)
    started = int(state.get("started_at_ms") or 0)
    found: list[RunState] = []
    try:
        names = os.listdir(layout.runs_dir(root))
    except OSError:
        return None
    for name in names:
        if name == state.get("run_id"):
            continue
        try:
            other = lifecycle.load_run(root, name)
        except FixloopError:
            continue
        record = other.get("pr_review")
        if (
            other.get("workflow") == WORKFLOW
            and int(other.get("started_at_ms") or 0) <= started
            and isinstance(record, dict)
            and record.get(key)
            and _same_pr(identity, record.get("pr"))
        ):
            found.append(other)
    return max(found, key=lambda run: int(run.get("started_at_ms") or 0), default=None)


def prepared(ctx: PhaseContext, key: str) -> dict[str, Any] | None:
    """This run's record once it has `key` (taken with everything before it from an earlier run of the
    same pull request when this run lacks it); None when no run has it."""
    record = pr_record(ctx.state)
    if key in record:  # this run's own phase set it (even to nothing)
        return record
    earlier = earlier_run(ctx.root, ctx.state, key)
    if earlier is None:
        return None
    source = earlier["pr_review"]
    limit = PRODUCED_BY[key] + (1 if key == "drafts" else 0)  # drafts come with what was posted of them
    copied = [
        name
        for name, phase in PRODUCED_BY.items()
        if phase <= limit and name in source and name not in record
    ]
    for name in copied:
        record[name] = source[name]
    record.setdefault("inherited_from", {})[key] = earlier["run_id"]
    ctx.emit(
        "I",
        "DATA_COLLECTED",
        data_type="pr_review_inherited",
        summary={"from_run": earlier["run_id"], "needed": key, "copied": copied},
    )
    return record


def missing(ctx: PhaseContext, key: str) -> tuple[str, str]:
    """(code, message) of a phase that lacks `key` and found no earlier run that has it."""
    phase = PRODUCED_BY[key]
    return (
        "PR_INPUT_MISSING",
        f"Phase {ctx.number} needs {WHAT.get(key, key)} from phase {phase}, and no earlier fix-pr-review run "
        f"of this pull request has them: run from phase {phase} (e.g. --phase={phase},{ctx.number}) "
        "or without --phase.",
    )


def thread_by_id(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(thread["id"]): thread for thread in record.get("kept") or []}
