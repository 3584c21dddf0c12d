"""PreToolUse / PostToolUse (Edit|Write|MultiEdit|NotebookEdit) of a fixloop subagent: what it edits.

For an edit by a fixloop agent (the payload's `agent_type` is `fixloop:<name>`) in a session with a running
fixloop run, records the touch before the edit and the written content after it (store.touches): the
ledger lines `touch` and `wrote`, and on the first touch of a path in the run's open touch window the
path's prior content, which a rollback restores (store.edits). An edit of a path outside the project
leaves a WARNING TOUCH_OUTSIDE_PROJECT, and one over file_state.MAX_PRIOR_BYTES (whose prior is not
kept) a WARNING TOUCH_PRIOR_TOO_LARGE. Never blocks the edit, never prints; hooks/run-hook starts no
interpreter for anyone else's edits.
"""

from __future__ import annotations

from fixloop.hookside.context import now_ms
from fixloop.hookside.payload import subagent_of, tool_input_of
from fixloop.store import touches
from fixloop.store.file_state import MAX_PRIOR_BYTES, TOO_LARGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fixloop.hookside.context import RunContext

EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
LINE_KINDS = {"PreToolUse": "touch", "PostToolUse": "wrote"}


def relevant(payload: dict[str, Any]) -> bool:
    """An edit tool's call by a fixloop subagent (checked before the run is looked for)."""
    return (
        payload.get("hook_event_name") in LINE_KINDS
        and payload.get("tool_name") in EDIT_TOOLS
        and subagent_of(payload) is not None
    )


def edited_path(payload: dict[str, Any]) -> str | None:
    tool_input = tool_input_of(payload)
    for key in ("file_path", "notebook_path"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def handle(payload: dict[str, Any], context: RunContext) -> str | None:
    agent = subagent_of(payload)
    if agent is None:
        return None
    event = str(payload.get("hook_event_name"))
    path = edited_path(payload)
    if path is None:
        context.warn(
            "TOUCH_BAD_INPUT",
            f"{payload.get('tool_name')} call of {agent} names no file: its edit is not recorded.",
            agent=agent,
            agent_id=payload.get("agent_id"),
        )
        return None
    cwd = payload.get("cwd")
    line = touches.note(
        context.run_dir,
        LINE_KINDS[event],
        touches.active_window(context.run_dir),
        context.root,
        path,
        cwd=cwd if isinstance(cwd, str) and cwd else None,
        agent_type=payload.get("agent_type"),
        agent=agent,
        agent_id=payload.get("agent_id"),
        tool=payload.get("tool_name"),
        tool_use_id=payload.get("tool_use_id"),
        ts_ms=now_ms(),
    )
    if event == "PreToolUse" and line["refused"] == touches.OUTSIDE_PROJECT:
        context.warn(
            "TOUCH_OUTSIDE_PROJECT",
            f"{agent} edits {path}, which resolves outside the project ({line['path']}): "
            "fixloop will never roll that file back.",
            agent=agent,
            agent_id=payload.get("agent_id"),
            path=line["path"],
        )
    if event == "PreToolUse" and line.get("first") is False and line.get("before_sha256") == TOO_LARGE:
        context.warn(
            "TOUCH_PRIOR_TOO_LARGE",
            f"{agent} edits {line['path']}, which is over {MAX_PRIOR_BYTES >> 20} MiB: fixloop keeps no copy "
            "of it, so a rollback will leave this file as the agent leaves it.",
            agent=agent,
            agent_id=payload.get("agent_id"),
            path=line["path"],
        )
    return None
