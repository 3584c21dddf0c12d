"""`fixloop review record`: read an agent's final message, check where it came from, validate, record it.

Inside Claude Code (the run has a `claude_session_id`) the message must be one the hook ledger saw a real
subagent end with (store.provenance). An invalid message is recorded too, as an invalid attempt.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from fixloop.core.agent_names import CONTRACTED_AGENTS, agent_name
from fixloop.core.errors import FixloopError
from fixloop.review.access import config_of
from fixloop.review.record import agent_role, record_agent_result
from fixloop.review.runner import now_ms, run_step
from fixloop.review.step import Document
from fixloop.runs import lifecycle
from fixloop.store import layout, provenance

MAX_INPUT_BYTES = 64 * 1024 * 1024


def read_input(root: Path, source: str) -> bytes:
    """The bytes of `source`: "-" for standard input, else a file inside the project."""
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


def record_result(root: Path, run_id: str, source: str, agent: str, from_hook: str | None) -> Document:
    """Record the final message of `agent` read from `source`; the answer says whether it was valid.

    `from_hook` is the agent id when the plugin's SubagentStop hook records the message.
    """
    state = lifecycle.load_run(root, run_id)
    lifecycle.require_running(state)
    name = agent_name(agent) or ""
    if name not in CONTRACTED_AGENTS:
        raise FixloopError(
            "UNKNOWN_AGENT", f"Unknown agent {agent!r}.", valid_values=list(CONTRACTED_AGENTS), received=agent
        )
    role = agent_role(name)
    raw = read_input(root, source)
    origin = provenance.check_provenance(
        Path(layout.run_dir(root, run_id)),
        name,
        raw,
        agent_id=from_hook,
        in_claude_code=bool(state.get("claude_session_id")),
    )

    from fixloop.contracts.validation import validate_text  # only `review record` needs the validators

    document: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    try:
        document = validate_text(role, raw, config_of(state).max_issues_per_answer)
    except FixloopError as failure:
        if failure.exit_code != 1:
            raise
        error = {"code": failure.code, "message": failure.message, **failure.details}
    now = now_ms()
    return run_step(
        root,
        run_id,
        lambda current: record_agent_result(
            current, name, document, error, provenance=origin, agent_id=from_hook, now_ms=now, inplace=True
        ),
        "review_record",
    ).document
