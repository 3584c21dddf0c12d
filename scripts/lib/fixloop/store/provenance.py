"""Provenance of an agent result given to `fixloop review record`, checked against the hook ledger.

A run started inside Claude Code (its state has `claude_session_id`) only accepts a result typed on the
command line when the ledger (`runs/<id>/agents.jsonl`, written by the plugin's hooks) has a `stop` line for
that agent whose `message_sha256` is the sha256 of exactly the text given. This keeps the coordinator from
inventing reviewer output: only what a real subagent said can be recorded. Standard library only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from fixloop.core.agent_names import agent_name
from fixloop.core.errors import FixloopError
from fixloop.store import ledger


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


def verified_stop(run_dir: Path, agent: str, raw: bytes, agent_id: str | None = None) -> dict[str, Any]:
    """The `stop` line of `agent` (and of `agent_id`, when given) whose message hash matches `raw`.

    Anything else is UNVERIFIED_AGENT_RESULT: only what a real subagent said can be recorded.
    """
    wanted = digests(raw)
    stops = [
        record
        for record in ledger.read(run_dir)
        if record.get("kind") == "stop"
        and _agent_of(record) == agent
        and (agent_id is None or record.get("agent_id") == agent_id)
    ]
    for record in reversed(stops):
        if record.get("message_sha256") in wanted:
            return dict(record)
    raise FixloopError(
        "UNVERIFIED_AGENT_RESULT",
        f"No subagent {agent} of this run ended with exactly this message, so it is not recorded.",
        agent=agent,
        ledger=str(ledger.ledger_path(run_dir)),
        stops_seen=len(stops),
        suggestion="Record the agent's final message unchanged (the hooks usually record it themselves).",
    )


def check_hook_agent(run_dir: Path, agent: str, agent_id: str) -> None:
    """--from-hook AGENT_ID: refuse when the ledger says that agent id belongs to another agent."""
    for record in ledger.read(run_dir):
        if record.get("agent_id") == agent_id:
            other = _agent_of(record)
            if other is not None and other != agent:
                raise FixloopError(
                    "AGENT_MISMATCH",
                    f"Agent id {agent_id} belongs to {other} in the ledger, not to {agent}.",
                    agent=agent,
                    agent_id=agent_id,
                    ledger_agent=other,
                )
