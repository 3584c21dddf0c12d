"""`fixloop log show|errors|summary|timeline RUN_OR_FILE`: read a run's JSONL log.

RUN_OR_FILE is a run id (its log), `latest` (the log of the run started most recently), or a .jsonl file
inside the project. show, errors and summary print
JSON; timeline prints the text timeline (one line per event, in time order).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO, TypeVar

import click

from fixloop.cli.listing import ListedGroup
from fixloop.core.errors import FixloopError
from fixloop.core.ids import is_run_id
from fixloop.report import logquery
from fixloop.runs.listing import resolve_alias
from fixloop.store import layout
from fixloop.store.logtext import LEVEL_LABELS

F = TypeVar("F", bound=Callable[..., Any])

LEVEL_NAMES: dict[str, str] = {
    "info": "I",
    "debug": "D",
    "warn": "W",
    "warning": "W",
    "error": "E",
    "decision": "X",
    "decn": "X",
}


def normalize_levels(values: Iterable[str]) -> list[str] | None:
    """`--level` values as the log's one-letter codes (I D W E X, or names such as error); None = all."""
    levels: list[str] = []
    for value in values:
        code = value.strip()
        code = LEVEL_NAMES.get(code.lower(), code.upper())
        if code not in LEVEL_LABELS:
            raise FixloopError(
                "INVALID_ARGUMENT",
                f"Invalid --level {value!r}.",
                argument="--level",
                valid_values=[*LEVEL_LABELS, *LEVEL_NAMES],
                received=value,
            )
        levels.append(code)
    return levels or None


def log_path(value: str) -> Path:
    root = Path(layout.project_root())
    return logquery.log_path(root, resolve_alias(root, value))


def write_streamed(document: dict[str, Any]) -> None:
    """`document` on stdout exactly as print_json writes it, but each value that is an iterable other than
    a list, dict or string (an event stream, a spool) written item by item, never held whole."""
    out = sys.stdout
    out.write("{")
    for number, (key, value) in enumerate(document.items()):
        out.write(("," if number else "") + "\n  " + _dumps(key) + ": ")
        if isinstance(value, Iterable) and not isinstance(value, (str, bytes, list, tuple, dict)):
            _write_array(out, value)
        else:
            out.write(_dumps(value).replace("\n", "\n  "))
    out.write("\n}\n" if document else "}\n")
    out.flush()


def write_listing(path: Path, scan: logquery.LogScan) -> None:
    """The listing `{log_file, count, events, corrupt_lines}`, streamed."""
    corrupt = (
        {"line": item.line, "reason": item.reason, "preview": item.preview} for item in scan.corrupt_lines()
    )
    write_streamed(
        {"log_file": str(path), "count": scan.count, "events": scan.events(), "corrupt_lines": corrupt}
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _write_array(out: TextIO, items: Iterable[Any]) -> None:
    """A JSON array at depth 1 of an object written with indent=2 (a string holds no raw newline)."""
    pad = "    "
    opened = False
    for item in items:
        out.write((",\n" if opened else "[\n") + pad + _dumps(item).replace("\n", "\n" + pad))
        opened = True
    out.write("\n  ]" if opened else "[]")


def _filters(command: F) -> F:
    command = click.option(
        "--level",
        "levels",
        multiple=True,
        metavar="L",
        help="Only this level (I D W E X or a name); repeatable.",
    )(command)
    return click.option(
        "--type", "types", multiple=True, metavar="T", help="Only this event type; repeatable."
    )(command)


@click.group("log", cls=ListedGroup)
def log() -> None:
    """Query a run's JSONL log."""


@log.command("show")
@click.argument("run_or_file")
@_filters
def show(run_or_file: str, types: tuple[str, ...], levels: tuple[str, ...]) -> None:
    """Events in time order, optionally only some types or levels."""
    path = log_path(run_or_file)
    with logquery.scan_log(path, logquery.selector(types or None, normalize_levels(levels))) as scan:
        write_listing(path, scan)


@log.command("errors")
@click.argument("run_or_file")
@click.option("--type", "types", multiple=True, metavar="T", help="Only this event type; repeatable.")
def errors(run_or_file: str, types: tuple[str, ...]) -> None:
    """ERROR-level events (level E)."""
    path = log_path(run_or_file)
    with logquery.scan_log(path, logquery.selector(types or None, ["E"])) as scan:
        write_listing(path, scan)


@log.command("summary")
@click.argument("run_or_file")
def summary(run_or_file: str) -> None:
    """Session start and end, phase durations, counts by level and type, decisions, user interactions;
    for a run, also its tokens and estimated cost per agent, round and step."""
    root = Path(layout.project_root())
    value = resolve_alias(root, run_or_file)
    path = logquery.log_path(root, value)
    with logquery.summary_document(path) as summary_fields:
        document: dict[str, Any] = {"log_file": str(path), **summary_fields}
        if is_run_id(value):
            from fixloop.runs import lifecycle, usage

            document["usage"] = usage.run_usage(root, lifecycle.load_run(root, value))
        write_streamed(document)


@log.command("timeline")
@click.argument("run_or_file")
@_filters
def timeline(run_or_file: str, types: tuple[str, ...], levels: tuple[str, ...]) -> None:
    """The text timeline `[time] LEVEL | TYPE | message`, re-rendered from the JSONL log."""
    path = log_path(run_or_file)
    with logquery.scan_log(path, logquery.selector(types or None, normalize_levels(levels))) as scan:
        sys.stdout.writelines(logquery.timeline_lines(scan))
    sys.stdout.flush()
