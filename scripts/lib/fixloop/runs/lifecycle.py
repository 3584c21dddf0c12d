"""A workflow run: its state file, its logs, its phases and its end.

Every duration is computed here from epoch milliseconds this module stored itself (`clock`, default
time.time); callers never supply one. Bad input is refused before anything is written, and each change is
one StateStore.update, so a refused call leaves the state and the logs as they were.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fixloop import __version__
from fixloop.core.errors import FixloopError
from fixloop.core.ids import check_run_id, new_run_id
from fixloop.runs.command_args import CommandArgs, parse_command_args
from fixloop.runs.phases import WORKFLOW_PHASES, known_workflow, parse_phases
from fixloop.store import gitfiles, layout
from fixloop.store.logwriter import LOG_LEVELS, EventLog, log_file_paths, utc_timestamp_ms
from fixloop.store.statestore import StateStore, minimal_run_state_errors

Clock = Callable[[], float]

SCHEMA_VERSION = 1
STACKS: tuple[str, ...] = ("frontend", "backend", "e2e", "mixed")
RUN_STATUSES: tuple[str, ...] = (
    "running",
    "success",
    "partial",
    "failed",
    "user_cancelled",
    "dry_run_complete",
)
END_STATUSES: tuple[str, ...] = tuple(status for status in RUN_STATUSES if status != "running")
PHASE_STATUSES: tuple[str, ...] = ("success", "partial", "failed", "skipped", "user_cancelled")
# A phase ended with one of these counts as completed (listed in phases_completed).
COMPLETED_PHASE_STATUSES: tuple[str, ...] = ("success", "partial")
SESSION_ENV = "CLAUDE_CODE_SESSION_ID"
_CREATE_ATTEMPTS = 5


def default_clock() -> float:
    return time.time()


def now_ms(clock: Clock) -> int:
    return round(clock() * 1000)


def phase_key(number: int) -> str:
    return f"phase_{number}"


# ---- loading -------------------------------------------------------------------------------------


def store_for(root: Path, run_id: str, clock: Clock | None = None) -> StateStore:
    return StateStore(
        Path(layout.state_path(root, run_id)), minimal_run_state_errors, clock=clock or default_clock
    )


def load_run(root: Path, run_id: str) -> dict[str, Any]:
    """The state of run `run_id` (INVALID_RUN_ID for a malformed id, RUN_NOT_FOUND when there is none)."""
    check_run_id(run_id)
    store = store_for(root, run_id)
    if not store.exists():
        raise FixloopError(
            "RUN_NOT_FOUND", f"No run {run_id} in {Path(layout.runs_dir(root))}.", run_id=run_id
        )
    state = store.read()
    if state.get("run_id") != run_id:
        raise FixloopError(
            "STATE_INVALID", f"State of run {run_id} names run {state.get('run_id')!r}.", run_id=run_id
        )
    return state


def current_run_id(root: Path, claude_session_id: str | None = None) -> str:
    """The run bound to the Claude Code session (default: $CLAUDE_CODE_SESSION_ID)."""
    session = claude_session_id if claude_session_id is not None else os.environ.get(SESSION_ENV)
    if not session:
        raise FixloopError(
            "NO_SESSION",
            f"${SESSION_ENV} is not set: there is no current Claude Code session.",
            env=SESSION_ENV,
        )
    run_id = layout.run_for_session(root, session)
    if run_id is None:
        raise FixloopError(
            "NO_CURRENT_RUN",
            f"No run is bound to Claude Code session {session!r}.",
            claude_session_id=session,
        )
    return run_id


def run_log(state: Mapping[str, Any], clock: Clock | None = None) -> EventLog:
    """The run's EventLog; one that writes nothing when logging is disabled."""
    logging = state.get("logging")
    logging = logging if isinstance(logging, Mapping) else {}
    session_id = str(logging.get("session_id") or state.get("run_id") or "")
    level = logging.get("level")
    level = level if level in LOG_LEVELS else "info"
    files = logging.get("log_files")
    jsonl = text = None
    if logging.get("enabled") is True and isinstance(files, Mapping):
        jsonl = Path(files["jsonl"]) if isinstance(files.get("jsonl"), str) and files["jsonl"] else None
        text = Path(files["text"]) if isinstance(files.get("text"), str) and files["text"] else None
    return EventLog(jsonl, text, session_id, str(level), clock=clock or default_clock)


