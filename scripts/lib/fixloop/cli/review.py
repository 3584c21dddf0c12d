"""`fixloop review ...`: drive the review-fix loop of a run (record, next, choose, status, report).

RUN is a run id, or `latest` for the run started most recently."""

from __future__ import annotations

from pathlib import Path

import click

from fixloop.cli.listing import ListedGroup
from fixloop.cli.output import print_json, print_text
from fixloop.report.fail_level import FAIL_LEVELS
from fixloop.report.render import REPORT_FORMATS, report_answer
from fixloop.review import intake, runner
from fixloop.runs.listing import resolve_run
from fixloop.store import layout
from fixloop.workflows.publish import run as publish


def _root() -> Path:
    return Path(layout.project_root())


def _run(value: str) -> str:
    return resolve_run(_root(), value)


@click.group("review", cls=ListedGroup)
def review() -> None:
    """Drive the review-fix loop of a run: record agent results, ask for the next action, report."""


@review.command("record")
@click.argument("run_id", metavar="RUN")
@click.argument("source", required=False, default="-", metavar="[FILE|-]")
@click.option("--agent", "agent", required=True, help="The agent whose final message this is.")
@click.option("--from-hook", "from_hook", default=None, metavar="AGENT_ID", help="Recorded by a hook.")
def record(run_id: str, source: str, agent: str, from_hook: str | None) -> None:
    """Validate an agent's final message and record it in the current round (exit 1 when invalid)."""
    answer = intake.record_result(_root(), _run(run_id), source, agent, from_hook)
    print_json(answer)
    if not answer["valid"]:
        raise SystemExit(1)


@review.command("next")
@click.argument("run_id", metavar="RUN")
def next_action(run_id: str) -> None:
    """Advance the loop with what was recorded and print the next action for the coordinator."""
    print_json(runner.next_action(_root(), _run(run_id)))


@review.command("choose")
@click.argument("run_id", metavar="RUN")
@click.argument("choice", required=False, type=click.Choice(["rollback", "continue", "manual", "cancel"]))
@click.option("--default", "use_default", is_flag=True, help="Apply the configured on_verification_failure.")
def choose(run_id: str, choice: str | None, use_default: bool) -> None:
    """Answer the question of an ask_user action."""
    print_json(runner.answer_question(_root(), _run(run_id), choice, use_default))


@review.command("status")
@click.argument("run_id", metavar="RUN")
def status(run_id: str) -> None:
    """Where the review loop stands (changes nothing)."""
    print_json(runner.review_status(_root(), _run(run_id)))


@review.command("report")
@click.argument("run_id", metavar="RUN")
@click.option("--format", "fmt", type=click.Choice(REPORT_FORMATS), default="json", show_default=True)
@click.option(
    "--output",
    "output",
    default=None,
    metavar="FILE",
    help="Write the report to FILE (relative to the project root; anywhere but inside .git).",
)
@click.option(
    "--fail-on",
    "fail_on",
    type=click.Choice(FAIL_LEVELS),
    default=None,
    help="Exit 1 (after the report) when a remaining finding is at or above this severity.",
)
def report(run_id: str, fmt: str, output: str | None, fail_on: str | None) -> None:
    """The review report: coordinator output (json), supervisor simple array, Markdown, SARIF or a
    self-contained HTML page. Markdown and HTML print the document itself; the others print JSON."""
    answer = report_answer(_root(), _run(run_id), fmt, output, fail_on)
    if isinstance(answer.document, str):  # Markdown or HTML: the document itself
        print_text(answer.document)
    else:
        print_json(answer.document)
    if answer.exit_code:
        raise SystemExit(answer.exit_code)


@review.command("publish")
@click.argument("run_id", metavar="RUN")
@click.option("--pr", "pr", required=True, metavar="N|URL", help="The pull request to review on.")
@click.option("--fail-on", "fail_on", type=click.Choice(FAIL_LEVELS), default=None, help="Check conclusion.")
@click.option("--dry-run", "dry_run", is_flag=True, help="Say what would be posted; post nothing.")
@click.option("--report-url", "report_url", default=None, metavar="URL", help="Link the HTML report.")
def publish_review(run_id: str, pr: str, fail_on: str | None, dry_run: bool, report_url: str | None) -> None:
    """Post the run's remaining findings on pull request PR: one review of new inline comments, one reply
    per fixed thread, one summary comment kept up to date, and a check whose conclusion follows --fail-on."""
    print_json(
        publish.publish(_root(), _run(run_id), pr, fail_on=fail_on, dry_run=dry_run, report_url=report_url)
    )


@review.command("shards")
@click.option(
    "--files-from",
    "files_from",
    required=True,
    metavar="FILE",
    help="The changed files, one a line (- : stdin).",
)
@click.option("--max-files", "max_files", type=click.IntRange(min=1), default=100, show_default=True)
def shards(files_from: str, max_files: int) -> None:
    """Split a change into shards for a CI matrix: related files together, at most --max-files each."""
    from fixloop.cli.sharding import shard_plan

    print_json(shard_plan(files_from, max_files))


@review.command("merge")
@click.argument("reports", nargs=-1, required=True, metavar="REPORT.json...")
@click.option("--sarif", "sarif_logs", multiple=True, metavar="FILE", help="A shard's SARIF log (repeat).")
@click.option("--sarif-output", "sarif_output", default=None, metavar="FILE", help="Write the merged SARIF.")
@click.option("--output", "output", default=None, metavar="FILE", help="Write the merged report here.")
@click.option(
    "--fail-on", "fail_on", type=click.Choice(FAIL_LEVELS), default=None, help="Exit 1 at this level."
)
def merge(
    reports: tuple[str, ...],
    sarif_logs: tuple[str, ...],
    sarif_output: str | None,
    output: str | None,
    fail_on: str | None,
) -> None:
    """Merge the shards' JSON reports (and SARIF logs) into one report, one SARIF log and one --fail-on."""
    from fixloop.cli.sharding import merged_answer

    document, exit_code = merged_answer(list(reports), list(sarif_logs), sarif_output, output, fail_on)
    print_json(document)
    if exit_code:
        raise SystemExit(exit_code)
