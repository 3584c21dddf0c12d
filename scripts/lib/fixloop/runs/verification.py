"""Run the project's verification commands (tests, lint, typecheck, in that order) and return the result.

Each configured command runs through `runs.shell_command.run_in_own_group` (the shell, in the project, in a
process group of its own that is killed after it) with its output in a temporary file; only the output's
tail is kept, redacted. Steps do not stop each other: every configured step runs and reports.

A step: {status passed|failed|skipped|timeout, duration_ms, exit_code, command, output_tail, reason}.
Nothing here changes the run state: review.gate.verify_run stores the result and hands it to the loop.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from fixloop.contracts.runconfig import COMMAND_FIELDS, RunConfig
from fixloop.core import timekeeping
from fixloop.core.engine_path import engine_command
from fixloop.core.errors import FixloopError
from fixloop.core.redact import redact
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.runs import lifecycle, trust
from fixloop.runs.interrupted import engine_busy
from fixloop.runs.shell_command import run_in_own_group
from fixloop.store import layout

if TYPE_CHECKING:
    from fixloop.contracts.coordinator import LoopConfig

Clock = Callable[[], float]
OUTPUT_TAIL_CHARS = 2000
# Read (and redact) a wider window than we keep, so a secret cut by the tail's start is still masked.
_READ_WINDOW_BYTES = 64 * 1024
STEP_NAMES: tuple[str, ...] = tuple(COMMAND_FIELDS)  # tests, lint, typecheck
FAILED_STATUSES: tuple[str, ...] = ("failed", "timeout")  # a step with one of these fails the verification


def _skipped(command: str | None, reason: str) -> dict[str, Any]:
    return {
        "status": "skipped",
        "duration_ms": None,
        "exit_code": None,
        "command": command,
        "output_tail": None,
        "reason": reason,
    }


def output_tail(handle: BinaryIO, limit: int = OUTPUT_TAIL_CHARS) -> str:
    """The last `limit` characters of what was written to `handle`, secrets masked."""
    handle.flush()
    size = handle.seek(0, os.SEEK_END)
    handle.seek(max(0, size - _READ_WINDOW_BYTES))
    text = handle.read().decode("utf-8", "replace")
    return redact(text)[-limit:]


def run_step(command: str, cwd: Path, timeout_seconds: float, clock: Clock) -> dict[str, Any]:
    """Run one shell command; never raises for the command's own failure."""
    with tempfile.TemporaryFile() as output:
        started = timekeeping.now_ms(clock)
        try:
            exit_code = run_in_own_group(command, cwd, timeout_seconds, output)
        except OSError as error:
            return {
                "status": "failed",
                "duration_ms": max(0, timekeeping.now_ms(clock) - started),
                "exit_code": None,
                "command": command,
                "output_tail": None,
                "reason": f"cannot start: {error.strerror or error}",
            }
        duration = max(0, timekeeping.now_ms(clock) - started)
        tail = output_tail(output)
    if exit_code is None:
        status, reason = "timeout", f"timed out after {timeout_seconds:g}s"
    elif exit_code == 0:
        status, reason = "passed", None
    else:
        status, reason = "failed", f"exit code {exit_code}"
    return {
        "status": status,
        "duration_ms": duration,
        "exit_code": exit_code,
        "command": command,
        "output_tail": tail,
        "reason": reason,
    }


def overall_status(steps: Mapping[str, Mapping[str, Any]]) -> str:
    statuses = [steps[name]["status"] for name in STEP_NAMES]
    if any(status in FAILED_STATUSES for status in statuses):
        return "failed"
    if all(status == "skipped" for status in statuses):
        return "skipped"
    return "passed"


def configured_commands(config: RunConfig | LoopConfig) -> dict[str, str]:
    return {
        step: str(command)
        for step, field in COMMAND_FIELDS.items()
        if isinstance(command := getattr(config, field), str) and command.strip()
    }


def require_approved(state: Mapping[str, Any], config: RunConfig | LoopConfig, project: Path) -> None:
    """Refuse (VERIFY_COMMANDS_UNTRUSTED) to run commands the user has not approved for this project."""
    commands = configured_commands(config)
    decision = state.get("trust")
    if not commands or (
        isinstance(decision, dict)
        and decision.get("commands") == commands
        and decision.get("binding") in (None, trust.binding_digest(project, commands))
    ):
        return  # approved for this run and still running what was approved (or declined: none to run)
    reason = None if state.get("trust_config") else trust.not_approved_because(project, commands)
    if reason is None:
        return
    raise FixloopError(
        "VERIFY_COMMANDS_UNTRUSTED",
        "fixloop runs the project's verification commands only once they are approved: "
        + "; ".join(f"{step} `{command}`" for step, command in commands.items())
        + f". {reason} Approve them with `{engine_command('trust')}` in the project, or start the command "
        "with --trust-config (approved for that run only).",
        commands=commands,
    )


def verify(state: Mapping[str, Any], clock: Clock | None = None) -> dict[str, Any]:
    """Run the run's configured commands and log REVIEW_VERIFICATION_START/END; does not touch the state."""
    from fixloop.runs.config import config_from_dump  # pydantic: only a test run pays for it

    clock = clock or timekeeping.default_clock
    config = config_from_dump(state.get("config"))
    project = Path(str(state["project_dir"]))
    require_approved(state, config, project)
    changed = state.get("changed_files")
    files_count = len(changed) if isinstance(changed, list) else 0
    log = lifecycle.run_log(state, clock)
    log.emit("I", "REVIEW_VERIFICATION_START", files_count=files_count)
    started = timekeeping.now_ms(clock)
    steps: dict[str, dict[str, Any]] = {}
    run_dir = Path(layout.run_dir(project, str(state["run_id"])))
    with engine_busy(run_dir, "the verification commands"):
        for step, field in COMMAND_FIELDS.items():
            command = getattr(config, field)
            configured = isinstance(command, str) and bool(command.strip())
            if files_count == 0:
                steps[step] = _skipped(command if configured else None, "no_changes")
            elif not configured:
                steps[step] = _skipped(None, "not_configured")
            else:
                steps[step] = run_step(command, project, config.verify_timeout_seconds, clock)
    ended = timekeeping.now_ms(clock)
    status = overall_status(steps)
    result: dict[str, Any] = {
        **steps,
        "status": status,
        "passed": status != "failed",
        "files_count": files_count,
        "duration_ms": max(0, ended - started),
        "started_at_ms": started,
        "ended_at_ms": ended,
        "ts": utc_timestamp_ms(ended / 1000),
    }
    log.emit(
        "I",
        "REVIEW_VERIFICATION_END",
        tests=steps["tests"]["status"],
        lint=steps["lint"]["status"],
        typecheck=steps["typecheck"]["status"],
        duration_ms=result["duration_ms"],
    )
    return result
