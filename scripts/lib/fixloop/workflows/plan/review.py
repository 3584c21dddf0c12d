"""Phase 4 of execute-plan: the review-fix loop over the files phase 3 changed (never the plan file).

A run that resumes a plan also reviews what the runs it resumes changed: the earlier execute-plan runs of
the same plan file that stopped in phase 3 (a batch that stayed red), back to the latest one whose phase 3
completed. Their changes stayed in the project and no review saw them (logged as DATA_COLLECTED, data_type
resumed_changes); files that are gone since are left out.

A run started at this phase (`--phase=4,5`) reviews what the latest earlier execute-plan run of the same
plan file changed in a completed phase 3 (logged as DATA_COLLECTED, data_type resumed_phase); without one
it fails with PREREQUISITE_MISSING. A dry run skips the phase.
"""

from __future__ import annotations

import os

from fixloop.core.errors import FixloopError
from fixloop.runs import lifecycle
from fixloop.runs.phasebook import phase_key
from fixloop.store import layout
from fixloop.workflows.context import PhaseContext, RunState
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed
from fixloop.workflows.plan.record import PLAN_KEY, loaded
from fixloop.workflows.review_phase import ReviewPhase

WORKFLOW = "execute-plan"
EXECUTE = 3  # the phase that changes the project
SCOPED = "changed_files_set"  # ctx.data key: the review's files were set


def phase_3_files(state: RunState) -> list[str]:
    """The files a run's phase 3 changed, whether it completed or stopped."""
    slot = ((state.get("flow") or {}).get("phases") or {}).get(str(EXECUTE)) or {}
    return sorted(str(path) for path in (slot.get("data") or {}).get("files_changed") or [])


def executed_files(state: RunState) -> list[str] | None:
    """The files a run's completed phase 3 changed; None when its phase 3 did not complete."""
    if phase_key(EXECUTE) not in (state.get("phases_completed") or []):
        return None
    return phase_3_files(state)


def earlier_runs(ctx: PhaseContext, plan: str) -> list[RunState]:
    """The execute-plan runs of the same plan file started before this one, oldest first."""
    started = int(ctx.state.get("started_at_ms") or 0)
    found: list[RunState] = []
    try:
        names = os.listdir(layout.runs_dir(ctx.root))
    except OSError:
        return []
    for name in names:
        if name == ctx.run_id:
            continue
        try:
            other = lifecycle.load_run(ctx.root, name)
        except (FixloopError, OSError, ValueError):
            continue  # not a readable run: not a source
        record = other.get(PLAN_KEY)
        if (
            other.get("workflow") == WORKFLOW
            and int(other.get("started_at_ms") or 0) <= started
            and isinstance(record, dict)
            and record.get("path") == plan
        ):
            found.append(other)
    return sorted(found, key=lambda run: (int(run.get("started_at_ms") or 0), str(run["run_id"])))


def earlier_run(ctx: PhaseContext, plan: str) -> RunState | None:
    """The latest execute-plan run before this one, of the same plan file, that completed phase 3."""
    done = [run for run in earlier_runs(ctx, plan) if executed_files(run) is not None]
    return done[-1] if done else None


def resumed_runs(ctx: PhaseContext, plan: str) -> list[RunState]:
    """The runs this one resumes: the latest earlier runs of the plan whose phase 3 stopped after changing
    files, back to the latest one whose phase 3 completed."""
    stopped: list[RunState] = []
    for run in reversed(earlier_runs(ctx, plan)):
        if executed_files(run) is not None:
            break
        if phase_3_files(run):
            stopped.append(run)
    return stopped[::-1]


def with_resumed_changes(ctx: PhaseContext, own: list[str]) -> list[str]:
    record = loaded(ctx)
    if isinstance(record, PhaseFailed):
        return own
    plan = str(record["path"])
    runs = resumed_runs(ctx, plan)
    if not runs:
        return own
    # what the user removed since (fixing what failed) is no change of the plan's to review
    earlier = {path for run in runs for path in phase_3_files(run) if (ctx.root / path).exists()} - {plan}
    ctx.emit(
        "I",
        "DATA_COLLECTED",
        data_type="resumed_changes",
        summary={"run_ids": [run["run_id"] for run in runs], "files": sorted(earlier - set(own))},
    )
    return sorted({*own, *earlier})


def review_files(ctx: PhaseContext) -> list[str] | PhaseFailed:
    own = executed_files(ctx.state)
    if own is not None:
        return with_resumed_changes(ctx, own)
    record = loaded(ctx)
    if isinstance(record, PhaseFailed):
        return record
    earlier = earlier_run(ctx, str(record["path"]))
    if earlier is None:
        return PhaseFailed(
            "PREREQUISITE_MISSING",
            f"Phase 4 reviews the changes of phase 3: this run did not carry out the plan and no earlier "
            f"execute-plan run of {record['path']} did. Run phase 3 first (--phase=3,4).",
            details={"needs": phase_key(EXECUTE), "run_first": "--phase=3,4", "recoverable": False},
        )
    ctx.emit(
        "I",
        "DATA_COLLECTED",
        data_type="resumed_phase",
        summary={"phase": phase_key(EXECUTE), "run_id": earlier["run_id"], "source": "earlier_run"},
    )
    files = executed_files(earlier)
    return files or []


class PlanReviewPhase(ReviewPhase):
    def step(self, ctx: PhaseContext) -> Outcome:
        if ctx.dry_run:
            return PhaseDone("skipped", {"reason": "dry_run"})
        if not ctx.data.get(SCOPED):
            files = review_files(ctx)
            if isinstance(files, PhaseFailed):
                return files
            ctx.state["changed_files"] = files
            ctx.data[SCOPED] = True
        return super().step(ctx)
