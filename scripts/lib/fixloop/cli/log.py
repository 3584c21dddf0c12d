"""`fixloop log show|errors|summary|timeline RUN_OR_FILE`: read a run's JSONL log.

RUN_OR_FILE is a run id (its log), `latest` (the log of the run started most recently), or a .jsonl file
inside the project. show, errors and summary print
JSON; timeline prints the text timeline (one line per event, in time order).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import click

from fixloop.cli.listing import ListedGroup
from fixloop.cli.output import print_json
from fixloop.core.errors import FixloopError
from fixloop.core.ids import is_run_id
from fixloop.report import logquery
from fixloop.runs.listing import resolve_alias
from fixloop.store import layout
from fixloop.store.logtext import LEVEL_LABELS, render_text

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


def filtered(
    contents: logquery.LogContents, types: tuple[str, ...], levels: tuple[str, ...]
) -> list[dict[str, Any]]:
    wanted_types = set(types) or None
    wanted_levels = normalize_levels(levels)
    return [
        event
        for event in logquery.by_time(contents.events)
        if (wanted_types is None or event["type"] in wanted_types)
        and (wanted_levels is None or event["level"] in wanted_levels)
    ]


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


def _listing(path: Path, contents: logquery.LogContents, events: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "log_file": str(path),
        "count": len(events),
        "events": events,
        "corrupt_lines": [
            {"line": item.line, "reason": item.reason, "preview": item.preview} for item in contents.corrupt
        ],
    }


@click.group("log", cls=ListedGroup)
def log() -> None:
    """Query a run's JSONL log."""


@log.command("show")
@click.argument("run_or_file")
@_filters
def show(run_or_file: str, types: tuple[str, ...], levels: tuple[str, ...]) -> None:
    """Events in time order, optionally only some types or levels."""
    path = log_path(run_or_file)
    contents = logquery.read_log(path)
    print_json(_listing(path, contents, filtered(contents, types, levels)))


@log.command("errors")
@click.argument("run_or_file")
@click.option("--type", "types", multiple=True, metavar="T", help="Only this event type; repeatable.")
def errors(run_or_file: str, types: tuple[str, ...]) -> None:
    """ERROR-level events (level E)."""
    path = log_path(run_or_file)
    contents = logquery.read_log(path)
    print_json(_listing(path, contents, filtered(contents, types, ("E",))))


@log.command("summary")
@click.argument("run_or_file")
def summary(run_or_file: str) -> None:
    """Session start and end, phase durations, counts by level and type, decisions, user interactions;
    for a run, also its tokens and estimated cost per agent, round and step."""
    root = Path(layout.project_root())
    value = resolve_alias(root, run_or_file)
    path = logquery.log_path(root, value)
    document: dict[str, Any] = {"log_file": str(path), **logquery.summary(path)}
    if is_run_id(value):
        from fixloop.runs import lifecycle, usage

        document["usage"] = usage.run_usage(root, lifecycle.load_run(root, value))
    print_json(document)


@log.command("timeline")
@click.argument("run_or_file")
@_filters
def timeline(run_or_file: str, types: tuple[str, ...], levels: tuple[str, ...]) -> None:
    """The text timeline `[time] LEVEL | TYPE | message`, re-rendered from the JSONL log."""
    path = log_path(run_or_file)
    events = filtered(logquery.read_log(path), types, levels)
    sys.stdout.write("".join(render_text(event) + "\n" for event in events))
    sys.stdout.flush()
