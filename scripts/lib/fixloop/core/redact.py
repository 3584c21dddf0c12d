"""Mask secrets (API keys, tokens, passwords, private keys) in text and in JSON-like values."""

from __future__ import annotations

# Hooks redact every event they write, and most events hold no secret: `re` (about 6 ms to import)
# is loaded only when a cheap substring test says that a rule might match.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

REDACTED = "[REDACTED]"

# Key names whose value is a secret. The keyword must end the name, so `max_tokens` or
# `token_count` stay readable while `GITHUB_TOKEN`, `db_password` and `x-api-key` do not.
_SECRET_WORD = (
    r"(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey"
    r"|access[_-]?key|secret[_-]?key|private[_-]?key|credentials?)"
)
SECRET_KEY = r"[A-Za-z0-9_.-]*" + _SECRET_WORD  # a whole key name that holds a secret


# Every match of a rule below contains one of these. The case-sensitive ones are looked for as they
# are; the others in the text lowered after _IGNORECASE_EXTRAS (the non-ASCII characters that
# re.IGNORECASE also matches to `i` and `s`). tests/unit/test_redact.py holds the rules to this.
_CASE_SENSITIVE_MARKERS = (
    "-----BEGIN",
    "eyJ",
    "sk-",
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "ghr_",
    "github_pat_",
    "AKIA",
    "ASIA",
    "xox",
    "://",
)
_IGNORECASE_MARKERS = ("bearer", "pass", "secret", "token", "key", "credential")
_IGNORECASE_EXTRAS = {0x130: "i", 0x131: "i", 0x17F: "s"}


def may_hold_secret(text: str) -> bool:
    """False only when no redaction rule can match `text` (nor a key name `text`)."""
    if any(marker in text for marker in _CASE_SENSITIVE_MARKERS):
        return True
    if "\u0130" in text or "\u0131" in text or "\u017f" in text:
        text = text.translate(_IGNORECASE_EXTRAS)
    lowered = text.lower()
    return any(marker in lowered for marker in _IGNORECASE_MARKERS)


_rules: list[tuple[re.Pattern[str], str]] = []


def _token_rules() -> list[tuple[re.Pattern[str], str]]:
    """Compiled on first use."""
    if not _rules:
        _rules.extend(_compile_rules())
    return _rules


# Order matters: whole blocks first, then recognisable token shapes, then generic assignments
# (which skip values that an earlier rule already replaced).
def _compile_rules() -> tuple[tuple[re.Pattern[str], str], ...]:
    import re

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
    if not may_hold_secret(text):
        return text
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
            if isinstance(key, str) and isinstance(item, str) and item and _is_secret_key(key):
                result[key] = REDACTED
            else:
                result[key] = redact_value(item)
        return result
    if isinstance(value, (list, tuple)):
        return [redact_value(item) for item in value]
    return value


def _is_secret_key(key: str) -> bool:
    if not may_hold_secret(key):
        return False
    import re

    return re.fullmatch(SECRET_KEY, key, re.IGNORECASE) is not None
