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

# The slash commands' names (README's) -> (the engine's workflow, the stack the command implies). A person
# may type either name wherever a workflow is asked for.
COMMAND_WORKFLOWS: dict[str, tuple[str, str | None]] = {
    "review": ("review", None),
    "fix-backend": ("bugfix", "backend"),
    "fix-frontend": ("bugfix", "frontend"),
    "fix-e2e": ("bugfix", "e2e"),
    "fix-pr-review": ("pr-review", None),
    "fix-ci": ("ci-job", None),
    "execute-plan": ("execute-plan", None),
}


def _unknown(name: str) -> FixloopError:
    return FixloopError(
        "UNKNOWN_WORKFLOW",
        f"Unknown workflow {name!r}: give a command name ({', '.join(COMMAND_WORKFLOWS)}) or an engine "
        f"workflow ({', '.join(WORKFLOW_PHASES)}).",
        valid_values=sorted({*WORKFLOW_PHASES, *COMMAND_WORKFLOWS}),
        received=name,
    )


def resolve_workflow(name: str) -> tuple[str, str | None]:
    """(engine workflow, the stack its command name implies, or None) of a command name (`fix-backend`) or
    an engine workflow name (`bugfix`); UNKNOWN_WORKFLOW for anything else."""
    if name in WORKFLOW_PHASES:
        return name, None
    if name in COMMAND_WORKFLOWS:
        return COMMAND_WORKFLOWS[name]
    raise _unknown(name)


def workflow_and_stack(name: str, stack: str | None) -> tuple[str, str | None]:
    """The engine workflow of `name` and the stack: the one given, else the one the command name implies;
    CONFLICTING_ARGUMENTS when they differ (`fix-backend` with stack `frontend`)."""
    workflow, implied = resolve_workflow(name)
    if stack is not None and implied is not None and stack != implied:
        raise FixloopError(
            "CONFLICTING_ARGUMENTS",
            f"{name} is the {implied} stack; it cannot run with --stack {stack}.",
            arguments=["--workflow", "--stack"],
        )
    return workflow, stack if stack is not None else implied


def known_workflow(workflow: str) -> tuple[str, ...]:
    """The phase names of an engine workflow (a command name is resolved first: resolve_workflow)."""
    try:
        return WORKFLOW_PHASES[workflow]
    except KeyError:
        raise _unknown(workflow) from None


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


def describe_phases(name: str, argument: str | None = None) -> dict[str, Any]:
    """The phases of a workflow (a command name or the engine's) and which ones `argument` selects."""
    workflow, stack = resolve_workflow(name)
    names = known_workflow(workflow)
    selected = parse_phases(workflow, argument)
    described: dict[str, Any] = {"workflow": workflow}
    if name != workflow:
        described.update(command=name, stack=stack)
    return {
        **described,
        "phases": [
            {"phase": number, "key": f"phase_{number}", "name": names[number], "selected": number in selected}
            for number in range(len(names))
        ],
        "selected": selected,
        "review_phase": REVIEW_PHASE[workflow],
    }
