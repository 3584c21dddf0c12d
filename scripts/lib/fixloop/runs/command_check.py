"""`fixloop check`: run the project's approved verification commands once, outside any run.

The commands are the ones a run would take (the config's, else the ones found in the project), so a person
can see them pass or fail before the first review. They run only when approved for this project, as in a
run (runs.trust): nothing a repository says runs unasked. No run, state or log is written; the answer is
each step's result as `fixloop verify` gives it.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from fixloop.contracts.runconfig import COMMAND_FIELDS
from fixloop.core import timekeeping
from fixloop.core.engine_path import engine_command
from fixloop.core.errors import FixloopError
from fixloop.runs import trust
from fixloop.runs.config import load_config
from fixloop.runs.lifecycle import Clock
from fixloop.runs.verification import overall_status, run_step
from fixloop.runs.verify_commands import command_texts, resolve_commands


def _not_configured() -> dict[str, Any]:
    return {
        "status": "skipped",
        "duration_ms": None,
        "exit_code": None,
        "command": None,
        "output_tail": None,
        "reason": "not_configured",
    }


def _refuse_unapproved(root: Path, commands: dict[str, str], config_file: str | None) -> None:
    reason = trust.not_approved_because(root, commands)
    if reason is None:
        return
    approve = engine_command("trust", *(["--config", shlex.quote(config_file)] if config_file else []))
    raise FixloopError(
        "VERIFY_COMMANDS_UNTRUSTED",
        "fixloop runs the project's verification commands only once they are approved: "
        + "; ".join(f"{step} `{command}`" for step, command in commands.items())
        + f". {reason} Approve them with `{approve}` in the project, then check again.",
        commands=commands,
        suggestion=approve,
    )


def check_commands(root: Path, config_file: str | None = None, clock: Clock | None = None) -> dict[str, Any]:
    """Run each approved verification command of the project at `root` once; VERIFY_COMMANDS_UNTRUSTED
    (nothing run) when they are not approved, NO_COMMANDS_FOUND when there is none."""
    clock = clock or timekeeping.default_clock
    loaded = load_config(root, config_file)
    config, resolved = resolve_commands(root, loaded.config)
    commands = command_texts(resolved)
    if not commands:
        raise FixloopError(
            "NO_COMMANDS_FOUND",
            "No test, lint or typecheck command is set or found, so there is nothing to check: run "
            f"`{engine_command('init')}` or set test_command in .claude/fixloop.json.",
            exit_code=1,
        )
    _refuse_unapproved(root, commands, config_file)
    started = timekeeping.now_ms(clock)
    steps: dict[str, dict[str, Any]] = {}
    for step in COMMAND_FIELDS:
        command = commands.get(step)
        steps[step] = (
            run_step(command, root, config.verify_timeout_seconds, clock) if command else _not_configured()
        )
        steps[step]["source"] = resolved[step]["source"]
    status = overall_status(steps)
    return {
        "status": status,
        "passed": status != "failed",
        "project": str(root),
        "config_sources": loaded.sources,
        **steps,
        "duration_ms": max(0, timekeeping.now_ms(clock) - started),
    }
