"""The `fixloop` command. Subcommands load on first use so the lightest paths start fast."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from fixloop import __version__
from fixloop.cli.output import fail, guarded
from fixloop.core.errors import FixloopError

# subcommand -> "module:attribute" of its click command
SUBCOMMANDS: dict[str, str] = {
    "validate": "fixloop.cli.validate:validate",
    "phases": "fixloop.cli.run:phases",
    "run": "fixloop.cli.run:run",
    "verify": "fixloop.cli.verify:verify",
    "review": "fixloop.cli.review:review",
    "log": "fixloop.cli.log:log",
    "policy": "fixloop.cli.policy:policy",
    "schema": "fixloop.cli.validate:schema",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def invoke(self, ctx: click.Context) -> Any:
        return guarded(lambda: super(LazyGroup, self).invoke(ctx))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = SUBCOMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fixloop")
def cli() -> None:
    """fixloop engine: contracts, validation, loop decisions, run state and logs."""


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="fixloop", standalone_mode=False)
    except click.exceptions.Exit as done:
        raise SystemExit(done.exit_code) from None
    except click.Abort:
        fail(FixloopError("ABORTED", "Aborted."))
    except click.UsageError as error:
        fail(FixloopError("USAGE_ERROR", error.format_message(), command=sys.argv[1:2]))
    except click.ClickException as error:
        fail(FixloopError("USAGE_ERROR", error.format_message()))


if __name__ == "__main__":
    main()
