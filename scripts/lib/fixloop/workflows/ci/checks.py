"""Work "ci-checks": run locally what reproduces a CI job's failures (phase 3), then proves them fixed (phase
4): the named tests (the configured test_command narrowed to them, workflows.testrun) and the checks of the
failures that are no single test (the configured lint_command, typecheck_command or whole test_command).

The result: {"purpose", "tests": testrun's result or None, "checks": {step: {status passed|failed|timeout|
skipped, command, exit_code, duration_ms, output_tail, reason}}}. A check whose command is not configured
is skipped (reason not_configured), as is one the user has not approved (reason untrusted).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.contracts.runconfig import COMMAND_FIELDS
from fixloop.core import timekeeping
from fixloop.core.errors import FixloopError
from fixloop.runs import lifecycle
from fixloop.runs.config import config_from_dump
from fixloop.runs.lifecycle import Clock
from fixloop.runs.verification import require_approved, run_step
from fixloop.workflows.testrun import run_tests

CHECK_NAMES = {"tests": "Run the whole test command", "lint": "Run the linter", "typecheck": "Type-check"}


def _skipped(command: str | None, reason: str) -> dict[str, Any]:
    return {
        "status": "skipped",
        "command": command,
        "exit_code": None,
        "duration_ms": None,
        "output_tail": None,
        "reason": reason,
    }


def run_checks(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> dict[str, Any]:
    purpose = str(params.get("purpose") or "reproduce")
    tests = [dict(test) for test in params.get("tests") or [] if isinstance(test, Mapping)]
    names = [str(name) for name in params.get("checks") or [] if name in COMMAND_FIELDS]
    total = (1 if tests else 0) + len(names)
    step = {"phase": params.get("phase"), "agent": "engine", "total_steps": total}
    tests_run = None
    if tests:
        tests_run = run_tests(
            root, state, {**step, "purpose": purpose, "tests": tests, "step_index": 1}, clock
        )
    config = config_from_dump(state.get("config"))
    project = Path(str(state.get("project_dir") or root))
    log = lifecycle.run_log(state, clock)
    checks: dict[str, dict[str, Any]] = {}
    for index, name in enumerate(names, start=total - len(names) + 1):
        command = getattr(config, COMMAND_FIELDS[name])
        if not isinstance(command, str) or not command.strip():
            checks[name] = _skipped(None, "not_configured")
            continue
        try:
            require_approved(state, config, project)
        except FixloopError:
            checks[name] = _skipped(command, "untrusted")
            continue
        fields = {**step, "step": f"{purpose}_{name}", "step_name": CHECK_NAMES[name], "step_index": index}
        log.emit("I", "STEP_START", **fields)
        started = timekeeping.now_ms(clock)
        checks[name] = run_step(command, project, config.verify_timeout_seconds, clock)
        took = max(0, timekeeping.now_ms(clock) - started)
        status = checks[name]["status"]
        log.emit(
            "I",
            "STEP_END",
            **fields,
            status="timeout" if status == "timeout" else "success",
            duration_ms=took,
        )
    return {"purpose": purpose, "tests": tests_run, "checks": checks}
