"""The `fixloop` command. Subcommands load on first use so the lightest paths start fast."""

from __future__ import annotations

import importlib
from typing import Any

import click

from fixloop import __version__
from fixloop.cli.listing import ListedGroup
from fixloop.cli.output import fail, guarded
from fixloop.core.command_output import replace_undecodable_output
from fixloop.core.errors import FixloopError

# subcommand -> "module:attribute" of its click command
SUBCOMMANDS: dict[str, str] = {
    "answer": "fixloop.cli.flow:answer_command",
    "baseline": "fixloop.cli.baseline:baseline",
    "check": "fixloop.cli.check:check",
    "next": "fixloop.cli.flow:next_command",
    "record": "fixloop.cli.flow:record_command",
    "start": "fixloop.cli.flow:start_command",
    "task": "fixloop.cli.flow:task_command",
    "validate": "fixloop.cli.validate:validate",
    "init": "fixloop.cli.project:init",
    "trust": "fixloop.cli.project:trust",
    "phases": "fixloop.cli.run:phases",
    "run": "fixloop.cli.run:run",
    "verify": "fixloop.cli.verify:verify",
    "review": "fixloop.cli.review:review",
    "log": "fixloop.cli.log:log",
    "policy": "fixloop.cli.policy:policy",
    "schema": "fixloop.cli.validate:schema",
}


class LazyGroup(ListedGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def invoke(self, ctx: click.Context) -> Any:
        return guarded(lambda: super(LazyGroup, self).invoke(ctx))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in SUBCOMMANDS:
            raise unknown_command(name, sorted(SUBCOMMANDS))
        return super().resolve_command(ctx, args)

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


def unknown_command(name: str, known: list[str]) -> FixloopError:
    import difflib

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return FixloopError(
        "UNKNOWN_COMMAND",
        f"No such command {name!r}." + (f" Did you mean {close[0]!r}?" if close else ""),
        received=name,
        valid_values=known,
        suggestion=f"fixloop {close[0]}" if close else "fixloop --help",
    )


def main(argv: list[str] | None = None) -> None:
    replace_undecodable_output()
    try:
        guarded(lambda: cli.main(args=argv, prog_name="fixloop", standalone_mode=False))
    except click.exceptions.Exit as done:
        raise SystemExit(done.exit_code) from None
    except click.Abort:
        fail(FixloopError("ABORTED", "Aborted."))
    except click.UsageError as error:
        context = error.ctx
        command = context.command_path.split()[1:] if context is not None else []
        details: dict[str, Any] = {"usage": context.get_usage()} if context is not None else {}
        fail(FixloopError("USAGE_ERROR", error.format_message(), command=command, **details))
    except click.ClickException as error:
        fail(FixloopError("USAGE_ERROR", error.format_message()))


if __name__ == "__main__":
    main()
