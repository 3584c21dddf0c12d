"""`fixloop next|record|answer|task`: carry a run forward, one model action at a time."""

from __future__ import annotations

from pathlib import Path

import click

from fixloop.cli.output import print_json
from fixloop.core.ids import check_run_id
from fixloop.store import layout


def _root() -> Path:
    return Path(layout.project_root())


@click.command("next")
@click.argument("run_id", metavar="RUN")
@click.option("--text", "as_text", is_flag=True, help="Print the action as the coordinator reads it.")
@click.option("--stopped", is_flag=True, help="The model that carries the run has stopped (hooks say so).")
def next_command(run_id: str, as_text: bool, stopped: bool) -> None:
    """Advance a run to its next model action: agents to call, a question, or the end."""
    from fixloop.workflows.actions import render
    from fixloop.workflows.driver import next_action

    action = next_action(_root(), check_run_id(run_id), stopped=stopped)
    if as_text:
        click.echo(render(action))
    else:
        print_json(action)


@click.command("record")
@click.argument("run_id", metavar="RUN")
@click.argument("source", required=False, default="-", metavar="[FILE|-]")
@click.option("--agent", "agent", required=True, help="The agent whose final message this is.")
@click.option("--from-hook", "from_hook", default=None, metavar="AGENT_ID", help="Recorded by a hook.")
def record_command(run_id: str, source: str, agent: str, from_hook: str | None) -> None:
    """Validate an agent's final message and record it in the run (exit 1 when invalid)."""
    from fixloop.workflows import hook_record

    hook_record.record_command(hook_record.RecordArguments(run_id, source, agent, from_hook))


@click.command("answer")
@click.argument("run_id", metavar="RUN")
@click.argument("choice", required=False, metavar="[LABEL]")
@click.option("--default", "use_default", is_flag=True, help="Take the question's default answer.")
def answer_command(run_id: str, choice: str | None, use_default: bool) -> None:
    """Answer the question a run waits on."""
    from fixloop.workflows.driver import answer

    print_json(answer(_root(), check_run_id(run_id), choice, use_default))


@click.command("task")
@click.argument("run_id", metavar="RUN")
@click.argument("agent")
def task_command(run_id: str, agent: str) -> None:
    """Print an agent's task in the run's current step."""
    from fixloop.workflows.driver import task

    click.echo(task(_root(), check_run_id(run_id), agent), nl=False)


@click.command("start")
@click.argument("command")
@click.option(
    "--json", "as_json", is_flag=True, help="Answer JSON (the run's description) instead of a line."
)
def start_command(command: str, as_json: bool) -> None:
    """Start the run of the slash command typed in this Claude Code session (a command's `!` line)."""
    from fixloop.core.errors import FixloopError
    from fixloop.runs.command_start import start_command as start
    from fixloop.runs.command_start import started_text

    try:
        if command == "answer":
            from fixloop.workflows.answer_command import answer_from_prompt

            answered = answer_from_prompt(_root())
            click.echo(f"fixloop run {answered['run_id']}: answered {answered['choice']!r}; the run goes on.")
            return
        state = start(_root(), command)
    except FixloopError as error:
        if as_json:
            raise
        hint = error.details.get("suggestion")
        extra = f" {hint}" if isinstance(hint, str) and hint not in error.message else ""
        click.echo(f"fixloop could not start: {error.message} ({error.code}){extra}")
        raise SystemExit(error.exit_code) from None
    if as_json:
        print_json({"run_id": state["run_id"], "workflow": state["workflow"], "phases": state["phases"]})
    else:
        click.echo(started_text(state))
