"""The hook ledger of a run: which fixloop subagents were really called, started, stopped and returned.

`runs/<run_id>/agents.jsonl`, append-only, one JSON object per line, written only by the plugin's hooks
(each line with a single os.write on an O_APPEND descriptor, so concurrent hooks never interleave).
Every line has `kind`, `ts_ms` (epoch ms, the hook's wall clock), `agent_type` (`fixloop:code-reviewer`)
and `agent` (`code-reviewer`); then by kind:

- `call`   (PreToolUse):   tool_use_id, parent_agent_id (the calling subagent, null on the main thread),
                           background (the tool input's run_in_background, null when absent), step (the
                           engine's pending dispatch the call belongs to; absent when none was pending)
- `launch` (PostToolUse of a background call): tool_use_id, agent_id
- `start`  (SubagentStart): agent_id
- `stop`   (SubagentStop):  agent_id, message_sha256 (sha256 of last_assistant_message, UTF-8),
                           stop_hook_active, attempt (1 + earlier stops of the same agent_id)
- `result` (PostToolUse of a foreground call, or SubagentStop of a background one): tool_use_id,
                           agent_id, status, error (a code, or null), duration_ms (measured from the
                           call line's ts_ms), reported_duration_ms (what Claude Code reported, if anything)
- `refused` (PreToolUse):  tool_use_id: a call the hook refused (not part of the step, or a second call)
- `usage`  (SubagentStop):  agent_id, usage, total_tokens, model, responses, complete: the tokens of all the
                           agent's model turns so far, read from its transcript (hookside.transcript_usage;
                           the last line of an agent_id is the whole), no `agent_type`
- `touch` / `wrote` (PreToolUse / PostToolUse of Edit, Write, ...): one edit of a fixloop agent, with
                           agent_id, tool, tool_use_id, window, path and content hashes (store.touches)

`hooks-state.json` beside it holds the hooks' small mutable state (the open reviewer group, contract
verdicts per agent_id), changed only under its lock. Standard library only: hooks import this module.
"""

from __future__ import annotations

import os

from fixloop.core import jsoncodec
from fixloop.store.jsonl import json_objects

# Hooks import this module on every subagent call: the heavier imports wait until they are needed.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping
    from typing import Any

    PathText = str | os.PathLike[str]

LEDGER_FILE = "agents.jsonl"
HOOKS_STATE_FILE = "hooks-state.json"
LEDGER_KINDS = ("call", "launch", "start", "stop", "result", "refused", "usage", "touch", "wrote")


def message_bytes(text: str) -> bytes:
    """The UTF-8 bytes of a message as hooks hash and pass it on (an unpaired surrogate becomes '?')."""
    return text.encode("utf-8", "replace")


def message_sha256(message: str | bytes) -> str:
    data = message if isinstance(message, bytes) else message_bytes(message)
    try:
        # The C sha256 that hashlib itself falls back to: the same digest, without loading OpenSSL (~2 ms,
        # paid by the SubagentStop hook of every fixloop subagent). Python 3.12 renamed it: hashlib there.
        c_sha256 = __import__("_sha256")
    except ImportError:
        import hashlib

        return hashlib.sha256(data).hexdigest()
    return str(c_sha256.sha256(data).hexdigest())


def ledger_path(run_dir: PathText) -> str:
    return os.path.join(run_dir, LEDGER_FILE)


def hooks_state_path(run_dir: PathText) -> str:
    return os.path.join(run_dir, HOOKS_STATE_FILE)


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def append(run_dir: PathText, record: Mapping[str, Any]) -> dict[str, Any]:
    """Append one line (raises OSError when the run directory is not writable)."""
    from fixloop.store.logwriter import append_line, encode_json_line, json_safe

    line = dict(json_safe(dict(record)))
    append_line(ledger_path(run_dir), encode_json_line(line))
    return line


def read(run_dir: PathText) -> list[dict[str, Any]]:
    """Every well-formed line, in file order; a missing ledger is empty, a torn line is skipped."""
    try:
        raw = _read_bytes(ledger_path(run_dir))
    except FileNotFoundError:
        return []
    return json_objects(raw)


def _last(records: Iterable[Mapping[str, Any]], kind: str, key: str, value: object) -> dict[str, Any] | None:
    found: dict[str, Any] | None = None
    if value is None or value == "":
        return None
    for record in records:
        if record.get("kind") == kind and record.get(key) == value:
            found = dict(record)
    return found


def find_call(records: Iterable[Mapping[str, Any]], tool_use_id: object) -> dict[str, Any] | None:
    return _last(records, "call", "tool_use_id", tool_use_id)


def find_launch(records: Iterable[Mapping[str, Any]], agent_id: object) -> dict[str, Any] | None:
    """The `launch` line of a background call, found by the subagent's agent_id."""
    return _last(records, "launch", "agent_id", agent_id)


def find_result(records: Iterable[Mapping[str, Any]], tool_use_id: object) -> dict[str, Any] | None:
    return _last(records, "result", "tool_use_id", tool_use_id)


def in_step(record: Mapping[str, Any], step: int, at_ms: int) -> bool:
    """Whether a `call` line belongs to dispatch `step` (issued at `at_ms`): by its `step`, or for a line
    written without one, by its time."""
    if "step" in record:
        return record.get("step") == step
    ts = record.get("ts_ms")
    return isinstance(ts, int) and ts >= at_ms


def step_calls(
    records: Iterable[Mapping[str, Any]], step: int, at_ms: int, agents: Collection[object]
) -> tuple[list[object], list[Mapping[str, Any]]]:
    """The calls of `agents` in dispatch `step` (issued at `at_ms`), as their tool_use_ids, and those agents'
    `result` lines (of any step: a result is matched to its call by tool_use_id), both in ledger order."""
    calls: list[object] = []
    results: list[Mapping[str, Any]] = []
    for record in records:
        if record.get("agent") not in agents:
            continue
        if record.get("kind") == "call" and in_step(record, step, at_ms):
            calls.append(record.get("tool_use_id"))
        elif record.get("kind") == "result":
            results.append(record)
    return calls, results


def find_refused(records: Iterable[Mapping[str, Any]], tool_use_id: object) -> bool:
    """Whether a PreToolUse hook refused the call `tool_use_id` (a `refused` line)."""
    return _last(records, "refused", "tool_use_id", tool_use_id) is not None


def stops_of(records: Iterable[Mapping[str, Any]], agent_id: object) -> list[dict[str, Any]]:
    if agent_id is None or agent_id == "":
        return []
    return [dict(r) for r in records if r.get("kind") == "stop" and r.get("agent_id") == agent_id]


# ---- hooks-state.json ----------------------------------------------------------------------------


def read_hooks_state(run_dir: PathText) -> dict[str, Any]:
    try:
        doc = jsoncodec.loads(_read_bytes(hooks_state_path(run_dir)))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def update_hooks_state(
    run_dir: PathText, fn: Callable[[dict[str, Any]], None], timeout: float = 3.0
) -> dict[str, Any]:
    """Run `fn` on the state under the lock and save what it left (a hook-private file: no backup)."""
    from fixloop.store.atomic import write_atomic
    from fixloop.store.locking import file_lock
    from fixloop.store.logwriter import json_safe

    path = hooks_state_path(run_dir)
    with file_lock(path, timeout=timeout):
        state = read_hooks_state(run_dir)
        fn(state)
        data = jsoncodec.dumps(json_safe(state), ensure_ascii=False).encode("utf-8")
        write_atomic(path, data + b"\n", durable=False)
    return state
