"""`fixloop run ...` (a run's life: start, phases, files, end; the runs of the project) and `fixloop phases`.

RUN is a run id, or `latest` for the run started most recently."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from fixloop.cli.listing import ListedGroup
from fixloop.cli.output import print_json
from fixloop.core.errors import FixloopError
from fixloop.report.runlist import list_runs
from fixloop.runs import ending, lifecycle, phasebook
from fixloop.runs.changed_files import set_files
from fixloop.runs.listing import newest_run_id, resolve_run
from fixloop.runs.phases import describe_phases, resolve_workflow, workflow_and_stack
from fixloop.store import layout


def project() -> Path:
    return Path(layout.project_root())


def run_arg(value: str) -> str:
    return resolve_run(project(), value)


MAX_OPTION_JSON_CHARS = 100_000
MAX_OPTION_JSON_DEPTH = 32


def parse_json_object(text: str | None, option: str) -> dict[str, Any] | None:
    if text is None:
        return None
    if len(text) > MAX_OPTION_JSON_CHARS:
        raise FixloopError(
            "INVALID_JSON", f"{option} is longer than {MAX_OPTION_JSON_CHARS} characters.", argument=option
        )
    try:
        value = json.loads(text)
    except RecursionError:
        raise FixloopError("INVALID_SUMMARY", f"{option} is nested too deeply.", argument=option) from None
    except json.JSONDecodeError as error:
        raise FixloopError(
            "INVALID_JSON",
            f"{option} is not valid JSON: {error.msg} (column {error.colno}).",
            argument=option,
            parse_error=str(error),
        ) from None
    if not isinstance(value, dict):
        raise FixloopError(
            "INVALID_SUMMARY",
            f"{option} must be a JSON object.",
            argument=option,
            received_type=type(value).__name__,
        )
    if _depth(value) > MAX_OPTION_JSON_DEPTH:
        raise FixloopError(
            "INVALID_SUMMARY",
            f"{option} is nested deeper than {MAX_OPTION_JSON_DEPTH} levels.",
            argument=option,
        )
    return value


def _depth(value: Any) -> int:
    """How deeply `value` nests objects and arrays (without recursion)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, level + 1) for child in children)
    return deepest


def gather_files(
    changed_files: tuple[str, ...], files_from: str | None, extra: tuple[str, ...]
) -> list[str] | None:
    """--changed-files F (repeatable; more names may follow), --changed-files-from FILE|- (one per line)."""
    if extra and not changed_files:
        raise FixloopError(
            "UNEXPECTED_ARGUMENT",
            f"Unexpected argument(s): {' '.join(extra)}.",
            received=list(extra),
            suggestion="List files after --changed-files.",
        )
    if not changed_files and files_from is None:
        return None
    files = [*changed_files, *extra]
    if files_from is not None:
        if files_from == "-":
            text = sys.stdin.read()
        else:
            source = layout.resolve_inside(project(), files_from)
            try:
                text = source.read_text(encoding="utf-8")
            except OSError as error:
                raise FixloopError(
                    "FILE_UNREADABLE", f"Cannot read {source}: {error.strerror or error}.", path=str(source)
                ) from None
        files.extend(line.strip() for line in text.splitlines() if line.strip())
    return files


def _files_options(command: Any) -> Any:
    command = click.argument("extra_files", nargs=-1, metavar="[FILE]...")(command)
    command = click.option(
        "--changed-files-from",
        "files_from",
        metavar="FILE|-",
        help="Read changed files from FILE (one per line; - = stdin).",
    )(command)
    command = click.option(
        "--changed-files", "changed_files", multiple=True, metavar="FILE", help="A changed file (repeatable)."
    )(command)
    command = click.option(
        "--git-diff",
        "git_base",
        is_flag=False,
        flag_value="HEAD",
        default=None,
        metavar="[BASE]",
        help="Take changed files from git against BASE (default HEAD), plus staged and untracked files.",
    )(command)
    return command


WORKFLOW_HELP = (
    "A command name (review, fix-backend, fix-frontend, fix-e2e, fix-pr-review, fix-ci, execute-plan) or the "
    "engine's workflow (review, bugfix, pr-review, ci-job, execute-plan)."
)


@click.command("phases")
@click.argument("workflow")
@click.argument("argument", required=False)
def phases(workflow: str, argument: str | None) -> None:
    """Show a workflow's phases and which ones ARGUMENT (e.g. 0,1 or all) selects. WORKFLOW is a command
    name such as fix-backend, or the engine's name such as bugfix."""
    print_json(describe_phases(workflow, argument))


@click.group("run", cls=ListedGroup)
def run() -> None:
    """Create and follow a workflow run (state under .claude/fixloop/runs/<run_id>/)."""


