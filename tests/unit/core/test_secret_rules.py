"""The secret rules: each shape of each rule is masked wherever it stands; the prefilter never skips one."""

from __future__ import annotations

import re

import pytest
from helpers_imports import modules_loaded_by
from helpers_secrets import (
    KEYED_NAMES,
    SECRET_NAMES,
    SEPARATORS,
    keyed_token_texts,
    keyed_value_texts,
    prefixed_secrets,
    secret_assignment_texts,
    token_secrets,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fixloop.core import redact as redact_module
from fixloop.core.redact import REDACTED, may_hold_secret, redact, redact_value
from fixloop.core.secret_rules import (
    PREFIXED_RULES,
    SERVICE_KEY_WORDS,
    TOKEN_RULES,
    keyed_secret,
    shannon_entropy,
)

RULE_IDS = [rule_id for rule_id, _markers, _pattern in (*TOKEN_RULES, *PREFIXED_RULES)]


def test_rule_ids_are_unique_and_markers_lower_case() -> None:
    assert len(RULE_IDS) == len(set(RULE_IDS))
    for _rule_id, markers, _pattern in (*TOKEN_RULES, *PREFIXED_RULES):
        assert markers
        assert all(marker == marker.lower() for marker in markers)


def test_no_marker_is_part_of_the_mask() -> None:
    """Rules are chosen on the text as it was; masking must not make a marker appear."""
    lowered = REDACTED.lower()
    assert [m for _r, markers, _p in (*TOKEN_RULES, *PREFIXED_RULES) for m in markers if m in lowered] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc ok", "stripe [REDACTED] ok"),
        ("rk_test_51H8abcdefghijklmnop", "[REDACTED]"),
        ("maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "maps key [REDACTED]"),
        ("git clone with glpat-xxxxxxxxxxxxxxxxxxxx1234", "git clone with [REDACTED]"),
        ("//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789", None),
        ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"),
        (
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50u"
            "SRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net",
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED];"
            "EndpointSuffix=core.windows.net",
        ),
        ("HF_TOKEN hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "HF_TOKEN [REDACTED]"),
        ("xoxp-1234567890-1234567890-1234567890-abcdefabcdefabcdefabcdefabcdefab", "[REDACTED]"),
        (
            "vault hvs.CAESIJlWh0FWRl3fyI2yd1adBnXrXuk4Sq0EOXWZzbQs1R0gGh4KHGh2cy5YQ1lxblhWWHlsVnhRZ3JW"
            "bEFhRTZuN0w",
            "vault [REDACTED]",
        ),
        ("curl -u admin:s3cr3tpass https://x", "curl -u [REDACTED] https://x"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED]"),
        ("https://acct.blob.core.windows.net/c?sv=2022&sig=AbCdEf0123456789AbCdEf%2B%3D", None),
        ("DATADOG_APP_KEY=9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d", "DATADOG_APP_KEY=[REDACTED]"),
        ('"heroku_api_key": "01234567-89ab-cdef-0123-456789abcdef"', '"heroku_api_key": "[REDACTED]"'),
        ("cache_key: user-profile", "cache_key: user-profile"),
        ("The primary key is id", "The primary key is id"),
        ("api docs: see https://example.com/v1/users", "api docs: see https://example.com/v1/users"),
        ("basic usage of the module", "basic usage of the module"),
        ("git push -u origin main", "git push -u origin main"),
        # a value that is a name given a secret itself
        ('KEY = "sentry_dsn: 3f9aXk29dLq0PzR7"', 'KEY = "sentry_dsn: [REDACTED]"'),
        ('KEY = "app.sendbird.value: v0000011122345678"', 'KEY = "app.sendbird.value: [REDACTED]"'),
        ("auth=Xf9aXk29dLq0PzR7:restrestrest", "auth=[REDACTED]:restrestrest"),
        # a token after a key word, in prose
        (
            "the secret key wJalrXUtnFEMI/K7MDENG/bPxRfiCYq8T3kVb1dZ0 is set",
            "the secret key [REDACTED] is set",
        ),
        ("commit key 5f4dcc3b5aa765d61d8327deb882cf99", "commit key [REDACTED]"),
        ("key performance indicator 2024", "key performance indicator 2024"),
        ("token validation failed for user42 in module", "token validation failed for user42 in module"),
        (
            "the access log at /var/log/nginx/access2024.log",
            "the access log at /var/log/nginx/access2024.log",
        ),
    ],
)
def test_examples(text: str, expected: str | None) -> None:
    masked = redact(text)
    if expected is None:  # the secret tail is gone, whatever the rule kept before it
        assert REDACTED in masked
        assert text.rsplit("=", 1)[-1] not in masked
    else:
        assert masked == expected
    assert redact(masked) == masked


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_token_rule_is_masked_wherever_it_stands(data: st.DataObject) -> None:
    rule_id, secret = data.draw(token_secrets())
    before = data.draw(st.sampled_from(SEPARATORS))
    after = data.draw(st.sampled_from(SEPARATORS))
    text = f"found{before}{secret}{after}in the file"
    masked = redact(text)
    assert secret not in masked, rule_id
    assert REDACTED in masked
    assert redact(masked) == masked


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(prefixed_secrets())
def test_every_prefixed_rule_masks_what_follows_its_prefix(found: tuple[str, str, str]) -> None:
    rule_id, text, secret = found
    masked = redact(f"run: {text} now")
    assert secret not in masked, rule_id
    assert REDACTED in masked


