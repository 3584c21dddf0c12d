"""The commands that verify a run: the configured ones, else the ones found in the project's files.

The run keeps the commands it will run, step by step, with where each came from; they run only once
approved (runs.trust, workflows.trust_gate).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixloop.contracts.runconfig import COMMAND_FIELDS
from fixloop.runs.detect_commands import detect_commands

if TYPE_CHECKING:
    from fixloop.contracts.coordinator import LoopConfig


def resolve_commands(root: Path, config: LoopConfig) -> tuple[LoopConfig, dict[str, dict[str, Any]]]:
    """(the config with found commands filled into unset steps, step -> {command, source})."""
    found = detect_commands(root) if config.detect_commands else {}
    filled: dict[str, str] = {}
    commands: dict[str, dict[str, Any]] = {}
    for step, field in COMMAND_FIELDS.items():
        configured = getattr(config, field)
        if isinstance(configured, str) and configured.strip():
            commands[step] = {"command": configured, "source": "config"}
        elif step in found:
            filled[field] = found[step].command
            commands[step] = {"command": found[step].command, "source": f"found: {found[step].source}"}
        else:
            commands[step] = {"command": None, "source": None}
    return config.model_copy(update=filled), commands


def command_texts(commands: dict[str, dict[str, Any]]) -> dict[str, str]:
    """step -> command, for the steps that have one (what trust approves)."""
    return {step: str(item["command"]) for step, item in commands.items() if item.get("command")}
