"""A confidence decision logged in a run: the CONFIDENCE_DECISION event of `fixloop policy confidence`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.runs import lifecycle, phasebook


def log_confidence_decision(
    root: Path,
    run_id: str,
    decision: Mapping[str, Any],
    phase: str | None = None,
    factors: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Log `decision` (review.policy.confidence_decision) in the running run, for `phase` of its workflow
    and with the factor scores, when given. Returns the decision with the run id and whether it was logged
    (a run with logging disabled logs nothing)."""
    state = lifecycle.load_run(root, run_id)
    lifecycle.require_running(state)
    fields = dict(decision)
    if phase is not None:
        fields["phase"] = phasebook.phase_key(phasebook.parse_phase_number(str(state["workflow"]), phase))
    if factors is not None:
        fields["factors"] = factors
    event = lifecycle.run_log(state).emit("X", "CONFIDENCE_DECISION", **fields)
    return {**decision, "run_id": run_id, "logged": event is not None}
