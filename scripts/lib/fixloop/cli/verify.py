"""`fixloop verify RUN`: run the configured tests, lint and typecheck commands and record the result."""

from __future__ import annotations

from pathlib import Path

import click

from fixloop.cli.output import print_json
from fixloop.core.ids import check_run_id
from fixloop.review.gate import verify_run
from fixloop.store import layout


@click.command("verify")
@click.argument("run_id")
def verify(run_id: str) -> None:
    """Run tests, lint and typecheck (in that order); exit 1 when a step failed or timed out."""
    result = verify_run(Path(layout.project_root()), check_run_id(run_id))
    print_json(result)
    if result["status"] == "failed":
        raise SystemExit(1)
