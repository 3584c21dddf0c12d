"""The tokens an agent spent, read from its Claude Code transcript (for the coordinator, whose usage no
Agent tool result reports: it is the command's own forked agent).

Each model response is one `assistant` line, or several sharing the message id (one per content block);
the usage of each id counts once. Standard library only; the read is bounded.
"""

from __future__ import annotations

from fixloop.core import jsoncodec
from fixloop.hookside.results import USAGE_KEYS

MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
# Claude Code may fire SubagentStop a moment before the agent's final response reaches its transcript.
FINAL_WAIT_SECONDS = 3.0
FINAL_POLL_SECONDS = 0.05
TAIL_BYTES = 256 * 1024

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def transcript_usage(path: str) -> dict[str, Any] | None:
    """{"usage": {token counts}, "total_tokens", "model", "responses"} summed over the transcript's model
    responses; None when it cannot be read or holds none."""
    responses: dict[str, tuple[dict[str, Any], str | None]] = {}
    read = 0
    try:
        with open(path, "rb") as handle:
            for raw in handle:
                read += len(raw)
                if read > MAX_TRANSCRIPT_BYTES:
                    break
                if b'"assistant"' not in raw:
                    continue
                try:
                    record = jsoncodec.loads(raw)
                except ValueError:
                    continue
                message = record.get("message") if isinstance(record, dict) else None
                if record.get("type") != "assistant" or not isinstance(message, dict):
                    continue
                usage = message.get("usage")
                if not isinstance(usage, dict):
                    continue
                identifier = message.get("id")
                key = identifier if isinstance(identifier, str) else f"line-{len(responses)}"
                model = message.get("model")
                responses[key] = (usage, model if isinstance(model, str) and model else None)
    except OSError:
        return None
    if not responses:
        return None
    totals = dict.fromkeys(USAGE_KEYS, 0)
    for usage, _model in responses.values():
        for name in USAGE_KEYS:
            totals[name] += _count(usage.get(name))
    models = [model for _usage, model in responses.values() if model]
    return {
        "usage": totals,
        "total_tokens": sum(totals.values()),
        "model": models[-1] if models else None,
        "responses": len(responses),
    }


def _holds(path: str, needle: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - TAIL_BYTES - len(needle)))
            return needle in handle.read()
    except OSError:
        return True  # nothing to wait for


def wait_for_final(path: str, final_text: str, timeout: float = FINAL_WAIT_SECONDS) -> bool:
    """Whether the transcript holds the agent's final message (as JSON text), waiting up to `timeout`
    seconds for it to be written."""
    import time

    if not final_text:
        return True
    needle = jsoncodec.dumps(final_text, ensure_ascii=False)[1:-1].encode("utf-8")
    deadline = time.monotonic() + timeout
    while not _holds(path, needle):
        if time.monotonic() >= deadline:
            return False
        time.sleep(FINAL_POLL_SECONDS)
    return True
