"""Real-looking pairs of findings, each the same finding or not, and why; every place that decides identity
(grouping within a round, ids across rounds, the baseline) agrees with the table."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
from helpers_identity import assert_identity
from helpers_review import issue

from fixloop.review.identity import Candidate, group_reports


class Pair(NamedTuple):
    first: dict[str, Any]
    second: dict[str, Any]
    same: bool
    reason: str


def pair(
    line: int, text: str, other_line: int, other_text: str, same: bool, reason: str, **other: Any
) -> Pair:
    return Pair(issue("A-1", line, text), issue("B-1", other_line, other_text, **other), same, reason)


PAIRS = [
    pair(5, "Parameter x is never used", 6, "Parameter y is never used", False, "one-letter variables"),
    pair(
        1,
        "`user_id` is never validated before use",
        3,
        "`email` is never validated before use",
        False,
        "issue 19: another identifier, two lines apart",
    ),
    pair(
        12,
        "Missing await on `save()` (line 12)",
        17,
        "missing await on  `save()` (line 17).",
        True,
        "line references, case, spacing and a shifted line",
    ),
    pair(
        10,
        "`user_id` is never validated before use",
        14,
        "user_id is not validated before being used",
        True,
        "the identifier written bare, other words",
    ),
    pair(
        10,
        "Missing null check on `user`",
        12,
        "No null check for 'user' before dereferencing it",
        True,
        "other quotes, a word added",
    ),
    pair(
        40,
        "SQL query built by string concatenation",
        41,
        "SQL built by concatenating strings",
        True,
        "other word forms",
    ),
    pair(
        8,
        "Timeout of 30 seconds is too short",
        8,
        "Timeout of 60 seconds is too short",
        False,
        "another value",
    ),
    pair(10, "Unclosed file handle", 40, "Unclosed file handle", False, "30 lines apart"),
    pair(
        10, "Unclosed file handle", 20, "unclosed file handle", True, "10 lines apart: within the tolerance"
    ),
    pair(
        10,
        "Unclosed file handle in `load_config`",
        13,
        "File handle opened in load_config() is never closed",
        True,
        "re-ordered words, the identifier called",
    ),
    pair(
        10,
        "Password logged in clear text by `login()`",
        10,
        "`login()` does not rate-limit attempts",
        False,
        "the same identifier, another problem",
    ),
    pair(
        5,
        'Log message "failed to load" is misleading',
        5,
        "Log message 'failed to load' is misleading",
        True,
        "double or single quotes",
    ),
    pair(
        5,
        'Log message "failed to load" is misleading',
        5,
        'Log message "failed to save" is misleading',
        False,
        "another quoted string",
    ),
    pair(
        20, "`retry_count` can be negative", 22, "`retry_count` may become negative", True, "a verb changed"
    ),
    pair(
        20, "`retry_count` can be negative", 20, "`retry_limit` can be negative", False, "another identifier"
    ),
    pair(
        3,
        "Hard-coded API key in `settings.py`",
        3,
        "API key hard coded in settings.py",
        True,
        "hyphen, and the file name quoted or not",
    ),
    pair(
        30,
        "Race condition: `cache` is read and written without a lock",
        31,
        "`cache` is accessed without holding the lock (race condition)",
        True,
        "a longer re-wording",
    ),
    pair(
        30,
        "Division by zero when `count` is 0",
        30,
        "Division by zero when `total` is 0",
        False,
        "another identifier, same value",
    ),
    pair(
        50,
        "Retries up to 3 times without backoff",
        47,
        "retries up to 3 times, with no backoff!",
        True,
        "punctuation and a negation written otherwise",
    ),
    pair(
        50,
        "Retries up to 3 times without backoff",
        50,
        "Retries up to 5 times without backoff",
        False,
        "another number",
    ),
    pair(
        60,
        "`getUser` returns null when the id is unknown",
        62,
        "getUser() returns None for an unknown id",
        True,
        "camelCase identifier quoted, called, and null for None",
    ),
    pair(
        70,
        "`UserService.delete` does not check permissions",
        70,
        "`UserService.update` does not check permissions",
        False,
        "another method of the same class",
    ),
    pair(
        80,
        "`Config.DEBUG` left enabled",
        80,
        "`config.debug` left enabled",
        True,
        "names compared without case",
    ),
    pair(
        12,
        "Missing await on `save()`",
        12,
        "Missing await on `save()`",
        False,
        "another file",
        file="src/other.py",
    ),
    pair(
        12,
        "Missing await on `save()`",
        12,
        "Missing await on `save()`",
        False,
        "another category",
        category="performance",
    ),
    pair(
        90,
        "Exception from `parse()` is swallowed silently",
        91,
        "parse() errors are silently swallowed by a bare except",
        True,
        "the call written bare, words added",
    ),
    pair(
        90,
        "Exception from `parse()` is swallowed silently",
        91,
        "`parse()` has no docstring",
        False,
        "the same name, nothing else in common",
    ),
]


@pytest.mark.parametrize("row", PAIRS, ids=[row.reason for row in PAIRS])
def test_pair(row: Pair) -> None:
    assert_identity(row.first, row.second, row.same)


@pytest.mark.parametrize("row", PAIRS, ids=[row.reason for row in PAIRS])
def test_one_reviewer_has_two_of_its_findings_merged_only_when_it_repeated_one(row: Pair) -> None:
    first, second = Candidate.of(row.first), Candidate.of(row.second)
    repeated = (first.fingerprint, first.line) == (second.fingerprint, second.line)
    assert group_reports([("code-reviewer", first), ("code-reviewer", second)]) == (
        [0, 0] if repeated else [0, 1]
    )
