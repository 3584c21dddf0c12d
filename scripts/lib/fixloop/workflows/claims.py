"""The claims of code-changing agents the engine could not verify, as lines of the run's final message.

- execute-plan: tasks the task implementer said done without a recorded edit that backs it (their outcome
  in the plan record has the code TASK_UNVERIFIED, workflows.plan.changes);
- bugfix, fix-ci: files the implementer said it modified that did not change (`unchanged_claims` in its
  phase's data, workflows.redgreen).
"""

from __future__ import annotations

from typing import Any

from fixloop.workflows.context import RunState, flow_of

TASK_UNVERIFIED = "TASK_UNVERIFIED"


def unverified_claim_lines(state: RunState) -> list[str]:
    lines: list[str] = []
    plan: Any = state.get("plan")
    outcomes: Any = plan.get("outcomes") if isinstance(plan, dict) else None
    if isinstance(outcomes, dict):
        tasks = [key for key, entry in outcomes.items() if (entry or {}).get("code") == TASK_UNVERIFIED]
        if tasks:
            lines.append(
                f"Task claims not verified: {', '.join(tasks)} (the task implementer said done, but no "
                "recorded edit changed their files): not done, not checked off."
            )
    for number, slot in sorted((flow_of(state).get("phases") or {}).items()):
        files = ((slot or {}).get("data") or {}).get("unchanged_claims") or []
        if files:
            lines.append(
                f"Claims not verified in phase {number}: the implementer said it modified "
                f"{', '.join(str(path) for path in files)}, but they did not change: not counted as changed."
            )
    return lines
