"""Work "tests": run the project's configured test command, or exactly the tests a phase names, and say
what failed.

The command runs through `runs.shell_command.run_in_own_group` (in the project, in its own process group; the
verify timeout ends everything it started): the configured command through the shell, or, for named tests,
the argument list `testcommand.select` builds from it, with no shell; its whole output goes to
`<run dir>/tests/<n>-<purpose>.log`. The output is parsed by `fixloop.failures` (JUnit XML reports the
runner wrote during the run count too) into at most MAX_FAILURES failures of at most MAX_DETAIL_LINES
lines each. Logs STEP_START, STEP_END and DATA_COLLECTED (data_type test_output, source auto_run).

The result (JSON data, kept in the run state): `status` test_failed | test_passed | not_run, `reason`,
`command`, `selected` (the command names tests), `not_selected` (why named tests run with the whole
command, also a WARNING TESTS_NOT_SELECTED), `exit_code`, `duration_ms`, `output_file`, `lines`,
`parser`, `counts`, `run_error`, `failures`, `failures_total`, `junit_files`, `outcomes` (for each named
test of `params["tests"]`: {"test", "outcome"}) and `output_tail`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.core import timekeeping
from fixloop.core.redact import redact
from fixloop.failures import Failure, Parsed, parse, parse_junit
from fixloop.runs import lifecycle
from fixloop.runs.config import config_from_dump
from fixloop.runs.interrupted import engine_busy
from fixloop.runs.lifecycle import Clock
from fixloop.runs.shell_command import run_in_own_group
from fixloop.runs.verification import require_approved
from fixloop.store import layout
from fixloop.workflows.testcommand import select
from fixloop.workflows.testselect import detect_runner, matches, outcome, short_name

TESTS = "tests"  # the Work kind whose performer is run_tests
COMMAND_FAILURE = "(test command)"  # the id of a failed run whose output named no failure
MAX_FAILURES = 20
MAX_DETAIL_LINES = 200
MAX_LINE_CHARS = 500
MAX_MESSAGE_CHARS = 500
MAX_OUTPUT_BYTES = 16 * 1024 * 1024
TAIL_LINES = 200
OUTPUT_TAIL_CHARS = 2000
TESTS_DIR = "tests"
PARSER_OF = {"node-test": "tap"}  # the failure parser of a runner testselect detects, where the names differ
# JUnit reports: *.xml files under the project written since the run began (a second of slack for file
# systems with coarse timestamps), found in a bounded walk that skips hidden and dependency folders.
JUNIT_SLACK_SECONDS = 1.0
JUNIT_MAX_DEPTH = 5
JUNIT_MAX_ENTRIES = 20_000
JUNIT_MAX_FILES = 10
JUNIT_MAX_BYTES = 8 * 1024 * 1024
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv", "dist", "build", "target"})
STEP_NAMES = {
    "collect": "Run the project's tests",
    "red": "Run the new test before the fix",
    "green": "Run the new and the failing tests after the fix",
    "reproduce": "Run the failing tests locally",
}


def run_tests(root: Path, state: dict[str, Any], params: dict[str, Any], clock: Clock) -> dict[str, Any]:
    """The Work "tests" performer."""
    config = config_from_dump(state.get("config"))
    purpose = str(params.get("purpose") or "collect")
    tests = [dict(test) for test in params.get("tests") or [] if isinstance(test, Mapping)]
    command = config.test_command
    if not command or not command.strip():
        return _not_configured(purpose, tests)
    runner = detect_runner(command)
    selection = select(command, tests)
    argv = selection.argv if selection is not None else None
    final = selection.shown if selection is not None and argv is not None else command
    not_selected = selection.reason if selection is not None and argv is None else None
    run_dir = Path(layout.run_dir(root, str(state["run_id"])))
    output = _output_path(run_dir, purpose)
    project = Path(str(state.get("project_dir") or root))
    require_approved(state, config, project)  # still what was approved: a script may have changed since
    log = lifecycle.run_log(state, clock)
    step = {
        "phase": params.get("phase"),
        "agent": "engine",
        "step": f"tests_{purpose}",
        "step_name": STEP_NAMES.get(purpose, "Run tests"),
        "step_index": int(params.get("step_index") or 1),
        "total_steps": int(params.get("total_steps") or 1),
    }
    log.emit("I", "STEP_START", **step)
    if not_selected:
        message = f"The named tests cannot run alone ({not_selected}): the whole test command runs."
        log.emit("W", "WARNING", code="TESTS_NOT_SELECTED", message=message, phase=params.get("phase"))
    with engine_busy(run_dir, f"the tests ({purpose})"):
        run = _execute(list(argv) if argv else command, project, config.verify_timeout_seconds, output, clock)
    text, lines = _read_output(output)
    parsed = _parse(text, runner)
    junit_files, junit = _junit(project, run["started_wall"])
    failures = _merge(parsed, junit)
    counts = parsed.counts if parsed.counts.known() or not junit else junit[0].counts
    facts = {
        "parsed_failures": failures,
        "exit_code": run["exit_code"],
        "started": run["started"],
        "timed_out": run["timed_out"],
        "counts": dataclasses.asdict(counts),
        "run_error": parsed.run_error or any(item.run_error for item in junit),
    }
    outcomes = [{"test": test, "outcome": outcome(facts, test)} for test in tests]
    if not failures and run["started"] and (run["timed_out"] or run["exit_code"] != 0):
        failures = [_command_failure(run, text, parsed.runner)]
    if not run["started"] or run["timed_out"]:
        status = "not_run"
    elif run["exit_code"] == 0 and not failures:
        status = "test_passed"
    else:
        status = "test_failed"
    result: dict[str, Any] = {
        "purpose": purpose,
        "status": status,
        "reason": run["reason"],
        "command": final,
        "selected": argv is not None,
        "not_selected": not_selected,
        "runner": runner,
        "exit_code": run["exit_code"],
        "duration_ms": run["duration_ms"],
        "output_file": _shown_path(output, project),
        "lines": lines,
        "parser": parsed.runner,
        "counts": facts["counts"],
        "run_error": facts["run_error"],
        "failures": [bounded(item) for item in failures[:MAX_FAILURES]],
        "failures_total": len(failures),
        "junit_files": [_shown_path(path, project) for path in junit_files],
        "outcomes": outcomes,
        "output_tail": redact(text[-OUTPUT_TAIL_CHARS:]),
    }
    log.emit(
        "I",
        "STEP_END",
        **step,
        status="timeout" if run["timed_out"] else "success" if run["started"] else "failed",
        duration_ms=run["duration_ms"],
    )
    log.emit(
        "I",
        "DATA_COLLECTED",
        phase=params.get("phase"),
        data_type="test_output",
        summary={
            "lines": lines,
            "exit_code": run["exit_code"],
            "status": status,
            "source": "auto_run",
            "purpose": purpose,
            "command": final,
            "failures": len(failures),
            "output_file": result["output_file"],
        },
    )
    return result


def _not_configured(purpose: str, tests: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "purpose": purpose,
        "status": "not_run",
        "reason": "not_configured",
        "command": None,
        "selected": False,
        "not_selected": None,
        "runner": None,
        "exit_code": None,
        "duration_ms": None,
        "output_file": None,
        "lines": 0,
        "parser": None,
        "counts": {},
        "run_error": False,
        "failures": [],
        "failures_total": 0,
        "junit_files": [],
        "outcomes": [{"test": test, "outcome": "error"} for test in tests],
        "output_tail": "",
    }


def bounded(failure: Mapping[str, Any]) -> dict[str, Any]:
    """A failure as the run keeps it: message and details cut to size, secrets masked."""
    details = str(failure.get("details") or "").splitlines()[:MAX_DETAIL_LINES]
    return {
        **failure,
        "message": redact(str(failure.get("message") or ""))[:MAX_MESSAGE_CHARS],
        "details": redact("\n".join(line[:MAX_LINE_CHARS] for line in details)),
    }


# ---- running ---------------------------------------------------------------------------------------


def _output_path(run_dir: Path, purpose: str) -> Path:
    folder = run_dir / TESTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    number = sum(1 for _ in folder.glob("*.log")) + 1
    return folder / f"{number:02d}-{purpose}.log"


def _execute(
    command: str | list[str], cwd: Path, timeout: float, output: Path, clock: Clock
) -> dict[str, Any]:
    started_wall = time.time()
    started = timekeeping.now_ms(clock)
    with output.open("wb") as handle:
        try:
            exit_code = run_in_own_group(command, cwd, timeout, handle)
        except OSError as error:
            return {
                "started": False,
                "started_wall": started_wall,
                "exit_code": None,
                "timed_out": False,
                "duration_ms": max(0, timekeeping.now_ms(clock) - started),
                "reason": f"cannot start: {error.strerror or error}",
            }
    timed_out = exit_code is None
    return {
        "started": True,
        "started_wall": started_wall,
        "exit_code": exit_code,
        "timed_out": timed_out,
        "duration_ms": max(0, timekeeping.now_ms(clock) - started),
        "reason": f"timed out after {timeout:g}s" if timed_out else None,
    }


def _read_output(path: Path) -> tuple[str, int]:
    """The output (its last MAX_OUTPUT_BYTES when longer) and its number of lines."""
    size = path.stat().st_size
    lines = 0
    last = b""
    with path.open("rb") as handle:
        while chunk := handle.read(1024 * 1024):
            lines += chunk.count(b"\n")
            last = chunk
        if size and not last.endswith(b"\n"):
            lines += 1
        handle.seek(max(0, size - MAX_OUTPUT_BYTES))
        data = handle.read()
    return data.decode("utf-8", "replace"), lines


def _shown_path(path: Path, project: Path) -> str:
    try:
        return str(path.resolve().relative_to(project.resolve()))
    except ValueError:
        return str(path)


# ---- reading -----------------------------------------------------------------------------------------


def _parse(text: str, runner: str | None) -> Parsed:
    parsed = parse(text, PARSER_OF.get(runner, runner) if runner else None)
    if runner is not None and not parsed.found_anything():
        return parse(text)  # the command named a runner, but another one printed
    return parsed


def _junit(project: Path, since: float) -> tuple[list[Path], list[Parsed]]:
    files = _junit_files(project, since - JUNIT_SLACK_SECONDS)
    reports = []
    for path in files:
        with contextlib.suppress(OSError):
            reports.append(parse_junit(path.read_bytes()))
    return files, reports


def _junit_files(project: Path, since: float) -> list[Path]:
    found: list[Path] = []
    seen = 0
    top = len(project.parts)
    for directory, folders, files in os.walk(project):
        here = Path(directory)
        folders[:] = (
            [name for name in folders if not name.startswith(".") and name not in SKIPPED_DIRS]
            if len(here.parts) - top < JUNIT_MAX_DEPTH
            else []
        )
        for name in files:
            seen += 1
            if seen > JUNIT_MAX_ENTRIES or len(found) >= JUNIT_MAX_FILES:
                return sorted(found)
            if name.endswith(".xml") and _is_junit(here / name, since):
                found.append(here / name)
    return sorted(found)


def _is_junit(path: Path, since: float) -> bool:
    try:
        info = path.stat()
        if info.st_mtime < since or info.st_size > JUNIT_MAX_BYTES:
            return False
        with path.open("rb") as handle:
            return b"<testsuite" in handle.read(4096)
    except OSError:
        return False


def _as_dict(failure: Failure) -> dict[str, Any]:
    return dataclasses.asdict(failure)


def _merge(parsed: Parsed, junit: list[Parsed]) -> list[dict[str, Any]]:
    """The text's failures, then the JUnit reports' that the text did not already name."""
    merged = [_as_dict(item) for item in parsed.failures]
    for report in junit:
        for failure in report.failures:
            found = _as_dict(failure)
            named = ({"file": known.get("file"), "name": short_name(known["test_id"])} for known in merged)
            if not any(matches(found, test) for test in named):
                merged.append(found)
    return merged


def _command_failure(run: Mapping[str, Any], text: str, runner: str) -> dict[str, Any]:
    """The run failed, but no failure could be read from its output: the run itself is the failure."""
    why = run["reason"] or f"exited with code {run['exit_code']}"
    return {
        "runner": runner,
        "test_id": COMMAND_FAILURE,
        "kind": "error",
        "message": f"The test command {why}; no failure could be read from its output.",
        "file": None,
        "line": None,
        "details": "\n".join(text.splitlines()[-TAIL_LINES:]),
        "suite": None,
    }
