"""Issue fingerprints and stable ids across rounds."""

from __future__ import annotations

from typing import Any

import pytest
from helpers_review import issue

from fixloop.review.identity import (
    LINE_TOLERANCE,
    Candidate,
    IssueRegistry,
    fingerprint,
    format_id,
    line_bucket,
    normalize_description,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Missing  null check on `user`.", "missing null check on `id`"),
        ("Timeout of 30 seconds is too short", "timeout of 0 seconds is too short"),
        ('Log message "failed to load" is misleading', 'log message "s" is misleading'),
        ("Use 'utf-8' here", 'use "s" here'),
        ("Don't swallow the reviewer's error", "don't swallow the reviewer's error"),
        ("Version 1.2.3 pinned\n\tin  two places!", "version 0 pinned in two places"),
    ],
)
def test_normalize_description(text: str, expected: str) -> None:
    assert normalize_description(text) == expected


def test_same_finding_in_other_words_has_the_same_fingerprint() -> None:
    first = issue("A", 12, "Missing await on `save()` (line 12)")
    second = issue("B", 17, "missing await on  `persist()` (line 17).", file="./src/app.py", category=" Bug ")
    assert line_bucket(12) == line_bucket(17) == 1
    assert fingerprint(first) == fingerprint(second)


@pytest.mark.parametrize(
    "change",
    [
        {"file": "src/other.py"},
        {"category": "style"},
        {"description": "Missing await on a different thing"},
        {"line": 25},  # another 10-line bucket
    ],
)
def test_fingerprint_changes_with_identity(change: dict[str, Any]) -> None:
    base = issue("A", 12, "Missing await on `save()`")
    assert fingerprint(base) != fingerprint({**base, **change})


def test_fingerprint_is_stable_text() -> None:
    value = fingerprint(issue("A", 12, "Missing await on `save()`"))
    assert len(value) == 20 and all(ch in "0123456789abcdef" for ch in value)
    assert value == fingerprint(issue("Z", 11, "missing AWAIT on `x`"))


def candidates(*items: dict[str, Any]) -> list[Candidate]:
    return [Candidate.of(item) for item in items]


def test_ids_in_first_seen_order_and_exact_match_first() -> None:
    registry = IssueRegistry()
    assert registry.assign(candidates(issue("a", 5, "one"), issue("b", 50, "two")), 1) == ["FL-001", "FL-002"]
    again = registry.assign(
        candidates(issue("c", 120, "three"), issue("b", 52, "two"), issue("a", 6, "one")), 2
    )
    assert again == ["FL-003", "FL-002", "FL-001"]
    assert registry.known["FL-001"].first_seen_round == 1
    assert registry.known["FL-001"].last_seen_round == 2
    assert registry.known["FL-003"].first_seen_round == 2


@pytest.mark.parametrize(
    ("shift", "same"), [(3, True), (-8, True), (LINE_TOLERANCE, True), (LINE_TOLERANCE + 1, False)]
)
def test_line_shift_tolerance(shift: int, same: bool) -> None:
    registry = IssueRegistry()
    [first] = registry.assign(candidates(issue("a", 40, "Unclosed file handle")), 1)
    [second] = registry.assign(candidates(issue("a", 40 + shift, "Unclosed file handle")), 2)
    assert (second == first) is same


def test_nearest_line_wins_and_each_id_is_used_once_per_round() -> None:
    registry = IssueRegistry()
    ids = registry.assign(candidates(issue("a", 10, "dup"), issue("b", 30, "dup")), 1)
    assert ids == ["FL-001", "FL-002"]
    # both moved by 5 lines into other buckets: each keeps its own id (nearest line first)
    moved = registry.assign(candidates(issue("b", 35, "dup"), issue("a", 15, "dup")), 2)
    assert moved == ["FL-002", "FL-001"]
    # three where there were two: the farthest one is new
    three = registry.assign(
        candidates(issue("a", 16, "dup"), issue("c", 17, "dup"), issue("b", 36, "dup")), 3
    )
    assert three == ["FL-001", "FL-003", "FL-002"]


def test_registry_round_trips_through_json() -> None:
    registry = IssueRegistry()
    registry.assign(candidates(issue("a", 10, "one"), issue("b", 20, "two")), 1)
    restored = IssueRegistry.from_json(registry.to_json())
    assert restored.assign(candidates(issue("x", 70, "new"), issue("b", 21, "two")), 2) == [
        "FL-003",
        "FL-002",
    ]
    assert restored.next_number == 4


def test_id_format_grows_past_three_digits() -> None:
    assert (format_id(7), format_id(1234)) == ("FL-007", "FL-1234")
