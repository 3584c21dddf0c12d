"""`fixloop baseline add|list|remove`: the review findings the team accepted (.fixloop/baseline.json)."""

from __future__ import annotations

from pathlib import Path

import click

from fixloop.cli.listing import ListedGroup
from fixloop.cli.output import print_json
from fixloop.store import layout


def _root() -> Path:
    return Path(layout.project_root())


@click.group("baseline", cls=ListedGroup)
def baseline() -> None:
    """The accepted findings no later review reports or fixes (.fixloop/baseline.json, shared in git)."""


@baseline.command("add")
@click.argument("issue_ids", nargs=-1, required=True, metavar="ID [ID...]")
@click.option("--reason", required=True, help="Why the team accepts these findings (kept in the file).")
@click.option("--run", "run", default="latest", show_default=True, help="The run whose issue ids these are.")
def add(issue_ids: tuple[str, ...], reason: str, run: str) -> None:
    """Accept issues of a run (e.g. FL-003) into the baseline: later reviews drop them."""
    from fixloop.runs.baseline import add_findings
    from fixloop.runs.listing import resolve_run

    root = _root()
    print_json(add_findings(root, resolve_run(root, run), list(issue_ids), reason))


@baseline.command("list")
def list_command() -> None:
    """The accepted findings, in the file's order (file, line, category)."""
    from fixloop.runs.baseline import list_findings

    print_json(list_findings(_root()))


@baseline.command("remove")
@click.argument("fingerprint")
def remove(fingerprint: str) -> None:
    """Take a finding out of the baseline (by the fingerprint `baseline list` shows)."""
    from fixloop.runs.baseline import remove_finding

    print_json(remove_finding(_root(), fingerprint))
