from __future__ import annotations

import re
import sys

import pytest
from helpers_imports import modules_loaded_by
from hypothesis import given
from hypothesis import strategies as st

from fixloop.core import redact as redact_module
from fixloop.core.redact import REDACTED, SECRET_KEY, may_hold_secret, redact, redact_value

GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nq8xZ\n-----END RSA PRIVATE KEY-----"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv end", "key [REDACTED] end"),
        ("openai sk-proj-AbCdEfGhIjKlMnOpQrSt1234", "openai [REDACTED]"),
        (f"push with {GITHUB_TOKEN}", "push with [REDACTED]"),
        (
            "gho_abcdefghijklmnopqrstuvwxyz0123456789 and ghs_abcdefghijklmnopqrstuvwxyz",
            "[REDACTED] and [REDACTED]",
        ),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED]"),
        ("aws AKIAIOSFODNN7EXAMPLE ok", "aws [REDACTED] ok"),
        ("slack xoxb-1234567890-abcdefghij", "slack [REDACTED]"),
        ("Authorization: Bearer abc.def.ghi-123", "Authorization: Bearer [REDACTED]"),
        ("api_key=abc123", "api_key=[REDACTED]"),
        ("OPENAI_API_KEY=sk-AbCdEfGhIjKlMnOpQrSt", "OPENAI_API_KEY=[REDACTED]"),
        ("export GITHUB_TOKEN=abc&& make", "export GITHUB_TOKEN=[REDACTED]&& make"),
        ('{"password": "hunter2", "user": "bob"}', '{"password": "[REDACTED]", "user": "bob"}'),
        ("db_password = 's3cr3t';", "db_password = '[REDACTED]';"),
        ("client_secret: xyz", "client_secret: [REDACTED]"),
        ("x-api-key: abc123", "x-api-key: [REDACTED]"),
        ("SECRET_ACCESS_KEY=wJalrXUtnFEMI", "SECRET_ACCESS_KEY=[REDACTED]"),
        (
            "git clone https://bob:pa55w0rd@example.com/r.git",
            "git clone https://bob:[REDACTED]@example.com/r.git",
        ),
        (f"token {JWT} end", "token [REDACTED] end"),
        (f"before\n{PEM}\nafter", "before\n[REDACTED]\nafter"),
        ("-----BEGIN PRIVATE KEY-----\nMIIE unterminated", "[REDACTED]"),
    ],
)
def test_secrets_are_masked(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=4096 token_count: 3",
        "The password policy requires 12 characters.",
        "sk-short",
        "task-abcdefghijklmnopqrstuvwxyz",
        "AKIA-not-a-key",
        "Bearer tokens",
        "phase_0 | success | 12333ms",
        "问题收集与分类",
        "api_key=[REDACTED]",
    ],
)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "text", ["api_key=abc123", f"Bearer {GITHUB_TOKEN}", '"password": "x"', PEM, "https://u:p@h/x"]
)
def test_redaction_is_idempotent(text: str) -> None:
    once = redact(text)
    assert once != text
    assert redact(once) == once


def test_redact_value_walks_nested_structures() -> None:
    value = {
        "api_key": "abc",
        "token": "",
        "max_tokens": 4096,
        "nested": [{"password": "x", "note": f"use {GITHUB_TOKEN}"}, ("sk-AbCdEfGhIjKlMnOpQrSt", 3)],
        "count": 2,
        "flag": None,
    }
    assert redact_value(value) == {
        "api_key": REDACTED,
        "token": "",
        "max_tokens": 4096,
        "nested": [{"password": REDACTED, "note": "use [REDACTED]"}, [REDACTED, 3]],
        "count": 2,
        "flag": None,
    }
    assert value["api_key"] == "abc"  # the input is not modified


def test_redact_value_of_scalars() -> None:
    assert redact_value("token=abc") == "token=[REDACTED]"
    assert redact_value(7) == 7
    assert redact_value(None) is None


@given(
    prefix=st.text(alphabet=" \n\t,;()[]{}\"'<>", max_size=20),
    body=st.text(
        alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=36, max_size=40
    ),
    suffix=st.text(alphabet=" \n\t,;()[]{}\"'<>", max_size=20),
)
def test_a_github_token_never_survives(prefix: str, body: str, suffix: str) -> None:
    token = "ghp_" + body
    result = redact(prefix + token + suffix)
    assert token not in result
    assert result == prefix + REDACTED + suffix


@given(st.text(alphabet="abcdefghij .,;!?()\n\t问题"))
def test_text_without_secret_shapes_is_unchanged(text: str) -> None:
    assert redact(text) == text


# ---- the substring prefilter: redact skips `re` only where no rule can match ----------------------

# Pieces that build texts near every rule's edge: markers, look-alike letters that re.IGNORECASE
# equates with ASCII ones, separators and token bodies.
FRAGMENTS = [
    "Bearer ",
    "bEaReR\t",
    "sk-",
    "ghp_",
    "ghs_",
    "github_pat_",
    "AKIA",
    "ASIA",
    "xoxb-",
    "eyJ",
    ".",
    "://",
    "u:",
    "@",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "password",
    "PASSWD",
    "pa\u017f\u017fphrase",
    "\u017fecret",
    "tok",
    "en",
    "TOKEN",
    "api_",
    "key",
    "\u212aEY",
    "credent",
    "\u0131al",
    "\u0130AL",
    "s",
    "=",
    ": ",
    '"',
    " ",
    "\n",
    "ABCDEFGHIJKLMNOP0123456789abcdef",
    "0123456789ABCDEF",
    "x",
]


def redact_without_prefilter(text: str) -> str:
    for pattern, replacement in redact_module._token_rules():
        text = pattern.sub(replacement, text)
    return text


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join))
def test_the_prefilter_never_skips_a_text_some_rule_changes(text: str) -> None:
    if redact_without_prefilter(text) != text:
        assert may_hold_secret(text)
    assert redact(text) == redact_without_prefilter(text)


@given(st.lists(st.sampled_from([*FRAGMENTS, "_", "-", "A", "9"]), min_size=1, max_size=6).map("".join))
def test_the_prefilter_never_skips_a_secret_key_name(key: str) -> None:
    if re.fullmatch(SECRET_KEY, key, re.IGNORECASE):
        assert may_hold_secret(key)
        assert redact_value({key: "value"}) == {key: REDACTED}


def test_the_prefilter_knows_every_letter_that_ignorecase_equates_with_its_markers() -> None:
    """Every character that re.IGNORECASE matches to a letter of a case-insensitive marker still makes
    the marker, whatever this interpreter's Unicode tables say."""
    every_character = "".join(map(chr, range(sys.maxunicode + 1)))
    for marker in redact_module._IGNORECASE_MARKERS:
        for index, letter in enumerate(marker):
            for match in re.finditer(re.escape(letter), every_character, re.IGNORECASE):
                variant = marker[:index] + match.group() + marker[index + 1 :]
                assert may_hold_secret(f"x{variant}y"), (marker, hex(ord(match.group())))


def test_plain_text_is_redacted_without_loading_re() -> None:
    code = """
from fixloop.core.redact import redact_value
event = {"input_summary": "Review src/app.py for quality", "n": 3}
assert redact_value(event) == event
"""
    assert modules_loaded_by(code, ("re",)) == []
