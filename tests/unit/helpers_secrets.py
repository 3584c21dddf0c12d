"""Hypothesis strategies of secrets, one for each redaction rule, and the places they can stand in a text."""

from __future__ import annotations

import re

from hypothesis import assume
from hypothesis import strategies as st

from fixloop.core.secret_rules import KEY_NAME_WORDS, PREFIXED_RULES, TOKEN_RULES, keyed_secret

# What may stand right before or after a token in a text (none of them is part of a token).
SEPARATORS = [" ", "\n", "\t", '"', "'", "`", "(", ")", "[", "]", "{", "}", "<", ">", ",", ";", ":", "|", "/"]

SECRET_NAMES = [
    "password",
    "DB_PASSWORD",
    "client_secret",
    "GITHUB_TOKEN",
    "api_key",
    "x-api-key",
    "AccountKey",
    "SharedAccessKey",
    "aws_secret_access_key",
    "credentials",
    "passphrase",
    "private_key",
]
KEYED_NAMES = [
    "STRIPE_KEY",
    "auth",
    "DD_APP_KEY",
    "slack_signing_key",
    "db_pwd",
    "apiId",
    "sentry_dsn",
    "TWITTER_CONSUMER",
    "datadog",
    "heroku_id",
    "access",
    "OKTA_CLIENT",
]
_PRINTABLE = re.compile(r"[\x20-\x7e\n]*")
_TOKEN_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _printable(text: str) -> bool:
    return _PRINTABLE.fullmatch(text) is not None


