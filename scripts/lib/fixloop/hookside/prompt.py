"""UserPromptSubmit: keep a session's `/fixloop:` prompt for the engine.

When the prompt (after leading white space) starts with `/fixloop:`, writes
<project>/.claude/fixloop/sessions/<session_id>.prompt (store.layout.prompt_path), mode 0600:
{"prompt": TEXT, "prompt_id": ID, "ts_ms": MS}, the text redacted and cut at MAX_PROMPT_BYTES (then
"truncated": true). Any other prompt: nothing. Prints nothing; a failure, or a session id that cannot
name a file, leaves a WARNING in the data directory (there is no run yet to log it in).
"""

from __future__ import annotations

import os
import sys

from fixloop.core import jsoncodec
from fixloop.core.errors import FixloopError
from fixloop.hookside.context import describe, fallback_warning, now_ms, read_payload
from fixloop.hookside.payload import project_of, session_of
from fixloop.store import layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, BinaryIO

COMMAND_PREFIX = "/fixloop:"
MAX_PROMPT_BYTES = 256 * 1024


def is_fixloop_prompt(prompt: object) -> bool:
    return isinstance(prompt, str) and prompt.lstrip().startswith(COMMAND_PREFIX)


def prompt_document(prompt: str, prompt_id: object, ts_ms: int) -> dict[str, Any]:
    """What is kept of a prompt: redacted (before the cut, so no secret is cut in half and let through),
    then at most MAX_PROMPT_BYTES of UTF-8."""
    from fixloop.core.redact import redact

    text = redact(prompt)
    data = text.encode("utf-8", "replace")
    doc: dict[str, Any] = {"prompt": text, "prompt_id": prompt_id, "ts_ms": ts_ms}
    if len(data) > MAX_PROMPT_BYTES:
        doc["prompt"] = data[:MAX_PROMPT_BYTES].decode("utf-8", "ignore")
        doc["truncated"] = True
    return doc


def store_prompt(payload: Mapping[str, Any]) -> str | None:
    """Keep the prompt of a `/fixloop:` command; the file written, or None when there is nothing to keep."""
    prompt = payload.get("prompt")
    if not is_fixloop_prompt(prompt):
        return None
    assert isinstance(prompt, str)
    session = session_of(payload)
    if session is None or not layout.is_session_id(session):
        fallback_warning(
            "INVALID_SESSION_ID",
            f"The /fixloop: prompt was not kept: session id {session!r} cannot name a file.",
            payload,
        )
        return None
    root = project_of(payload)
    target = layout.prompt_path(root, session)
    data = jsoncodec.dumps(prompt_document(prompt, payload.get("prompt_id"), now_ms()), ensure_ascii=False)
    from fixloop.store.atomic import write_atomic
    from fixloop.store.ignored import keep_out_of_git

    try:
        layout.require_own_dir_inside(root, layout.fixloop_dir(root))
    except FixloopError as error:
        fallback_warning(error.code, f"The /fixloop: prompt was not kept: {error.message}", payload)
        return None
    keep_out_of_git(layout.fixloop_dir(root))
    os.makedirs(os.path.dirname(target), exist_ok=True)  # the directory keeps the usual mode
    previous = os.umask(0o077)  # the file is created 0600: the prompt is the user's words
    try:
        write_atomic(target, data.encode("utf-8") + b"\n", durable=False)
    finally:
        os.umask(previous)
    return target


def main(stdin: BinaryIO | None = None) -> int:
    """The whole hook; never raises, prints nothing, returns 0."""
    payload: dict[str, Any] = {}
    try:
        payload = read_payload(stdin if stdin is not None else sys.stdin.buffer)
        store_prompt(payload)
    except Exception as error:  # fail open: a prompt is never held up by this hook
        fallback_warning(
            "HOOK_FAILED", f"fixloop hook UserPromptSubmit failed: {describe(error)}", payload or None
        )
    return 0
