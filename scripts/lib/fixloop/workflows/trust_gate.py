"""Before a run's first phase: may it run the project's verification commands?

They come from the repository, so they run only when the user approved exactly these commands for this
project (runs.trust), passed --trust-config, or answers yes now. Unattended runs cannot ask: they stop with
VERIFY_COMMANDS_UNTRUSTED and say how to approve. A user who declines gets a run without verification.
"""

from __future__ import annotations

from typing import Any

from fixloop.contracts.runconfig import COMMAND_FIELDS
from fixloop.core.engine_path import engine_command
from fixloop.runs import trust
from fixloop.runs.verify_commands import command_texts
from fixloop.workflows.context import PhaseContext, RunState
from fixloop.workflows.outcomes import Ask, Option, Outcome, PhaseFailed, RunDone

CONTEXT = "verify_commands"
APPROVE, SKIP, CANCEL = "approve", "skip", "cancel"
UNTRUSTED = "VERIFY_COMMANDS_UNTRUSTED"
APPROVE_HOW = (
    f"Approve them with `{engine_command('trust')}` in the project, or start the command again with "
    "--trust-config (approved for that run only)."
)


def _commands(state: RunState) -> dict[str, str]:
    stored = state.get("verification_commands")
    return command_texts(stored) if isinstance(stored, dict) else {}


def _listing(state: RunState) -> str:
    stored = state.get("verification_commands") or {}
    lines = []
    for step, command in _commands(state).items():
        source = (stored.get(step) or {}).get("source") or "config"
        lines.append(f"- {step}: `{command}` ({source})")
    return "\n".join(lines)


def settled(state: RunState) -> bool:
    decision = state.get("trust")
    return isinstance(decision, dict) and decision.get("status") in ("approved", "declined", "none")


def check(ctx: PhaseContext, attended: bool) -> Outcome | None:
    """None when the run may go on; else the question to ask, or the end of the run."""
    state = ctx.state
    decision = state.get("trust")
    if isinstance(decision, dict) and decision.get("status") == "cancelled":
        return RunDone("skipped", "user_cancelled", "user_cancelled")
    if settled(state):
        return None
    commands = _commands(state)
    if not commands:
        state["trust"] = {"status": "none"}
        ctx.warn(
            "NO_VERIFICATION_CONFIGURED",
            "No test, lint or typecheck command is configured or found, so nothing checks the changes: run "
            f"`{engine_command('init')}` in the project or set test_command in .claude/fixloop.json.",
        )
        return None
    reason = trust.not_approved_because(ctx.root, commands)
    binding = trust.binding_digest(ctx.root, commands)
    if reason is None:
        state["trust"] = {
            "status": "approved",
            "by": "earlier approval",
            "commands": commands,
            "binding": binding,
        }
        return None
    if state.get("trust_config"):
        state["trust"] = {"status": "approved", "by": "--trust-config", "commands": commands}
        ctx.emit("X", "USER_INTERACTION", interaction_type="flag", context=CONTEXT, user_response=APPROVE)
        return None
    if not attended:
        return PhaseFailed(
            UNTRUSTED,
            "fixloop runs the project's verification commands only once they are approved:\n"
            f"{_listing(state)}\n{trust.approved_before(reason)}{APPROVE_HOW}",
            details={"commands": commands},
        )
    return Ask(
        CONTEXT,
        "fixloop checks every round by running these commands from the repository in your project:\n"
        f"{_listing(state)}\n{trust.approved_before(reason)}Run them?",
        (
            Option(APPROVE, "Run them, and remember them for this project until they change."),
            Option(SKIP, "Go on without running anything: the changes are not checked."),
            Option(CANCEL, "Stop the run."),
        ),
        CANCEL,
    )


def apply_answer(ctx: PhaseContext, label: str) -> None:
    state = ctx.state
    commands = _commands(state)
    if label == APPROVE:
        trust.approve(ctx.root, commands, now_ms=ctx.now)
        binding = trust.binding_digest(ctx.root, commands)
        state["trust"] = {"status": "approved", "by": "answer", "commands": commands, "binding": binding}
    elif label == SKIP:
        state["trust"] = {"status": "declined", "commands": commands}
        config: dict[str, Any] = state.setdefault("config", {})
        for field in COMMAND_FIELDS.values():
            config[field] = None
        ctx.warn(
            "VERIFICATION_DECLINED",
            "The verification commands were not approved: nothing checks the changes.",
        )
    else:
        state["trust"] = {"status": "cancelled", "commands": commands}
