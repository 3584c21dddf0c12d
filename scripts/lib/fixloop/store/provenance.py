"""Provenance of an agent result given to `fixloop review record`, checked against the hook ledger.

A run started inside Claude Code (its state has `claude_session_id`) only accepts a result typed on the
command line when the ledger (`runs/<id>/agents.jsonl`, written by the plugin's hooks) has a `stop` line for
that agent whose `message_sha256` is the sha256 of exactly the text given. This keeps the coordinator from
inventing reviewer output: only what a real subagent said can be recorded. Standard library only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from fixloop.core.agent_names import agent_name
from fixloop.core.errors import FixloopError
from fixloop.store import ledger

Provenance = Literal["hook", "ledger", "cli"]


def _agent_of(record: dict[str, Any]) -> str | None:
    return agent_name(record.get("agent")) or agent_name(record.get("agent_type"), plugin_only=True)


def digests(raw: bytes) -> set[str]:
    """sha256 of the text as given, and without one trailing newline (shells and editors add one)."""
    values = {hashlib.sha256(raw).hexdigest()}
    for ending in (b"\r\n", b"\n"):
        if raw.endswith(ending):
            values.add(hashlib.sha256(raw[: -len(ending)]).hexdigest())
            break
    return values


def _hook_agent_error(records: list[dict[str, Any]], agent: str, agent_id: str) -> FixloopError | None:
    """--from-hook AGENT_ID: AGENT_MISMATCH when the ledger says that agent id belongs to another agent."""
    for record in records:
        if record.get("agent_id") == agent_id:
            other = _agent_of(record)
            if other is not None and other != agent:
                return FixloopError(
                    "AGENT_MISMATCH",
                    f"Agent id {agent_id} belongs to {other} in the ledger, not to {agent}.",
                    agent=agent,
                    agent_id=agent_id,
                    ledger_agent=other,
                )
    return None


def _unverified_error(
    records: list[dict[str, Any]], run_dir: Path, agent: str, raw: bytes, agent_id: str | None
) -> FixloopError | None:
    """UNVERIFIED_AGENT_RESULT unless a `stop` line of `agent` (and of `agent_id`, when given) has the
    sha256 of `raw`: only what a real subagent said can be recorded."""
    wanted = digests(raw)
    stops = [
        record
        for record in records
        if record.get("kind") == "stop"
        and _agent_of(record) == agent
        and (agent_id is None or record.get("agent_id") == agent_id)
    ]
    if any(record.get("message_sha256") in wanted for record in stops):
        return None
    return FixloopError(
        "UNVERIFIED_AGENT_RESULT",
        f"No subagent {agent} of this run ended with exactly this message, so it is not recorded.",
        agent=agent,
        ledger=str(ledger.ledger_path(run_dir)),
        stops_seen=len(stops),
        suggestion="Record the agent's final message unchanged (the hooks usually record it themselves).",
    )


def check_provenance(
    run_dir: Path, agent: str, raw: bytes, *, agent_id: str | None, in_claude_code: bool
) -> Provenance:
    """Where the message `raw` of `agent` comes from, checked against the ledger (read once).

    - "hook": recorded by the SubagentStop hook for `agent_id`; that id must not belong to another agent
      (AGENT_MISMATCH) and, inside Claude Code, the ledger must hold its stop line with this message.
    - "ledger": typed on the command line inside Claude Code; the ledger must hold a stop line of the
      agent with exactly this message (UNVERIFIED_AGENT_RESULT otherwise).
    - "cli": typed on the command line outside Claude Code; there is no ledger to check.
    """
    if agent_id is None and not in_claude_code:
        return "cli"
    records = ledger.read(run_dir)
    if agent_id is not None:
        error = _hook_agent_error(records, agent, agent_id)
        if error is not None:
            raise error
    if in_claude_code:
        error = _unverified_error(records, run_dir, agent, raw, agent_id)
        if error is not None:
            raise error
    return "hook" if agent_id is not None else "ledger"
