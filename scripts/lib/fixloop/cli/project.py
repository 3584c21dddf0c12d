"""`fixloop init` and `fixloop trust`: the project's verification commands."""

from __future__ import annotations

from pathlib import Path

import click

from fixloop.cli.output import print_json
from fixloop.store import layout


@click.command("init")
@click.option("--force", is_flag=True, help="Rewrite the commands of an existing .claude/fixloop.json.")
def init(force: bool) -> None:
    """Write .claude/fixloop.json with the test, lint and typecheck commands found, and approve them."""
    from fixloop.runs.project_setup import init_config

    print_json(init_config(Path(layout.project_root()), force))


@click.command("trust")
@click.option("--show", is_flag=True, help="Only list the commands and whether they are approved.")
@click.option("--config", "config_file", default=None, help="A config file to read after the project's.")
def trust(show: bool, config_file: str | None) -> None:
    """Approve the verification commands a run in this project will run (until they change)."""
    from fixloop.runs.project_setup import trust_project

    print_json(trust_project(Path(layout.project_root()), show, config_file))
