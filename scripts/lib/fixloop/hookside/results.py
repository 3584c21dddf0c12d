"""A finished agent call as the hooks report it: the usage Claude Code measured, and the one line the
caller reads instead of the agent's answer (the answer itself stays in the engine)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage_of(response: Mapping[str, Any]) -> dict[str, Any]:
    """`usage` (the token counts among USAGE_KEYS that are integers), `total_tokens`, `model` (the model
    that ran) and `tool_uses` of a foreground Agent tool response; None for what it does not say."""
    reported = response.get("usage")
    reported = reported if isinstance(reported, dict) else {}
    model = response.get("resolvedModel")
    return {
        "usage": {key: reported[key] for key in USAGE_KEYS if _int(reported.get(key)) is not None},
        "total_tokens": _int(response.get("totalTokens")),
        "model": model if isinstance(model, str) and model else None,
        "tool_uses": _int(response.get("totalToolUseCount")),
    }


def result_line(agent: str, verdict: Mapping[str, Any] | None, run_id: str) -> str:
    """What became of the agent's answer, from the verdict its SubagentStop hook stored, e.g.
    `code-reviewer: recorded, 3 issues (run ab12cd34)`."""
    valid = verdict.get("valid") if verdict is not None else None
    error = verdict.get("error") if verdict is not None else None
    if valid is True:
        issues = _int(verdict.get("issues")) if verdict is not None else None
        what = "recorded" if issues is None else f"recorded, {issues} issue{'' if issues == 1 else 's'}"
    elif valid is False:
        what = f"answer refused: {error or 'CONTRACT_VIOLATION'}"
    elif isinstance(error, str) and error:
        what = f"no answer recorded: {error}"
    else:
        what = "no answer recorded"
    return f"{agent}: {what} (run {run_id})"