@run.command("start")
@click.option("--workflow", required=True, help=WORKFLOW_HELP)
@click.option("--stack", default=None, help="frontend, backend, e2e or mixed.")
@click.option("--phase", "phase", default=None, help="Phases to run: all, N, or N,M,...")
@click.option("--dry-run", is_flag=True, default=False)
@click.option("--log/--no-log", "log", default=None, help="Write the run logs (default: on).")
@click.option("--level", default=None, help="Log level: info or debug.")
@click.option("--config", "config_file", default=None, metavar="FILE", help="A JSON file of loop settings.")
@click.option(
    "--args", "raw_args", default=None, metavar="TEXT", help="The slash command's $ARGUMENTS string."
)
@click.option("--command", "command_text", default=None, metavar="TEXT", help="The slash command as typed.")
@_files_options
def start(
    workflow: str,
    stack: str | None,
    phase: str | None,
    dry_run: bool,
    log: bool | None,
    level: str | None,
    config_file: str | None,
    raw_args: str | None,
    command_text: str | None,
    git_base: str | None,
    changed_files: tuple[str, ...],
    files_from: str | None,
    extra_files: tuple[str, ...],
) -> None:
    """Start a run: state, logs, SESSION_START, and the Claude Code session binding."""
    from fixloop.runs import creation  # the configuration's models: only `start` pays for them

    root = project()
    workflow, stack = workflow_and_stack(workflow, stack)
    files = gather_files(changed_files, files_from, extra_files)
    started = creation.start_run(
        workflow,
        root=root,
        stack=stack,
        phase=phase,
        dry_run=dry_run,
        log=log,
        level=level,
        config_file=config_file,
        raw_args=raw_args,
        command=command_text,
        changed_files=files,
        git_base=git_base,
    )
    print_json(
        {
            **creation.describe_run(started["state"], root),
            "free_text": started["free_text"],
            "warnings": started["warnings"],
        }
    )


@run.command("show")
@click.argument("run_id", metavar="RUN")
def show(run_id: str) -> None:
    """Print a run's state."""
    print_json(lifecycle.load_run(project(), run_arg(run_id)))


@run.command("current")
def current() -> None:
    """Print the state of the run bound to $CLAUDE_CODE_SESSION_ID; outside a Claude Code session, the
    state of the run started most recently, under a `current_run` label that says so."""
    root = project()
    if os.environ.get(lifecycle.SESSION_ENV):
        print_json(lifecycle.load_run(root, lifecycle.current_run_id(root)))
        return
    state = lifecycle.load_run(root, newest_run_id(root))
    label = {
        "resolved_by": "latest",
        "note": f"${lifecycle.SESSION_ENV} is not set: this is the run started most recently in the project.",
    }
    print_json({"current_run": label, **state})


@run.command("list")
@click.option(
    "--workflow",
    default=None,
    help="Only runs of this workflow (fix-backend, fix-frontend and fix-e2e: every bugfix run).",
)
@click.option("--status", default=None, help="Only runs with this status (running, success, partial, ...).")
@click.option("--limit", default=None, type=int, metavar="N", help="At most N runs.")
def list_command(workflow: str | None, status: str | None, limit: int | None) -> None:
    """The runs of the project, newest first: id, workflow, status, start and end, termination reason and
    remaining issues."""
    engine_workflow = resolve_workflow(workflow)[0] if workflow is not None else None
    print_json(list_runs(project(), engine_workflow, status, limit))


@run.command("phase")
@click.argument("run_id", metavar="RUN")
@click.option("--start", "start_phase", default=None, metavar="N")
@click.option("--end", "end_phase", default=None, metavar="N")
@click.option(
    "--status", default=None, help="With --end: success, partial, failed, skipped or user_cancelled."
)
@click.option("--summary", default=None, metavar="JSON", help="With --end: a JSON object for PHASE_END.")
def phase(
    run_id: str, start_phase: str | None, end_phase: str | None, status: str | None, summary: str | None
) -> None:
    """Start (--start N) or end (--end N --status S) a phase; PHASE_START / PHASE_END are logged."""
    run_id = run_arg(run_id)
    if (start_phase is None) == (end_phase is None):
        raise FixloopError(
            "USAGE_ERROR", "Give exactly one of --start N and --end N.", arguments=["--start", "--end"]
        )
    root = project()
    if start_phase is not None:
        if status is not None or summary is not None:
            raise FixloopError("USAGE_ERROR", "--status and --summary go with --end, not --start.")
        print_json(phasebook.phase_start(root, run_id, start_phase))
        return
    assert end_phase is not None
    if status is None:
        raise FixloopError(
            "USAGE_ERROR",
            "--end needs --status.",
            valid_values=list(phasebook.PHASE_STATUSES),
        )
    details = parse_json_object(summary, "--summary")
    print_json(phasebook.phase_end(root, run_id, end_phase, status, details))


@run.command("end")
@click.argument("run_id", metavar="RUN")
@click.option("--status", required=True, help="success, partial, failed, user_cancelled or dry_run_complete.")
@click.option("--summary", default=None, metavar="JSON", help="A JSON object for SESSION_END.")
def end(run_id: str, status: str, summary: str | None) -> None:
    """End a run with a final status; SESSION_END is logged."""
    run_id = run_arg(run_id)
    details = parse_json_object(summary, "--summary")
    print_json(ending.end_run(project(), run_id, status, details))


@run.command("files")
@click.argument("run_id", metavar="RUN")
@_files_options
def files(
    run_id: str,
    git_base: str | None,
    changed_files: tuple[str, ...],
    files_from: str | None,
    extra_files: tuple[str, ...],
) -> None:
    """Replace a run's changed files (from git, or listed)."""
    run_id = run_arg(run_id)
    listed = gather_files(changed_files, files_from, extra_files)
    print_json(set_files(project(), run_id, listed, git_base))
