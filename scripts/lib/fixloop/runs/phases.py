"""Each workflow's phases, and validation of a user's --phase argument."""

from __future__ import annotations

from typing import Any

from fixloop.core.errors import FixloopError

# workflow -> phase names in order; the index is the phase number.
WORKFLOW_PHASES: dict[str, tuple[str, ...]] = {
    "bugfix": (
        "Collect and classify the failure",
        "Diagnose",
        "Design the fix",
        "Document the fix plan",
        "Implement",
        "Verify and review",
    ),
    "pr-review": (
        "Initialize",
        "Fetch comments",
        "Filter comments",
        "Classify comments",
        "Coordinate fixes",
        "Draft replies",
        "Post replies",
        "Review and summarize",
    ),
    "ci-job": (
        "Initialize",
        "Fetch the job log",
        "Classify failures",
        "Find the root cause",
        "Fix",
        "Verify and review",
        "Report",
    ),
    "execute-plan": (
        "Initialize and parse the plan",
        "Validate the plan",
        "Refine the approach",
        "Execute in batches",
        "Review",
        "Report",
    ),
    "review": ("Review",),
}

# The phase at which each workflow hands over to the review coordinator.
REVIEW_PHASE: dict[str, int] = {"bugfix": 5, "pr-review": 7, "ci-job": 5, "execute-plan": 4, "review": 0}


def known_workflow(workflow: str) -> tuple[str, ...]:
    try:
        return WORKFLOW_PHASES[workflow]
    except KeyError:
        raise FixloopError(
            "UNKNOWN_WORKFLOW",
            f"Unknown workflow {workflow!r}.",
            valid_values=sorted(WORKFLOW_PHASES),
            received=workflow,
        ) from None


def parse_phases(workflow: str, argument: str | None) -> list[int]:
    """`all`, a number, or a comma list; de-duplicated and sorted. Anything else is INVALID_PHASE."""
    names = known_workflow(workflow)
    valid = [str(number) for number in range(len(names))]
    text = "all" if argument is None else argument.strip()
    if text == "all":
        return list(range(len(names)))
    parts = [part.strip() for part in text.split(",")]
    invalid = [part for part in parts if part not in valid]
    if not text or invalid:
        raise FixloopError(
            "INVALID_PHASE",
            f"Invalid phase value(s) for {workflow}: {', '.join(invalid) or repr(text)}.",
            valid_values=[*valid, "all"],
            received=argument,
            suggestion=phase_suggestion(len(names)),
        )
    return sorted({int(part) for part in parts})


def phase_suggestion(count: int) -> str:
    if count == 1:
        return "This workflow has one phase: use 0 or 'all'."
    return f"Use numbers 0-{count - 1} or 'all'; separate several with commas, e.g. 0,1."


def describe_phases(workflow: str, argument: str | None = None) -> dict[str, Any]:
    names = known_workflow(workflow)
    selected = parse_phases(workflow, argument)
    return {
        "workflow": workflow,
        "phases": [
            {"phase": number, "key": f"phase_{number}", "name": names[number], "selected": number in selected}
            for number in range(len(names))
        ],
        "selected": selected,
        "review_phase": REVIEW_PHASE[workflow],
    }
