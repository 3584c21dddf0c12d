"""Mask secrets (API keys, tokens, passwords, private keys) in text and in JSON-like values.

The rules are in fixloop.core.secret_rules. Each rule runs only on a text that holds one of its markers,
and `re` itself (about 6 ms to import) is loaded only when a text may hold a secret: hooks redact every
event they write, and most events hold none.
"""

from __future__ import annotations

from fixloop.core.secret_rules import (
    KEY_NAME_WORDS,
    KEYED_ASSIGNMENT,
    KEYED_TOKEN,
    KEYED_VALUE,
    PREFIXED_RULES,
    SECRET_WORD,
    TOKEN_RULES,
    keyed_secret,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import Any

    Replacement = str | Callable[[re.Match[str]], str]

REDACTED = "[REDACTED]"

SECRET_KEY = r"[A-Za-z0-9_.-]*" + SECRET_WORD  # a whole key name that holds a secret

# The rules matched case-insensitively beyond ASCII (as re.IGNORECASE does) contain one of these in the text
# lowered after _IGNORECASE_EXTRAS (the non-ASCII characters that re.IGNORECASE also matches to `i` and
# `s`). tests/unit/core/test_redact.py holds the rules to this.
_IGNORECASE_MARKERS = ("bearer", "pass", "secret", "token", "key", "credential")
_IGNORECASE_EXTRAS = {0x130: "i", 0x131: "i", 0x17F: "s"}
_URL_MARKER = "://"
_ASSIGNMENT_MARKS = ("=", ":")

# (rule, its markers): every marker lower-case, looked for in the lowered text.
_RULE_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    *((rule_id, markers) for rule_id, markers, _pattern in TOKEN_RULES),
    *((rule_id, markers) for rule_id, markers, _pattern in PREFIXED_RULES),
    ("bearer", ("bearer",)),
    ("url-credentials", (_URL_MARKER,)),
    ("secret-assignment", ("pass", "secret", "token", "key", "credential")),
)
_MARKERS = tuple(dict.fromkeys(marker for _rule, markers in _RULE_MARKERS for marker in markers))


def _lowered(text: str) -> str:
    if "\u0130" in text or "\u0131" in text or "\u017f" in text:
        text = text.translate(_IGNORECASE_EXTRAS)
    return text.lower()


def _may_be_keyed(text: str, lowered: str) -> bool:
    """Whether a name with a key word may be assigned a value in `text` (the keyed-value rule)."""
    return any(mark in text for mark in _ASSIGNMENT_MARKS) and any(word in lowered for word in KEY_NAME_WORDS)


def _may_be_keyed_token(text: str, lowered: str) -> bool:
    """Whether a name with a key word may stand before a token in `text` (the keyed-token rule)."""
    return (" " in text or "\t" in text) and any(word in lowered for word in KEY_NAME_WORDS)


def may_hold_secret(text: str) -> bool:
    """False only when no redaction rule can match `text` (nor a key name `text`)."""
    lowered = _lowered(text)
    return (
        any(marker in lowered for marker in _MARKERS)
        or _may_be_keyed(text, lowered)
        or _may_be_keyed_token(text, lowered)
    )


