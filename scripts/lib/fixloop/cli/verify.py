"""`fixloop verify RUN`: run the configured tests, lint and typecheck commands and record the result.

RUN is a run id, or `latest` for the run started most recently. To run the commands with no run, use
`fixloop check`."""

from __future__ import annotations

from pathlib import Path

import click

from fixloop.cli.output import print_json
from fixloop.review.gate import verify_run
from fixloop.runs.listing import resolve_run
from fixloop.store import layout


@click.command("verify")
@click.argument("run_id", metavar="RUN")
def verify(run_id: str) -> None:
    """Run a run's tests, lint and typecheck (in that order); exit 1 when a step failed or timed out.
    RUN may be `latest`; `fixloop check` runs the commands with no run."""
    root = Path(layout.project_root())
    result = verify_run(root, resolve_run(root, run_id))
    print_json(result)
    if result["status"] == "failed":
        raise SystemExit(1)
