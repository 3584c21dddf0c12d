"""Command groups whose `--help` lists each command's whole first paragraph, wrapped, not cut at 45
characters."""

from __future__ import annotations

import click


def summary_line(command: click.Command) -> str:
    if command.short_help:
        return command.short_help
    import inspect  # only --help pays for it

    paragraph = inspect.cleandoc(command.help or "").split("\n\n")[0]
    return " ".join(paragraph.split())


class ListedGroup(click.Group):
    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, summary_line(command)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
