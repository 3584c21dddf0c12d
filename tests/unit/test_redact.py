from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixloop.redact import REDACTED, redact, redact_value

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
