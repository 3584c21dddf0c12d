"""`fixloop check`: run the project's approved test, lint and typecheck commands once, with no run.

It prints JSON for programs, and a short summary for people: with --text, or by default when standard
output is a terminal (--json forces JSON there)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from fixloop.cli.output import print_json, print_text
from fixloop.core.errors import FixloopError
from fixloop.runs.verification import STEP_NAMES
from fixloop.store import layout

TAIL_LINES = 10


def _step_lines(name: str, step: Mapping[str, Any]) -> list[str]:
    status = str(step.get("status"))
    if step.get("command") is None:
        return [f"{name:<10} {status:<8} not configured"]
    seconds = f" ({int(step['duration_ms']) / 1000:.1f}s)" if step.get("duration_ms") is not None else ""
    why = f", {step['reason']}" if status != "passed" and step.get("reason") else ""
    lines = [f"{name:<10} {status:<8} {step['command']}{seconds}{why}"]
    if status in ("failed", "timeout") and step.get("output_tail"):
        tail = str(step["output_tail"]).rstrip("\n").splitlines()[-TAIL_LINES:]
        lines += [f"    | {line}" for line in tail]
    return lines


def summary_text(answer: Mapping[str, Any]) -> str:
    """The check's answer as a person reads it: one line per step, the last lines of a failing one."""
    lines = [f"fixloop check: {answer['status']} in {answer['project']}"]
    for name in STEP_NAMES:
        lines += _step_lines(name, answer[name])
    return "\n".join(lines) + "\n"


@click.command("check")
@click.option(
    "--config", "config_file", default=None, metavar="FILE", help="A config file read after the project's."
)
@click.option("--text", "as_text", flag_value=True, default=None, help="Print a summary for people.")
@click.option("--json", "as_text", flag_value=False, help="Print JSON (the default when not at a terminal).")
def check(config_file: str | None, as_text: bool | None) -> None:
    """Run the approved test, lint and typecheck commands once, outside any run; exit 1 when one fails.
    Commands not approved for this project are refused with the command that approves them."""
    from fixloop.runs.command_check import check_commands

    text = sys.stdout.isatty() if as_text is None else as_text
    try:
        answer = check_commands(Path(layout.project_root()), config_file)
    except FixloopError as error:
        if not text:
            raise
        print_text(f"fixloop check: {error.message}")
        raise SystemExit(error.exit_code) from None
    if text:
        print_text(summary_text(answer))
    else:
        print_json(answer)
    if answer["status"] == "failed":
        raise SystemExit(1)
