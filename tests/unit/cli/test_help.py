"""`--help` of every command group lists each command's whole summary, never cut short."""

from __future__ import annotations

import inspect

import click
import pytest
from click.testing import CliRunner

from fixloop.cli import cli


def _groups(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Group]]:
    found = [(path, group)]
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if isinstance(command, click.Group):
            found += _groups(command, (*path, name))
    return found


GROUPS = _groups(cli)


def test_every_group_is_listed() -> None:
    assert [" ".join(path) for path, _ in GROUPS] == ["", "baseline", "log", "policy", "review", "run"]


@pytest.mark.parametrize(("path", "group"), GROUPS, ids=[" ".join(p) or "fixloop" for p, _ in GROUPS])
def test_help_lists_every_summary_whole(path: tuple[str, ...], group: click.Group) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"], terminal_width=80)
    assert result.exit_code == 0
    listing = result.output.split("\nCommands:\n", 1)[1]
    assert "..." not in listing
    flat = " ".join(listing.split())
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None
        summary = " ".join(inspect.cleandoc(command.help or "").split("\n\n")[0].split())
        assert summary, f"{name} has no help"
        assert f"{name} {summary}" in flat