class _KeyedValues:
    """The keyed-value rule: `sub` masks each value that `keyed_secret` says is one. What stands as a value
    may be a name given a secret itself (`KEY = "sentry_dsn: 3f9a..."`): then it stays, and the search goes
    on from where it starts rather than from its end as `re.sub` would. Each value is read at most twice."""

    def __init__(self, pattern: re.Pattern[str], masked_name: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.masked_name = masked_name  # matches after a name whose value is already masked

    def sub(self, _replacement: Replacement, text: str) -> str:
        parts: list[str] = []
        done = search = 0  # text[:done] is in parts; the next name is looked for from `search`
        while (match := self.pattern.search(text, search)) is not None:
            if self._value_is_a_name(text, match):
                search = match.start(3)  # past the name's first character: the search moves on
            elif keyed_secret(match.group(1), match.group(3)):
                parts += [text[done : match.start(3)], REDACTED]
                done = search = match.end(3)
            else:
                search = match.end(3)
        return "".join(parts) + text[done:]

    def _value_is_a_name(self, text: str, match: re.Match[str]) -> bool:
        """Whether what stands as the value of `match` is a name given a secret, or one already masked."""
        inner = self.pattern.match(text, match.start(3))
        if inner is not None and keyed_secret(inner.group(1), inner.group(3)):
            return True
        return self.masked_name.match(text, match.end(3)) is not None


if TYPE_CHECKING:
    Rule = tuple[re.Pattern[str] | _KeyedValues, Replacement]
_compiled: dict[str, Rule] = {}


def _rule(rule_id: str) -> Rule:
    """A rule compiled on first use."""
    found = _compiled.get(rule_id)
    if found is None:
        found = _compiled[rule_id] = _compile(rule_id)
    return found


def _compile(rule_id: str) -> Rule:
    import re

    for token_id, _markers, pattern in TOKEN_RULES:
        if token_id == rule_id:
            return re.compile(pattern, re.ASCII), REDACTED
    for prefixed_id, _markers, pattern in PREFIXED_RULES:
        if prefixed_id == rule_id:
            return re.compile(pattern, re.ASCII), r"\1" + REDACTED
    if rule_id == "bearer":
        return re.compile(
            r"\b(Bearer\s+)(?!\[REDACTED\])[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE
        ), r"\1" + REDACTED
    if rule_id == "url-credentials":
        return re.compile(r"(://[^:/\s@]+:)(?!\[REDACTED\])[^@\s/]+(@)"), r"\1" + REDACTED + r"\2"
    if rule_id == "secret-assignment":
        pattern = (
            # Anchored on the keyword, not the whole name: a prefix like `OPENAI_` stays as it is.
            r"(" + SECRET_WORD + r"\b"
            # optional closing quote of a JSON key, then : or = (or =>, :=, ::=)
            r"[\"']?\s*(?:=>|:{1,3}=|\?=|[:=])\s*"
            r"[\"']?)"  # optional opening quote of the value
            r"(?!\[REDACTED\]|[:=])[^\s\"'<>,;&)}\]]+"
        )
        return re.compile(pattern, re.IGNORECASE), r"\1" + REDACTED
    if rule_id == "keyed-token":
        return re.compile(KEYED_TOKEN, re.ASCII), _mask_keyed_token
    assert rule_id == "keyed-value", rule_id
    masked_name = re.compile(KEYED_ASSIGNMENT + re.escape(REDACTED))
    return _KeyedValues(re.compile(KEYED_VALUE, re.ASCII), masked_name), REDACTED


def _mask_keyed_token(match: re.Match[str]) -> str:
    name, space, token = match.group(1, 2, 3)
    return name + space + REDACTED if keyed_secret(name, token) else match.group(0)


# Order matters: whole blocks first, then recognisable token shapes, then the assignments (which skip
# values that an earlier rule already replaced).
_ORDER = (*(rule_id for rule_id, _markers in _RULE_MARKERS), "keyed-value", "keyed-token")


def _applicable(text: str, lowered: str) -> list[str]:
    # Each distinct marker looked for once (filter runs the loop in C), then the rules that have one of them.
    present = set(filter(lowered.__contains__, _MARKERS))
    found = (
        [rule_id for rule_id, markers in _RULE_MARKERS if not present.isdisjoint(markers)] if present else []
    )
    if _may_be_keyed(text, lowered):
        found.append("keyed-value")
    if _may_be_keyed_token(text, lowered):
        found.append("keyed-token")
    return found


def _token_rules() -> list[Rule]:
    """Every rule, compiled, in the order redact applies them."""
    return [_rule(rule_id) for rule_id in _ORDER]


def redact(text: str) -> str:
    lowered = _lowered(text)
    for rule_id in _applicable(text, lowered):
        pattern, replacement = _rule(rule_id)
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
    lowered = _lowered(key)
    if not any(marker in lowered for marker in _IGNORECASE_MARKERS):
        return False
    import re

    return re.fullmatch(SECRET_KEY, key, re.IGNORECASE) is not None
