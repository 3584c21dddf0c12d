"""The tokens an agent spent, read from its Claude Code transcript at its SubagentStop.

An Agent tool result reports the usage of the agent's last model turn only, and nothing at all for the
coordinator (the command's own forked agent); the transcript holds every turn. Each model response is one
`assistant` line, or several sharing the message id (one per content block); the usage of each id counts
once (its last line's). Standard library only; the read is bounded (MAX_TRANSCRIPT_BYTES), and a file that
is longer is reported as not `complete`.
"""

from __future__ import annotations

from fixloop.core import jsoncodec
from fixloop.hookside.results import USAGE_KEYS

# Far beyond any agent's transcript (a whole 1M-token context is a few MB of text).
MAX_TRANSCRIPT_BYTES = 32 * 1024 * 1024
# Claude Code may fire SubagentStop a moment before the agent's final response reaches its transcript.
FINAL_WAIT_SECONDS = 3.0
FINAL_POLL_SECONDS = 0.05
TAIL_BYTES = 256 * 1024

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _lines_with(data: bytes, needle: bytes) -> Iterator[bytes]:
    """The lines of `data` that hold `needle`, found by searching rather than by splitting: most lines of a
    transcript (tool results, attachments) are skipped without being looked at one by one."""
    position = 0
    while (hit := data.find(needle, position)) >= 0:
        start = data.rfind(b"\n", 0, hit) + 1
        end = data.find(b"\n", hit)
        end = len(data) if end < 0 else end
        yield data[start:end]
        position = end + 1


def transcript_usage(path: str) -> dict[str, Any] | None:
    """{"usage": {token counts}, "total_tokens", "model", "responses", "complete"} summed over the
    transcript's model responses (`complete`: the file was read to its end); None when it cannot be read or
    holds none."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_TRANSCRIPT_BYTES + 1)
    except OSError:
        return None
    complete = len(data) <= MAX_TRANSCRIPT_BYTES
    if not complete:
        data = data[: data.rfind(b"\n", 0, MAX_TRANSCRIPT_BYTES) + 1]
    responses: dict[str, tuple[dict[str, Any], str | None]] = {}
    for line in _lines_with(data, b'"assistant"'):
        # A torn line (still being written) is skipped before parsing: the parser's error path imports the
        # json module, which costs more than the whole read.
        if not line.rstrip().endswith(b"}"):
            continue
        try:
            record = jsoncodec.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict) or record.get("type") != "assistant":
            continue
        message = record.get("message")
        usage = message.get("usage") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(usage, dict):
            continue
        identifier = message.get("id")
        key = identifier if isinstance(identifier, str) else f"line-{len(responses)}"
        model = message.get("model")
        responses[key] = (usage, model if isinstance(model, str) and model else None)
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
        "complete": complete,
    }


def _holds(path: str, needle: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - TAIL_BYTES - len(needle)))
            return needle in handle.read()
    except OSError:
        return True  # nothing to wait for


def wait_for_final(path: str, final_text: str, timeout: float | None = None) -> bool:
    """Whether the transcript holds the agent's final message (as JSON text), waiting up to `timeout`
    seconds (FINAL_WAIT_SECONDS) for it to be written."""
    import time

    if timeout is None:
        timeout = FINAL_WAIT_SECONDS
    if not final_text:
        return True
    try:
        needle = jsoncodec.dumps(final_text, ensure_ascii=False)[1:-1].encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the transcript spells it otherwise, nothing to look for
        return True
    deadline = time.monotonic() + timeout
    while not _holds(path, needle):
        if time.monotonic() >= deadline:
            return False
        time.sleep(FINAL_POLL_SECONDS)
    return True
