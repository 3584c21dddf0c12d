"""Mask secrets (API keys, tokens, passwords, private keys) in text and in JSON-like values."""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False  # hooks import this module: typing is not loaded at run time
if TYPE_CHECKING:
    from typing import Any

REDACTED = "[REDACTED]"

# Key names whose value is a secret. The keyword must end the name, so `max_tokens` or
# `token_count` stay readable while `GITHUB_TOKEN`, `db_password` and `x-api-key` do not.
_SECRET_WORD = (
    r"(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey"
    r"|access[_-]?key|secret[_-]?key|private[_-]?key|credentials?)"
)
SECRET_KEY = r"[A-Za-z0-9_.-]*" + _SECRET_WORD  # a whole key name that holds a secret


# Order matters: whole blocks first, then recognisable token shapes, then generic assignments
# (which skip values that an earlier rule already replaced).
@functools.cache
def _token_rules() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Compiled on first use: hooks import this module on every subagent call and rarely redact."""
    return (
        (
            re.compile(
                r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
                # an unterminated block runs to the end
                r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
                re.DOTALL,
            ),
            REDACTED,
        ),
        (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"), REDACTED),
        (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), REDACTED),
        (re.compile(r"\bgh[posur]_[A-Za-z0-9]{20,}"), REDACTED),
        (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), REDACTED),
        (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
        (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
        (re.compile(r"\b(Bearer\s+)(?!\[REDACTED\])[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE), r"\1" + REDACTED),
        (re.compile(r"(://[^:/\s@]+:)(?!\[REDACTED\])[^@\s/]+(@)"), r"\1" + REDACTED + r"\2"),
        (
            re.compile(
                # Anchored on the keyword, not the whole name: a prefix like `OPENAI_` stays as it is.
                r"(" + _SECRET_WORD + r"\b"
                r"[\"']?\s*[:=]\s*"  # optional closing quote of a JSON key, then : or =
                r"[\"']?)"  # optional opening quote of the value
                r"(?!\[REDACTED\])[^\s\"'<>,;&)}\]]+",
                re.IGNORECASE,
            ),
            r"\1" + REDACTED,
        ),
    )


def redact(text: str) -> str:
    for pattern, replacement in _token_rules():
        text = pattern.sub(replacement, text)
    return text


def redact_value(value: Any) -> Any:
    """Return a copy of `value` with every string redacted and every secret-named string field masked."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        result: dict[Any, Any] = {}
        for key, item in value.items():
            if (
                isinstance(key, str)
                and isinstance(item, str)
                and item
                and re.fullmatch(SECRET_KEY, key, re.IGNORECASE)
            ):
                result[key] = REDACTED
            else:
                result[key] = redact_value(item)
        return result
    if isinstance(value, (list, tuple)):
        return [redact_value(item) for item in value]
    return value
