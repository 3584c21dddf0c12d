"""`fixloop record`: an agent's final message into the run, for whichever phase is waiting for it.

The message must be one a real subagent ended with (store.provenance), is validated against the agent's
contract in this phase, and may first be checked by engine work (a test run) that can refuse it or send the
agent on with more to do. The answer tells the SubagentStop hook whether to let the agent stop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fixloop.core import timekeeping
from fixloop.core.agent_names import agent_name
from fixloop.core.errors import FixloopError
from fixloop.review.access import config_of
from fixloop.review.effects import project_effects
from fixloop.review.intake import read_input
from fixloop.review.record import MAX_INVALID_ATTEMPTS
from fixloop.review.step import Event
from fixloop.runs import lifecycle, phasebook
from fixloop.runs.lifecycle import Clock
from fixloop.store import layout, provenance
from fixloop.workflows.context import PhaseContext, RunState
from fixloop.workflows.driver import emit_events, locked_update
from fixloop.workflows.registry import phase_for
from fixloop.workflows.work import perform


def _waiting_phase(state: RunState, agent: str) -> int:
    number = phasebook.open_phase_number(state)
    if number is None or phase_for(state, number).contract_kind(agent) is None:
        raise FixloopError(
            "UNEXPECTED_AGENT_RESULT",
            f"Result of {agent} not recorded: no phase of run {state.get('run_id')} is waiting for it.",
            agent=agent,
            open_phase=number,
        )
    return number


def record_answer(
    root: Path, run_id: str, source: str, agent: str, from_hook: str | None, clock: Clock | None = None
) -> dict[str, Any]:
    """Record the final message of `agent` read from `source` ("-" for standard input)."""
    clock = clock or timekeeping.default_clock
    state = lifecycle.load_run(root, run_id)
    lifecycle.require_running(state)
    name = agent_name(agent)
    if name is None:
        raise FixloopError("UNKNOWN_AGENT", f"Unknown agent {agent!r}.", received=agent)
    number = _waiting_phase(state, name)
    phase = phase_for(state, number)
    kind = phase.contract_kind(name)
    assert kind is not None
    raw = read_input(root, source)
    origin = provenance.check_provenance(
        Path(layout.run_dir(root, run_id)),
        name,
        raw,
        agent_id=from_hook,
        in_claude_code=bool(state.get("claude_session_id")),
    )
    from fixloop.contracts.check import check_text  # only recording needs the validators

    checked = check_text(kind, raw, config_of(state).max_issues_per_answer)
    document, error = checked.document, checked.error
    effects = project_effects(root, state)
    output: Any = None
    work = None
    if document is not None:
        work = phase.gate(PhaseContext(state, number, timekeeping.now_ms(clock), effects), name, document)
        if work is not None:
            output = perform(root, state, work, clock, effects)
    events: list[Event] = []
    answers: list[dict[str, Any]] = []

    def take(current: RunState) -> None:
        lifecycle.require_running(current)
        if _waiting_phase(current, name) != number:
            raise FixloopError("UNEXPECTED_AGENT_RESULT", f"Result of {name} not recorded: the run moved on.")
        ctx = PhaseContext(current, number, timekeeping.now_ms(clock), effects)
        problem, go_on = None, None
        if document is not None and work is not None:
            problem, go_on = phase.judge(ctx, name, document, output)
        answer = phase.record(
            ctx,
            name,
            None if problem is not None else document,
            problem if problem is not None else error,
            provenance=origin,
            agent_id=from_hook,
        )
        if go_on and answer.get("valid"):
            answer["continue"] = go_on
        if problem is not None and answer.get("attempt", 0) > MAX_INVALID_ATTEMPTS:
            answer["retry"] = False
        answers.append(answer)
        events.extend(ctx.events)

    emit_events(locked_update(root, run_id, clock, take, "record"), events, clock)
    return answers[-1]