@st.composite
def _private_key(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", "PGP "]))
    block = " BLOCK" if kind == "PGP " else ""
    lines = draw(st.lists(st.text(alphabet=_TOKEN_ALPHABET + "+/=", min_size=1, max_size=64), max_size=5))
    end = draw(st.sampled_from([f"\n-----END {kind}PRIVATE KEY{block}-----", ""]))
    return f"-----BEGIN {kind}PRIVATE KEY{block}-----\n" + "\n".join(lines) + end


def token_secrets(rule_ids: list[str] | None = None) -> st.SearchStrategy[tuple[str, str]]:
    """(rule id, a secret of that shape) for every rule of TOKEN_RULES (or those of `rule_ids`)."""
    strategies = []
    for rule_id, _markers, pattern in TOKEN_RULES:
        if rule_ids is not None and rule_id not in rule_ids:
            continue
        shapes = (
            _private_key()
            if rule_id == "private-key"
            else st.from_regex(re.compile(pattern, re.ASCII), fullmatch=True).filter(_printable)
        )
        strategies.append(shapes.map(lambda secret, rule_id=rule_id: (rule_id, secret)))
    return st.one_of(strategies)


# What each rule of PREFIXED_RULES masks, after a prefix it keeps: {secret} stands for the secret.
PREFIXED_SHAPES = {
    "nuget-config-password": [
        '<add key="Password" value="{secret}" />',
        '<add key="ClearTextPassword"  value="{secret}"/>',
    ],
    "azure-sas-signature": [
        "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&sig={secret}",
        "?sig={secret}",
    ],
    "basic-auth": ["Authorization: Basic {secret}", "basic\t{secret}"],
    "curl-user": ["curl -u admin:{secret} https://x", "curl --user=ci:{secret}", "-u 'bob:{secret}'"],
    "sidekiq-credentials": [
        "BUNDLE_GEMS__CONTRIBSYS__COM: {secret}",
        'export BUNDLE_ENTERPRISE__CONTRIBSYS__COM="{secret}"',
    ],
    "authorization-header": [
        '-H "Authorization: {secret}"',
        "authorization={secret}",
        "Authorization: Token {secret}",
    ],
    "secret-name-argument": ['getenv("API_TOKEN", "{secret}")', "config.get('db_password', '{secret}')"],
}
# A rule whose secret has a fixed shape: drawn from it as it is.
_SECRET_SHAPES = {"sidekiq-credentials": r"[a-f0-9]{8}:[a-f0-9]{8}"}
_SECRET_ALPHABETS = {
    "nuget-config-password": _TOKEN_ALPHABET + "!#$%&()*+,-./:;<=>?@[]^_{|}~ ",
    "azure-sas-signature": _TOKEN_ALPHABET + "%+/",
    "basic-auth": _TOKEN_ALPHABET + "+/",
    "curl-user": _TOKEN_ALPHABET + "!#$%&()*+,-./:;<=>?@[]^_{|}~",
    "authorization-header": _TOKEN_ALPHABET + "+/=._~-",
    "secret-name-argument": _TOKEN_ALPHABET + "+/=._~-",
}


@st.composite
def prefixed_secrets(draw: st.DrawFn, rule_id: str | None = None) -> tuple[str, str, str]:
    """(rule id, a text of that rule's shape, the secret in it: what follows the prefix kept in clear), for
    any rule of PREFIXED_RULES or the one named."""
    rules = [rule for rule in PREFIXED_RULES if rule_id is None or rule[0] == rule_id]
    rule_id, _markers, pattern = draw(st.sampled_from(rules))
    if rule_id in _SECRET_SHAPES:
        secret = draw(st.from_regex(_SECRET_SHAPES[rule_id], fullmatch=True))
    else:
        secret = draw(st.text(alphabet=_SECRET_ALPHABETS[rule_id], min_size=20, max_size=40))
        secret = secret[:10] + "7" + secret[10:]  # a base64 credential holds a digit
    text = draw(st.sampled_from(PREFIXED_SHAPES[rule_id])).format(secret=secret)
    match = re.search(pattern, text, re.ASCII)
    assert match is not None and text.find(secret) >= match.end(1), (rule_id, text)
    return rule_id, text, secret


def _values(min_size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=_TOKEN_ALPHABET, min_size=min_size, max_size=40).map(lambda body: "v" + body)


@st.composite
def secret_assignment_texts(draw: st.DrawFn) -> tuple[str, str]:
    """(`password = "VALUE"` in one of its forms, VALUE): any value of a secret name is masked."""
    name = draw(st.sampled_from(SECRET_NAMES))
    value = draw(_values(8))
    form = draw(
        st.sampled_from(
            ["{n}={v}", "{n}: {v}", '"{n}": "{v}"', "{n} = '{v}'", "export {n}={v} && make", "{n} => {v}"]
        )
    )
    return form.format(n=name, v=value), value


@st.composite
def keyed_value_texts(draw: st.DrawFn) -> tuple[str, str]:
    """(`NAME = VALUE` for a key name and a random-looking value, VALUE)."""
    word = draw(st.sampled_from(KEY_NAME_WORDS))
    name = draw(st.sampled_from(["{w}", "MY_{w}", "{w}_id", "app.{w}.value", "{w}-Key"])).format(w=word)
    value = draw(_values(16))
    assume(keyed_secret(name, value))
    form = draw(st.sampled_from(["{n}={v}", "{n}: {v}", '"{n}": "{v}"', "{n} := '{v}'"]))
    return form.format(n=name, v=value), value


@st.composite
def keyed_token_texts(draw: st.DrawFn) -> tuple[str, str]:
    """(`the NAME TOKEN is here` in prose, TOKEN): a key name, white space, a random token of letters and
    digits (the keyed-token rule)."""
    word = draw(st.sampled_from(KEY_NAME_WORDS))
    name = draw(st.sampled_from(["{w}", "MY_{w}", "{w}_id"])).format(w=word)
    body = draw(st.text(alphabet=_TOKEN_ALPHABET, min_size=15, max_size=40))
    token = "v" + body[:6] + "7" + body[6:]  # a letter and a digit, whatever was drawn
    assume(keyed_secret(name, token))
    space = draw(st.sampled_from([" ", "  ", "\t"]))
    return f"the {name}{space}{token} is here", token