@given(secret_assignment_texts())
def test_a_value_assigned_to_a_secret_name_is_masked(found: tuple[str, str]) -> None:
    text, value = found
    masked = redact(text)
    assert value not in masked
    assert redact_value({"note": text}) == {"note": masked}


@given(keyed_value_texts())
def test_a_random_value_assigned_to_a_key_name_is_masked(found: tuple[str, str]) -> None:
    text, value = found
    assert value not in redact(text)


@settings(deadline=None)
@given(keyed_token_texts())
def test_a_random_token_after_a_key_name_is_masked(found: tuple[str, str]) -> None:
    text, token = found
    masked = redact(text)
    assert token not in masked
    assert masked.startswith("the ") and masked.endswith(" is here")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key=" * 50_000, "key=" * 50_000),
        ("keyyyyyyyyy: " * 20_000, "keyyyyyyyyy: " * 20_000),
        ("auth: keyyyyyyyyy: " * 10_000, "auth: keyyyyyyyyy: " * 10_000),
        ("api_key: " + "k=" * 100_000, "api_key: [REDACTED]"),
        ("secret " + "a1B2c3D4e5F6g7H8" * 10_000, "secret [REDACTED]"),
    ],
    ids=["assignments", "names", "nested-names", "long-value", "long-token"],
)
def test_hostile_keyed_texts_are_read_in_bounded_time(text: str, expected: str) -> None:
    """A value that could be a name is read again, as a name, never more: a search that went back over
    each value would take minutes on these, not milliseconds."""
    assert redact(text) == expected


@given(
    st.sampled_from(KEYED_NAMES),
    st.sampled_from(["=", ": ", "=> "]),
    st.text(alphabet="abcdefghij", min_size=10, max_size=30),
)
def test_a_plain_value_assigned_to_a_key_name_stays(name: str, separator: str, value: str) -> None:
    assume(not any(word in name.lower() for word in ("pass", "secret", "token", "credential")))
    assume(not re.search(r"(?i)(?:api[_-]?key|apikey|access[_-]?key|account[_-]?key)$", name))
    assume(shannon_entropy(value) < 3.0)
    text = f"{name}{separator}{value}"
    assert redact(text) == text


def test_keyed_secret_asks_less_of_a_named_service() -> None:
    value = "a1b2c3d4e5a1b2c3d4e5"  # 10 characters, each twice: 3.32 bits each
    assert 3.0 <= shannon_entropy(value) < 3.5
    assert keyed_secret("SENTRY_KEY", value)
    assert not keyed_secret("user_name", value)
    assert {word for word in SERVICE_KEY_WORDS if not keyed_secret(f"{word}_id", value)} == set()


# ---- the prefilter ----------------------------------------------------------------------------------------


def redact_without_prefilter(text: str) -> str:
    for pattern, replacement in redact_module._token_rules():
        text = pattern.sub(replacement, text)
    return text


FRAGMENTS = [
    *(marker for _r, markers, _p in (*TOKEN_RULES, *PREFIXED_RULES) for marker in markers),
    *(marker.upper() for _r, markers, _p in TOKEN_RULES for marker in markers),
    *SECRET_NAMES[:6],
    *KEYED_NAMES[:6],
    "=",
    ": ",
    '"',
    " ",
    "/",
    "-",
    "_",
    ".",
    "0123456789abcdef0123456789abcdef",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789",
]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=10).map("".join))
def test_the_prefilter_never_skips_a_text_some_rule_changes(text: str) -> None:
    if redact_without_prefilter(text) != text:
        assert may_hold_secret(text)
    assert redact(text) == redact_without_prefilter(text)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(token_secrets())
def test_every_token_holds_a_marker_of_its_rule(found: tuple[str, str]) -> None:
    rule_id, secret = found
    (markers,) = [markers for r, markers, _p in TOKEN_RULES if r == rule_id]
    assert any(marker in secret.lower() for marker in markers), rule_id
    assert may_hold_secret(secret)


def test_plain_text_and_rule_tables_load_no_regular_expressions() -> None:
    code = """
from fixloop.core.redact import redact, redact_value
assert redact("Review src/app.py for quality") == "Review src/app.py for quality"
assert redact_value({"phase": "phase_0", "n": 3}) == {"phase": "phase_0", "n": 3}
"""
    assert modules_loaded_by(code, ("re", "typing", "collections", "dataclasses")) == []
