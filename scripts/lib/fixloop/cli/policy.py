"""`fixloop policy retry|confidence|quality`: the loop's decision rules, one JSON answer each.

A decision is data, not a failed check: these commands exit 0 whatever they decide (2 for bad input).
"""

from __future__ import annotations

from pathlib import Path

import click

from fixloop.cli.listing import ListedGroup
from fixloop.cli.output import print_json
from fixloop.cli.run import parse_json_object
from fixloop.core.errors import FixloopError
from fixloop.core.ids import check_run_id
from fixloop.core.thresholds import MAX_QUALITY_RETRIES
from fixloop.review import policy as rules
from fixloop.review.confidence import log_confidence_decision
from fixloop.store import layout


def parse_int(text: str, name: str, code: str = "INVALID_ARGUMENT") -> int:
    value = text.strip()
    digits = value[1:] if value[:1] in "+-" else value
    if not digits.isascii() or not digits.isdigit():
        raise FixloopError(
            code, f"Invalid {name} {text!r}: expected an integer.", argument=name, received=text
        )
    return int(value)


@click.group("policy", cls=ListedGroup)
def policy() -> None:
    """Retry, confidence and quality decisions (the coordinator patterns' numbers)."""


@policy.command("retry")
@click.argument("code")
@click.option("--attempt", required=True, metavar="N", help="The attempt that failed (1 = the first call).")
@click.option("--previous-error", "previous", multiple=True, metavar="CODE", help="Earlier attempts' codes.")
def retry(code: str, attempt: str, previous: tuple[str, ...]) -> None:
    """Should a call that failed with CODE be retried?"""
    print_json(rules.retry_decision(code, parse_int(attempt, "attempt"), list(previous)))


@policy.command("quality")
@click.argument("score")
@click.option("--attempt", default="1", metavar="N", help="The review attempt that was scored (1 = first).")
@click.option("--max-retries", default=str(MAX_QUALITY_RETRIES), metavar="N")
def quality(score: str, attempt: str, max_retries: str) -> None:
    """Does a review quality SCORE pass (>= 50), and is another review due?"""
    print_json(
        rules.quality_decision(
            parse_int(score, "score", "INVALID_SCORE"),
            parse_int(attempt, "attempt"),
            parse_int(max_retries, "max_retries"),
        )
    )


@policy.command("confidence")
@click.argument("score")
@click.option("--run", "run_id", default=None, metavar="RUN", help="Log a CONFIDENCE_DECISION in this run.")
@click.option("--phase", default=None, metavar="N", help="With --run: the phase the decision belongs to.")
@click.option("--factors", default=None, metavar="JSON", help="With --run: a JSON object of factor scores.")
def confidence(score: str, run_id: str | None, phase: str | None, factors: str | None) -> None:
    """auto_continue (>= 60), ask_user (>= 40) or stop."""
    decision = rules.confidence_decision(parse_int(score, "score", "INVALID_SCORE"))
    if run_id is None:
        if phase is not None or factors is not None:
            raise FixloopError("USAGE_ERROR", "--phase and --factors go with --run.")
        print_json(decision)
        return
    check_run_id(run_id)
    factor_doc = parse_json_object(factors, "--factors")
    print_json(log_confidence_decision(Path(layout.project_root()), run_id, decision, phase, factor_doc))