# ---- input checks --------------------------------------------------------------------------------


def check_stack(stack: str | None) -> str | None:
    if stack is not None and stack not in STACKS:
        raise FixloopError(
            "INVALID_STACK", f"Unknown stack {stack!r}.", valid_values=list(STACKS), received=stack
        )
    return stack


def check_choice(code: str, what: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise FixloopError(code, f"Invalid {what} {value!r}.", valid_values=list(allowed), received=value)
    return value


def check_summary(summary: object) -> dict[str, Any]:
    if summary is None:
        return {}
    if not isinstance(summary, dict):
        raise FixloopError(
            "INVALID_SUMMARY", "The summary must be a JSON object.", received_type=type(summary).__name__
        )
    return summary


def normalize_files(root: Path, files: Sequence[str]) -> list[str]:
    """Project-relative POSIX paths of `files` (each must stay inside the project), sorted, no duplicates."""
    real_root = root.resolve()
    result: set[str] = set()
    for item in files:
        resolved = layout.resolve_inside(real_root, item)
        if resolved == real_root:
            raise FixloopError(
                "PATH_OUTSIDE_PROJECT",
                f"Refused path {item!r}: it names the project directory itself, not a file.",
                received=item,
                reason="project directory",
            )
        # Keep the name as given (a symlink stays a symlink) but normalised: join, then collapse `..`.
        given = Path(item)
        absolute = Path(os.path.normpath(given if given.is_absolute() else real_root / given))
        try:
            result.add(absolute.relative_to(real_root).as_posix())
        except ValueError:
            result.add(resolved.relative_to(real_root).as_posix())
    return sorted(result)


def collect_files(
    root: Path, changed_files: Sequence[str] | None, git_base: str | None, tolerate_git: bool = True
) -> tuple[list[str], str | None, list[dict[str, Any]]]:
    """(files, base_ref, warnings). `git_base` "" or "HEAD" means the work tree against HEAD (or, before the
    first commit, everything staged or untracked). With `tolerate_git`, GIT_UNAVAILABLE becomes a warning
    and an empty list; otherwise it is raised."""
    if changed_files is not None and git_base is not None:
        raise FixloopError(
            "CONFLICTING_ARGUMENTS",
            "Give either changed files or --git-diff, not both.",
            arguments=["--changed-files", "--git-diff"],
        )
    if changed_files is not None:
        return normalize_files(root, changed_files), None, []
    if git_base is None:
        return [], None, []
    base = None if git_base in ("", "HEAD") else git_base
    try:
        return gitfiles.changed_files(root, base), base or "HEAD", []
    except FixloopError as error:
        if error.code != "GIT_UNAVAILABLE" or not tolerate_git:
            raise
        warning = {
            "code": "GIT_UNAVAILABLE",
            "message": error.message,
            "impact": "changed files unknown; the run starts with an empty list",
        }
        return [], base or "HEAD", [warning]


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
    claude_session_id: str | None = None,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """Create a run, bind it to the Claude Code session, open its logs and write SESSION_START.

    Options given directly win over the same flag in `raw_args` (the slash command's $ARGUMENTS).
    `git_base` "" means HEAD. `claude_session_id` None reads $CLAUDE_CODE_SESSION_ID ("" = no session).
    Returns {"state": ..., "warnings": [...], "free_text": ...}.
    """
    clock = clock or default_clock
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
    files, base_ref, warnings = collect_files(root, changed_files, git_base)
    session = claude_session_id if claude_session_id is not None else os.environ.get(SESSION_ENV, "")
    if session and not layout.is_session_id(session):
        raise FixloopError(
            "INVALID_SESSION_ID",
            "Invalid Claude Code session id: expected 1-128 of A-Z a-z 0-9 _ -.",
            received=session,
        )

    started_ms = now_ms(clock)
    identifier = stack if workflow == "bugfix" and stack else workflow
    args = {
        "phase": phase_arg if phase_arg is not None else "all",
        "dry_run": dry,
        "log": log_enabled,
        "verbose": verbose,
    }
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
            "free_text": parsed.rest,
            "dry_run": dry,
            "phases": selected,
            "phases_completed": [],
            "open_phases": {},
            "phase_results": [],
            "changed_files": files,
            "base_ref": base_ref,
            "config": loaded.dump(),
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
    events.emit(
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
    for warning in warnings:
        events.emit("W", "WARNING", **warning)
    return {"state": state, "warnings": warnings, "free_text": parsed.rest}


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
    }


# ---- phases --------------------------------------------------------------------------------------


def require_running(state: Mapping[str, Any]) -> None:
    if state.get("ended_at_ms") is not None:
        raise FixloopError(
            "RUN_ALREADY_ENDED",
            f"Run {state.get('run_id')} has already ended with status {state.get('status')!r}.",
            run_id=state.get("run_id"),
            status=state.get("status"),
        )


def parse_phase_number(workflow: str, value: int | str) -> int:
    """One phase number of `workflow`, given as an int or as text; INVALID_PHASE otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FixloopError("INVALID_PHASE", f"Phase must be a number, not {value!r}.", received=repr(value))
    text = str(value).strip()
    selected = parse_phases(workflow, text)  # INVALID_PHASE with valid_values for anything unknown
    if text == "all" or "," in text or len(selected) != 1:
        count = len(WORKFLOW_PHASES[workflow])
        raise FixloopError(
            "INVALID_PHASE",
            f"Expected exactly one phase number for {workflow}, not {text!r}.",
            valid_values=[str(number) for number in range(count)],
            received=str(value),
            suggestion="Use 0." if count == 1 else f"Use one number from 0 to {count - 1}.",
        )
    return selected[0]


def _check_selected(state: Mapping[str, Any], number: int) -> None:
    if number not in state.get("phases", []):
        raise FixloopError(
            "PHASE_NOT_SELECTED",
            f"Phase {number} is not selected for run {state['run_id']}.",
            phase=number,
            selected=list(state.get("phases", [])),
            suggestion="Start the run with --phase including this phase, or skip it.",
        )


def phase_start(root: Path, run_id: str, phase: int | str, clock: Clock | None = None) -> dict[str, Any]:
    """Open a phase and write PHASE_START. Returns {"run_id", "phase", "phase_name", "started_at_ms"}."""
    clock = clock or default_clock
    loaded = load_run(root, run_id)
    number = parse_phase_number(str(loaded["workflow"]), phase)
    store = store_for(root, run_id, clock)
    now = now_ms(clock)

    def begin(state: dict[str, Any]) -> None:
        require_running(state)
        _check_selected(state, number)
        open_phases = state.setdefault("open_phases", {})
        if str(number) in open_phases:
            raise FixloopError(
                "PHASE_ALREADY_STARTED",
                f"Phase {number} of run {run_id} is already started.",
                phase=number,
                started_at_ms=open_phases[str(number)],
            )
        open_phases[str(number)] = now
        state["updated_at"] = utc_timestamp_ms(now / 1000)

    state = store.update(begin, action="phase_start")
    name = WORKFLOW_PHASES[state["workflow"]][number]
    run_log(state, clock).emit("I", "PHASE_START", phase=phase_key(number), phase_name=name)
    return {"run_id": run_id, "phase": phase_key(number), "phase_name": name, "started_at_ms": now}


def phase_end(
    root: Path,
    run_id: str,
    phase: int | str,
    status: str,
    summary: object = None,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """Close a phase, write PHASE_END with the duration since its start. Returns the phase result."""
    clock = clock or default_clock
    loaded = load_run(root, run_id)
    number = parse_phase_number(str(loaded["workflow"]), phase)
    check_choice("INVALID_STATUS", "phase status", status, PHASE_STATUSES)
    details = check_summary(summary)
    store = store_for(root, run_id, clock)
    now = now_ms(clock)
    result: dict[str, Any] = {}

    def finish(state: dict[str, Any]) -> None:
        require_running(state)
        _check_selected(state, number)
        open_phases = state.setdefault("open_phases", {})
        if str(number) not in open_phases:
            raise FixloopError(
                "PHASE_NOT_STARTED",
                f"Phase {number} of run {run_id} was not started.",
                phase=number,
                open_phases=sorted(int(key) for key in open_phases),
                suggestion=f"Run `fixloop run phase {run_id} --start {number}` first.",
            )
        started = open_phases.pop(str(number))
        result.clear()
        result.update(
            phase=phase_key(number),
            status=status,
            duration_ms=max(0, now - int(started)),
            started_at_ms=int(started),
            ended_at_ms=now,
        )
        state.setdefault("phase_results", []).append(dict(result))
        completed = state.setdefault("phases_completed", [])
        if status in COMPLETED_PHASE_STATUSES and phase_key(number) not in completed:
            completed.append(phase_key(number))
        state["updated_at"] = utc_timestamp_ms(now / 1000)

    state = store.update(finish, action="phase_end")
    run_log(state, clock).emit(
        "I",
        "PHASE_END",
        phase=result["phase"],
        status=status,
        duration_ms=result["duration_ms"],
        summary=details,
    )
    return {"run_id": run_id, **result, "summary": details, "phases_completed": state["phases_completed"]}


# ---- end -----------------------------------------------------------------------------------------


def end_run(
    root: Path, run_id: str, status: str, summary: object = None, clock: Clock | None = None
) -> dict[str, Any]:
    """Set the final status and write SESSION_END. Ending twice is RUN_ALREADY_ENDED."""
    clock = clock or default_clock
    check_choice("INVALID_STATUS", "run status", status, END_STATUSES)
    details = check_summary(summary)
    load_run(root, run_id)
    store = store_for(root, run_id, clock)
    now = now_ms(clock)

    def finish(state: dict[str, Any]) -> None:
        require_running(state)
        if status == "dry_run_complete" and not state.get("dry_run"):
            raise FixloopError(
                "INVALID_STATUS",
                "Status dry_run_complete is only for a run started with --dry-run.",
                valid_values=[item for item in END_STATUSES if item != "dry_run_complete"],
                received=status,
            )
        state["status"] = status
        state["ended_at_ms"] = now
        state["updated_at"] = utc_timestamp_ms(now / 1000)
        state["summary"] = details

    state = store.update(finish, action="end_run")
    total = max(0, now - int(state["started_at_ms"]))
    run_log(state, clock).emit(
        "I",
        "SESSION_END",
        status=status,
        total_duration_ms=total,
        phases_completed=state["phases_completed"],
        summary=details,
    )
    return {
        "run_id": run_id,
        "status": status,
        "total_duration_ms": total,
        "phases_completed": state["phases_completed"],
        "open_phases": sorted(int(key) for key in state.get("open_phases", {})),
        "summary": details,
    }


# ---- files ---------------------------------------------------------------------------------------


def set_files(
    root: Path,
    run_id: str,
    changed_files: Sequence[str] | None = None,
    git_base: str | None = None,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """Replace the run's changed files (explicit list, or from git: `git_base` "" = HEAD).

    Unlike start_run, GIT_UNAVAILABLE is raised here (exit 1) and the files stay as they were."""
    clock = clock or default_clock
    if changed_files is None and git_base is None:
        raise FixloopError(
            "MISSING_ARGUMENT",
            "Give --changed-files F ... or --git-diff [BASE].",
            arguments=[
                "--changed-files",
                "--git-diff",
            ],
        )
    state = load_run(root, run_id)
    require_running(state)
    files, base_ref, _ = collect_files(root, changed_files, git_base, tolerate_git=False)
    store = store_for(root, run_id, clock)
    now = now_ms(clock)

    def replace(current: dict[str, Any]) -> None:
        require_running(current)
        current["changed_files"] = files
        current["base_ref"] = base_ref
        current["updated_at"] = utc_timestamp_ms(now / 1000)

    state = store.update(replace, action="set_files")
    run_log(state, clock).emit(
        "I",
        "DATA_COLLECTED",
        data_type="changed_files",
        summary={
            "count": len(files),
            "source": "git" if git_base is not None else "explicit",
            "base_ref": base_ref,
        },
    )
    return {"run_id": run_id, "changed_files": files, "base_ref": base_ref, "warnings": []}
