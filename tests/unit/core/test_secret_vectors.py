"""Every literal true positive of gitleaks' rule tests is masked, and the false positives fixloop leaves in
clear stay so (secret_vectors.json; the texts are gitleaks' own test strings, fake secrets of each format).
tests/unit/workflows/test_secrets_in_sinks.py runs the same texts through every sink of a run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fixloop.core.redact import REDACTED, redact

VECTORS = json.loads((Path(__file__).parent / "secret_vectors.json").read_text(encoding="utf-8"))
TRUE_POSITIVES = [(rule, text) for rule, texts in VECTORS["true_positives"].items() for text in texts]
KEPT_IN_CLEAR = [
    (rule, text) for rule, texts in VECTORS["false_positives_in_clear"].items() for text in texts
]
# A word of a text: what a secret is made of, between spaces, quotes and assignment marks.
_WORD = re.compile(r"[^\s\"'`=:,;(){}\[\]<>]+")


def secret_of(text: str) -> str:
    """The longest word of `text` that redaction took out (a secret, or the part of it a rule masks)."""
    masked = redact(text)
    gone = [word for word in _WORD.findall(text) if word not in masked]
    return max(gone, key=len, default="")


def test_the_vectors_are_many() -> None:
    assert len(VECTORS["true_positives"]) >= 60 and len(TRUE_POSITIVES) >= 250
    assert len(KEPT_IN_CLEAR) >= 100


@pytest.mark.parametrize(
    ("rule", "text"), TRUE_POSITIVES, ids=[f"{rule}-{n}" for n, (rule, _t) in enumerate(TRUE_POSITIVES)]
)
def test_every_true_positive_is_masked(rule: str, text: str) -> None:
    masked = redact(text)
    assert REDACTED in masked, (rule, text)
    assert len(secret_of(text)) >= 6, (rule, text, masked)
    assert redact(masked) == masked  # masking twice changes nothing


@pytest.mark.parametrize(
    ("rule", "text"), KEPT_IN_CLEAR, ids=[f"{rule}-{n}" for n, (rule, _t) in enumerate(KEPT_IN_CLEAR)]
)
def test_false_positives_stay_in_clear(rule: str, text: str) -> None:
    assert redact(text) == text


def test_a_file_marker_is_not_a_secret_value() -> None:
    (texts,) = [entry["texts"] for entry in VECTORS["not_a_secret_value"].values()]
    assert [redact(text) for text in texts] == texts
