"""Starting a workflow run: its state file, its logs, its Claude Code session binding and SESSION_START."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fixloop import __version__
from fixloop.core import timekeeping
from fixloop.core.errors import FixloopError
from fixloop.core.ids import new_run_id
from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.runs.changed_files import (
    collect_files,
    not_reviewable_warning,
    reviewable_files,
    split_unreadable,
)
from fixloop.runs.command_args import CommandArgs, parse_command_args
from fixloop.runs.lifecycle import (
    SESSION_ENV,
    Clock,
    check_choice,
    check_stack,
    run_log,
    store_for,
)
from fixloop.runs.phases import WORKFLOW_PHASES, known_workflow, parse_phases
from fixloop.runs.unreviewable import split_unreviewable
from fixloop.runs.verify_commands import resolve_commands
from fixloop.store import gitfiles, layout
from fixloop.store.ignored import keep_out_of_git
from fixloop.store.logwriter import LOG_LEVELS, EventLog, log_file_paths

SCHEMA_VERSION = 1
_CREATE_ATTEMPTS = 5


# ---- start ---------------------------------------------------------------------------------------


def start_run(
    workflow: str,
    *,
    root: Path,
    stack: str | None = None,
    phase: str | None = None,
    dry_run: bool = False,
    log: bool | None = None,
    level: str | None = None,
    config_file: str | Path | None = None,
    raw_args: str | None = None,
    command: str | None = None,
    changed_files: Sequence[str] | None = None,
    git_base: str | None = None,
    review_base: Mapping[str, Any] | None = None,
    claude_session_id: str | None = None,
    free_text: str | None = None,
    interactive: bool = False,
    inputs: Mapping[str, Any] | None = None,
    trust_config: bool = False,
    no_gate: bool = False,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """Create a run, bind it to the Claude Code session, open its logs and write SESSION_START.

    Options given directly win over the same flag in `raw_args` (the slash command's $ARGUMENTS).
    `git_base` "" means HEAD; `review_base` (runs.review_base.ReviewBase.to_json) says why that base.
    The config's review_include / review_exclude leave files out. `claude_session_id` None reads
    $CLAUDE_CODE_SESSION_ID ("" = no session).
    `free_text` (the user's words, exact) wins over the rest of `raw_args`; `interactive` says whether a
    person can answer the run's questions; `inputs` holds what the workflow was started on (a PR, a CI run,
    a plan); `trust_config` approves the run's verification commands for this run only; `no_gate` lets a
    review go on when its checks fail before the first round (the failure is reported, not a stop).
    Returns {"state": ..., "warnings": [...], "free_text": ...}.
    """
    clock = clock or timekeeping.default_clock
    known_workflow(workflow)
    check_stack(stack)
    parsed: CommandArgs = parse_command_args(raw_args)
    phase_arg = phase if phase is not None else parsed.phase
    selected = parse_phases(workflow, phase_arg)
    if level is not None:
        check_choice("INVALID_ARGUMENT", "log level", level, LOG_LEVELS)
    effective_level = level or parsed.effective_level
    verbose = parsed.verbose or effective_level == "debug"
    dry = dry_run or parsed.dry_run
    log_enabled = log if log is not None else parsed.log if parsed.log is not None else True
    from fixloop.runs.config import load_config  # pydantic: only run start pays for it

    loaded = load_config(root, config_file)
    config, commands = resolve_commands(root, loaded.config)
    files, base_ref, warnings = collect_files(root, changed_files, git_base)
    files, unreadable = split_unreadable(files)
    if unreadable:
        warnings.append(not_reviewable_warning(unreadable))
    files, left_out = reviewable_files(files, config.model_dump(mode="json"))
    files, skipped = split_unreviewable(root, files)
    session = claude_session_id if claude_session_id is not None else os.environ.get(SESSION_ENV, "")
    if session and not layout.is_session_id(session):
        raise FixloopError(
            "INVALID_SESSION_ID",
            "Invalid Claude Code session id: expected 1-128 of A-Z a-z 0-9 _ -.",
            received=session,
        )

    started_ms = timekeeping.now_ms(clock)
    identifier = stack if workflow == "bugfix" and stack else workflow
    args = {
        "phase": phase_arg if phase_arg is not None else "all",
        "dry_run": dry,
        "log": log_enabled,
        "verbose": verbose,
    }
    for own in (layout.fixloop_dir(root), layout.logs_dir(root, workflow)):
        layout.require_own_dir_inside(root, own)
    keep_out_of_git(layout.fixloop_dir(root))
    if log_enabled:
        keep_out_of_git(os.path.dirname(layout.logs_dir(root, workflow)))
    state: dict[str, Any] = {}
    for _attempt in range(_CREATE_ATTEMPTS):
        run_id = new_run_id()
        log_files: dict[str, str] | None = None
        if log_enabled:
            jsonl, text = log_file_paths(
                Path(layout.logs_dir(root, workflow)), identifier, run_id, started_ms / 1000
            )
            log_files = {"jsonl": str(jsonl), "text": str(text)}
        stamp = utc_timestamp_ms(started_ms / 1000)
        state = {
            "schema_version": SCHEMA_VERSION,
            "run_id": run_id,
            "workflow": workflow,
            "stack": stack,
            "status": "running",
            "created_at": stamp,
            "updated_at": stamp,
            "started_at_ms": started_ms,
            "ended_at_ms": None,
            "project_dir": str(root.resolve()),
            "claude_session_id": session or None,
            "command": command,
            "args": args,
            "free_text": free_text if free_text is not None else parsed.rest,
            "inputs": dict(inputs or {}),
            "interactive": interactive,
            "dry_run": dry,
            "phases": selected,
            "phases_completed": [],
            "open_phases": {},
            "phase_results": [],
            "changed_files": files,
            "base_ref": base_ref,
            "config": config.model_dump(mode="json"),
            "verification_commands": commands,
            "trust_config": trust_config,
            "no_gate": no_gate,
            "config_sources": loaded.sources,
            "logging": {
                "enabled": log_enabled,
                "level": effective_level,
                "session_id": run_id,
                "log_files": log_files,
            },
            "error_count": 0,
            "errors": [],
            "review": {},
            "verification": None,
        }
        if review_base is not None:
            state["review_base"] = dict(review_base)
        if left_out:
            state["files_left_out"] = left_out
        if unreadable:
            state["files_not_reviewable"] = unreadable
        if skipped:
            state["files_skipped"] = skipped
        try:
            store_for(root, run_id, clock).create(state)
            break
        except FixloopError as error:
            if error.code != "RUN_EXISTS":
                raise
    else:  # pragma: no cover - 5 collisions of 32-bit random ids
        raise FixloopError("RUN_ID_COLLISION", "Could not allocate a fresh run id.")

    if session:
        layout.bind_session(root, session, state["run_id"])
    events = run_log(state, clock)
    started = events.emit(
        "I",
        "SESSION_START",
        workflow=workflow,
        stack=stack,
        command=command,
        args=args,
        env={
            "project_root": state["project_dir"],
            "plugin_version": __version__,
            "git_branch": gitfiles.current_branch(root),
        },
    )
    if started is None and log_enabled:
        warnings.append(
            {
                "code": "LOG_WRITE_FAILED",
                "message": f"The run's log cannot be written ({events.last_error}); the events it loses are "
                "listed in the plugin data directory's unwritten-events.jsonl.",
            }
        )
    for warning in warnings:
        events.emit("W", "WARNING", **warning)
    _files_events(events, state)
    return {"state": state, "warnings": warnings, "free_text": state["free_text"]}


def _files_events(events: EventLog, state: Mapping[str, Any]) -> None:
    """Which base the changed files come from and why, and what the path filters left out."""
    base = state.get("review_base")
    left_out = state.get("files_left_out") or []
    if isinstance(base, dict):
        summary = {**base, "base_ref": state["base_ref"], "count": len(state["changed_files"])}
        events.emit("I", "DATA_COLLECTED", data_type="review_base", summary=summary)
        if base.get("reason") == "history_rewritten":
            events.emit(
                "W",
                "WARNING",
                code="REVIEW_BASE_RESET",
                message=str(base.get("message")),
                impact="the whole branch is reviewed again, not only what changed since the last review",
            )
    if left_out:
        summary = {"kept": len(state["changed_files"]), "left_out": list(left_out)}
        events.emit("I", "DATA_COLLECTED", data_type="path_filters", summary=summary)


def describe_run(state: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """The `run start` answer."""
    run_id = str(state["run_id"])
    names = WORKFLOW_PHASES.get(str(state["workflow"]), ())
    return {
        "run_id": run_id,
        "run_dir": str(Path(layout.run_dir(root, run_id))),
        "state_file": str(Path(layout.state_path(root, run_id))),
        "log_files": state["logging"]["log_files"],
        "config": state["config"],
        "config_sources": state.get("config_sources", []),
        "workflow": state["workflow"],
        "stack": state["stack"],
        "phases": state["phases"],
        "phase_names": {str(number): names[number] for number in state["phases"] if number < len(names)},
        "dry_run": state["dry_run"],
        "changed_files": state["changed_files"],
        "claude_session_id": state["claude_session_id"],
        **{
            key: state[key]
            for key in ("review_base", "files_left_out", "files_not_reviewable", "files_skipped")
            if key in state
        },
    }
