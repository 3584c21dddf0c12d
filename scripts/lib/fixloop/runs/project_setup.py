"""`fixloop init` and `fixloop trust`: a project's verification commands, written down and approved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fixloop.contracts.runconfig import COMMAND_FIELDS
from fixloop.core import timekeeping
from fixloop.core.engine_path import engine_command
from fixloop.core.errors import FixloopError
from fixloop.runs import trust
from fixloop.runs.command_probe import why_not_runnable
from fixloop.runs.config import load_config
from fixloop.runs.detect_commands import detect_commands
from fixloop.runs.verify_commands import command_texts, resolve_commands
from fixloop.store.atomic import write_atomic

CONFIG_FILE = Path(".claude") / "fixloop.json"


def init_config(root: Path, force: bool = False) -> dict[str, Any]:
    """Write `.claude/fixloop.json` with the commands found in the project, and approve them."""
    path = root / CONFIG_FILE
    existing: dict[str, Any] = {}
    if path.exists():
        if not force:
            raise FixloopError(
                "CONFIG_EXISTS",
                f"{path} already exists; `{engine_command('init', '--force')}` sets its commands to what is "
                "found now.",
                path=str(path),
            )
        load_config(root)  # refuses a broken file before it is rewritten
        existing = json.loads(path.read_text(encoding="utf-8"))
    found = detect_commands(root)
    if not found:
        raise FixloopError(
            "NO_COMMANDS_FOUND",
            "No test, lint or typecheck command was found (looked for pytest, ruff, mypy, package.json "
            "scripts, tsconfig.json, go.mod, Cargo.toml); write them into .claude/fixloop.json yourself.",
        )
    unrunnable = {step: why for step, item in found.items() if (why := why_not_runnable(root, item.command))}
    runnable = {step: item for step, item in found.items() if step not in unrunnable}
    document = {**existing}
    for step, field in COMMAND_FIELDS.items():
        document[field] = runnable[step].command if step in runnable else None
    if unrunnable:
        document["detect_commands"] = False  # a run must not find the commands left out again
    write_atomic(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    commands = {step: item.command for step, item in runnable.items()}
    if commands:
        trust.approve(root, commands, now_ms=timekeeping.now_ms(timekeeping.default_clock))
    message = f"Wrote {path}; fixloop will run these commands to check every round."
    if unrunnable:
        message += " Left out, since they cannot run here: " + "; ".join(
            f"{step} `{found[step].command}` ({why})" for step, why in unrunnable.items()
        )
        message += (
            f". Set them in {CONFIG_FILE} once they can, and approve them with `{engine_command('trust')}`."
        )
    return {
        "status": "written",
        "path": str(path),
        "commands": {
            step: {"command": item.command, "found_in": item.source} for step, item in runnable.items()
        },
        "left_out": {
            step: {"command": found[step].command, "found_in": found[step].source, "why": why}
            for step, why in unrunnable.items()
        },
        "approved": bool(commands),
        "message": message,
    }


def trust_project(root: Path, show: bool = False, config_file: str | None = None) -> dict[str, Any]:
    """Approve (or with `show`, only list) the commands a run in this project would run."""
    _config, resolved = resolve_commands(root, load_config(root, config_file).config)
    commands = command_texts(resolved)
    listed = {step: item for step, item in resolved.items() if item.get("command")}
    if not commands:
        return {
            "status": "nothing_to_approve",
            "commands": {},
            "message": "No verification command is set or found.",
        }
    if show:
        reason = trust.not_approved_because(root, commands)
        shown = {"status": "approved" if reason is None else "not_approved", "commands": listed}
        earlier = trust.approved_before(reason).strip()  # an approval that no longer holds says why
        return {**shown, "message": earlier} if earlier else shown
    path = trust.approve(root, commands, now_ms=timekeeping.now_ms(timekeeping.default_clock))
    return {
        "status": "approved",
        "commands": listed,
        "approvals_file": str(path),
        "message": "Approved for this project until the commands change.",
    }
