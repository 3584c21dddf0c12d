"""`fixloop record` as the SubagentStop hook runs it for every agent, answered without loading click.

`record_arguments(argv)` recognises only the plain spellings of the command (`record RUN [FILE|-] --agent
NAME [--from-hook AGENT_ID]`, options anywhere after `record`, each at most once, no value that starts with
`-`); for anything else (help, `--opt=value`, a missing or repeated option, `--`) it returns None and click
parses the command line as before, with its own messages. The command itself, `record_command`, is the one
fixloop.cli.flow runs too.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from fixloop.core.command_output import fail, guarded, print_json, replace_undecodable_output
from fixloop.core.errors import FixloopError
from fixloop.core.ids import check_run_id
from fixloop.store import layout

_OPTIONS = ("--agent", "--from-hook")


class RecordArguments(NamedTuple):
    run_id: str
    source: str
    agent: str
    from_hook: str | None


def record_arguments(argv: Sequence[str]) -> RecordArguments | None:
    """The arguments of a plain `record` command line, or None when click is to parse it."""
    if not argv or argv[0] != "record":
        return None
    positional: list[str] = []
    options: dict[str, str] = {}
    rest = list(argv[1:])
    while rest:
        token = rest.pop(0)
        if token in _OPTIONS:
            if token in options or not rest or rest[0].startswith("-"):
                return None
            options[token] = rest.pop(0)
        elif token.startswith("-") and token != "-":
            return None
        else:
            positional.append(token)
    if "--agent" not in options or not 1 <= len(positional) <= 2:
        return None
    source = positional[1] if len(positional) == 2 else "-"
    return RecordArguments(positional[0], source, options["--agent"], options.get("--from-hook"))


def record_command(arguments: RecordArguments) -> None:
    """Validate an agent's final message and record it in the run (exit 1 when invalid)."""
    from fixloop.workflows.intake import record_answer

    root = Path(layout.project_root())
    answer = record_answer(
        root, check_run_id(arguments.run_id), arguments.source, arguments.agent, arguments.from_hook
    )
    print_json(answer)
    if not answer["valid"]:
        raise SystemExit(1)


def main(arguments: RecordArguments) -> None:
    """`python -m fixloop record ...` without click: the same answers, errors and exit codes as through it."""
    replace_undecodable_output()
    try:
        guarded(lambda: record_command(arguments))
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        fail(FixloopError("ABORTED", "Aborted."))
