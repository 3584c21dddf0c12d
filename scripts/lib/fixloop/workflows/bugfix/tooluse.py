"""TOOL_USE events for what the engine itself does in a bugfix run: each test run (the shell command it ran,
with its outcome) and the fix plan document it writes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.workflows.context import PhaseContext

ENGINE = "engine"


def tests_ran(ctx: PhaseContext, run: Any) -> None:
    """TOOL_USE Bash for a Work "tests" result: its command, status (test_failed, test_passed, not_run),
    exit code and the file holding its whole output."""
    if not isinstance(run, Mapping):
        return
    ctx.emit(
        "I",
        "TOOL_USE",
        agent=ENGINE,
        tool="Bash",
        target=run.get("command"),
        status=str(run.get("status") or "not_run"),
        purpose=run.get("purpose"),
        exit_code=run.get("exit_code"),
        duration_ms=run.get("duration_ms"),
        output_file=run.get("output_file"),
    )


def file_written(ctx: PhaseContext, path: str, lines: int) -> None:
    ctx.emit("I", "TOOL_USE", agent=ENGINE, tool="Write", target=path, status="success", lines=lines)
