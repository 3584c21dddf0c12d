"""`fixloop review ...`: drive the review-fix loop of a run (record, next, choose, status, report).

Each state change is one StateStore.update under the run's lock, so parallel hooks recording agent results
never lose each other's writes. Log events are written after the change is saved.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from fixloop.cli.output import print_json
from fixloop.core.agent_names import CONTRACTED_AGENTS, agent_name
from fixloop.core.errors import FixloopError
from fixloop.core.ids import check_run_id
from fixloop.report import formats
from fixloop.review import machine
from fixloop.runs import lifecycle
from fixloop.store import layout, provenance, snapshot
from fixloop.store.statestore import StateStore

REPORT_FORMATS = ("json", "array", "markdown", "sarif")
VALIDATION_KIND = {"reviewer": "reviewer", "fixer": "fixer", "verifier": "verifier"}
MAX_INPUT_BYTES = 64 * 1024 * 1024


class ProjectEffects:
    """Snapshots in `<run dir>/snapshots/round-<n>/`, taken of the run's project directory."""

    def __init__(self, project: Path, run_dir: Path) -> None:
        self.project = project
        self.run_dir = run_dir

    def take_snapshot(self, round_number: int, files: Sequence[str]) -> dict[str, Any]:
        return snapshot.take(self.project, self.run_dir / "snapshots" / f"round-{round_number}", files)

    def changed_since(self, snap: Mapping[str, Any]) -> list[str]:
        return snapshot.changed_since(snap)

    def rollback(self, snap: Mapping[str, Any]) -> list[str]:
        return snapshot.rollback(snap)


def _now() -> int:
    return lifecycle.now_ms(lifecycle.default_clock)


def _open(run_id: str) -> tuple[Path, dict[str, Any]]:
    root = Path(layout.project_root())
    return root, lifecycle.load_run(root, check_run_id(run_id))


def _effects(root: Path, state: Mapping[str, Any]) -> ProjectEffects:
    project = Path(str(state.get("project_dir") or root))
    return ProjectEffects(project, Path(layout.run_dir(root, str(state["run_id"]))))


def apply_step(
    store: StateStore, step: Callable[[dict[str, Any]], machine.Transition], action: str
) -> tuple[dict[str, Any], machine.Transition]:
    """Run `step` on the state under the store's lock and save it; returns (saved state, transition).

    The cyclic garbage collector is paused meanwhile: a state with tens of thousands of issues is all
    fresh containers, and collecting them repeatedly made the step grow faster than linearly.
    """
    done: list[machine.Transition] = []

    def update(state: dict[str, Any]) -> dict[str, Any]:
        transition = step(state)
        done.append(transition)
        return transition.state

    collecting = gc.isenabled()
    gc.disable()
    try:
        saved = store.update(update, action=action)
    finally:
        if collecting:
            gc.enable()
    return saved, done[-1]


def _apply(
    root: Path, run_id: str, step: Callable[[dict[str, Any]], machine.Transition], action: str
) -> machine.Transition:
    """apply_step on the run's state, then write the transition's events to the run's log."""
    saved, transition = apply_step(lifecycle.store_for(root, run_id, lifecycle.default_clock), step, action)
    log = lifecycle.run_log(saved, lifecycle.default_clock)
    for level, kind, fields in transition.events:
        log.emit(level, kind, **fields)
    return transition


def _read_input(root: Path, source: str) -> bytes:
    if source == "-":
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    else:
        path = layout.resolve_inside(root, source)
        if not path.is_file():
            raise FixloopError("INPUT_NOT_FOUND", f"No file {source}.", received=source)
        with path.open("rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise FixloopError("INPUT_TOO_LARGE", f"The input is larger than {MAX_INPUT_BYTES} bytes.")
    return data


@click.group("review")
def review() -> None:
    """Drive the review-fix loop of a run: record agent results, ask for the next action, report."""


@review.command("record")
@click.argument("run_id", metavar="RUN")
@click.argument("source", required=False, default="-", metavar="[FILE|-]")
@click.option("--agent", "agent", required=True, help="The agent whose final message this is.")
@click.option("--from-hook", "from_hook", default=None, metavar="AGENT_ID", help="Recorded by a hook.")
def record(run_id: str, source: str, agent: str, from_hook: str | None) -> None:
    """Validate an agent's final message and record it in the current round (exit 1 when invalid)."""
    root, state = _open(run_id)
    lifecycle.require_running(state)
    name = agent_name(agent) or ""
    if name not in CONTRACTED_AGENTS:
        raise FixloopError(
            "UNKNOWN_AGENT", f"Unknown agent {agent!r}.", valid_values=list(CONTRACTED_AGENTS), received=agent
        )
    role = machine.agent_role(name)
    raw = _read_input(root, source)
    run_dir = Path(layout.run_dir(root, run_id))
    if from_hook is not None:
        provenance.check_hook_agent(run_dir, name, from_hook)
        if state.get("claude_session_id"):
            provenance.verified_stop(run_dir, name, raw, agent_id=from_hook)
        source = "hook"
    elif state.get("claude_session_id"):
        provenance.verified_stop(run_dir, name, raw)
        source = "ledger"
    else:
        source = "cli"

    from fixloop.contracts.validation import validate_text

    document: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    try:
        document = validate_text(VALIDATION_KIND[role], raw)
    except FixloopError as failure:
        if failure.exit_code != 1:
            raise
        error = {"code": failure.code, "message": failure.message, **failure.details}
    now = _now()
    transition = _apply(
        root,
        run_id,
        lambda current: machine.record_agent_result(
            current,
            name,
            document,
            error,
            provenance=source,
            agent_id=from_hook,
            now_ms=now,
            inplace=True,
        ),
        "review_record",
    )
    print_json(transition.document)
    if not transition.document["valid"]:
        raise SystemExit(1)


@review.command("next")
@click.argument("run_id", metavar="RUN")
def next_action(run_id: str) -> None:
    """Advance the loop with what was recorded and print the next action for the coordinator."""
    root, state = _open(run_id)
    if state.get("ended_at_ms") is not None:
        review = state.get("review") or {}
        if not review.get("outcome"):
            lifecycle.require_running(state)
    effects = _effects(root, state)
    now = _now()
    transition = _apply(
        root,
        run_id,
        lambda current: machine.decide_next(current, effects, now, inplace=True),
        "review_next",
    )
    print_json(transition.document)


@review.command("choose")
@click.argument("run_id", metavar="RUN")
@click.argument("choice", required=False, type=click.Choice(["rollback", "continue", "manual", "cancel"]))
@click.option("--default", "use_default", is_flag=True, help="Apply the configured on_verification_failure.")
def choose(run_id: str, choice: str | None, use_default: bool) -> None:
    """Answer the question of an ask_user action."""
    root, state = _open(run_id)
    lifecycle.require_running(state)
    effects = _effects(root, state)
    now = _now()
    transition = _apply(
        root,
        run_id,
        lambda current: machine.choose(current, choice, use_default, effects, now, inplace=True),
        "review_choose",
    )
    print_json(transition.document)


@review.command("status")
@click.argument("run_id", metavar="RUN")
def status(run_id: str) -> None:
    """Where the review loop stands (changes nothing)."""
    _root, state = _open(run_id)
    print_json(machine.status_document(state))


@review.command("report")
@click.argument("run_id", metavar="RUN")
@click.option("--format", "fmt", type=click.Choice(REPORT_FORMATS), default="json", show_default=True)
@click.option(
    "--output", "output", default=None, metavar="FILE", help="Write the report to FILE (in the project)."
)
def report(run_id: str, fmt: str, output: str | None) -> None:
    """The review report: coordinator output (json), supervisor simple array, Markdown or SARIF."""
    root, state = _open(run_id)
    content: Any
    if fmt == "json":
        content = formats.coordinator_output(state)
    elif fmt == "array":
        content = formats.simple_array(state)
    elif fmt == "sarif":
        content = formats.sarif(state)
    else:
        content = formats.markdown(state)
    if output is None:
        print_json(content if fmt != "markdown" else {"run_id": run_id, "format": fmt, "content": content})
        return
    target = layout.resolve_inside(root, output)
    if target.is_dir():
        raise FixloopError("INVALID_OUTPUT", f"{output} is a directory.", received=output)
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, indent=2) + "\n"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print_json({"status": "written", "run_id": run_id, "format": fmt, "output": str(target)})
