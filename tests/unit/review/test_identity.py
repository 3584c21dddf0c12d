"""A finding's identity: what its description names, its fingerprint, grouping within a round, and stable
ids across rounds (including registries written under the older fingerprint rule)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers_review import issue

from fixloop.review import identity
from fixloop.review.identity import (
    LINE_TOLERANCE,
    MAX_COMPARED,
    MAX_NAMES_WRITTEN_BARE,
    Candidate,
    Description,
    NearbyFindings,
    closeness,
    fingerprint,
    format_id,
    group_reports,
    legacy_fingerprint,
)
from fixloop.review.issue_registry import IssueRegistry


@pytest.mark.parametrize(
    ("text", "names", "words"),
    [
        ("Missing  null check on `user`.", {"user"}, {"mis", "null", "check"}),
        ("Timeout of 30 seconds is too short", {"30"}, {"timeou", "second", "short"}),
        ('Log message "failed to load" is misleading', {"failed to load"}, {"log", "messag", "mislea"}),
        ("Use 'utf-8' here", {"utf-8"}, {"us"}),
        ("Don't swallow the reviewer's error", set(), {"dont", "swallo", "review", "error"}),
        ("Version 1.2.3 pinned\n\tin  two places!", {"1.2.3"}, {"vers", "pin", "two", "plac"}),
        ("Call to `save(user)` at line 12 is not awaited", {"save"}, {"call", "await"}),
        ("user_id and getUser() in src/app.py:40 (see L12)", {"user_id", "getuser", "src/app.py"}, set()),
        ("A parameter x that I never use", {"x"}, {"parame", "us"}),
        ("\u201cSmart\u201d and \u2018curly\u2019 quotes, e.g. here", {"smart", "curly"}, {"quot"}),
    ],
)
def test_a_description_is_read_as_names_and_word_stems(text: str, names: set[str], words: set[str]) -> None:
    description = Description.of(text)
    assert (set(description.names), set(description.words)) == (names, words)


def test_the_issue_pair_gets_two_fingerprints_and_is_not_the_same_finding() -> None:
    first = Candidate.of(issue("A", 1, "`user_id` is never validated before use"))
    second = Candidate.of(issue("B", 3, "`email` is never validated before use"))
    assert first.fingerprint != second.fingerprint
    assert closeness(first, second) is None
    # The older rule gave both the same fingerprint: that is how the second finding was lost.
    assert first.legacy_fingerprint == second.legacy_fingerprint


def test_same_finding_in_other_words_has_the_same_fingerprint() -> None:
    first = issue("A", 12, "Missing await on `save()` (line 12)")
    second = issue("B", 17, "missing await on  'save' (line 17).", file="./src/app.py", category=" Bug ")
    assert fingerprint(first) == fingerprint(second)


@pytest.mark.parametrize(
    "change",
    [
        {"file": "src/other.py"},
        {"category": "style"},
        {"description": "Missing await on `load()`"},
        {"description": "Missing lock around `save()`"},
        {"line": 25},  # another 10-line block
    ],
)
def test_fingerprint_changes_with_identity(change: dict[str, Any]) -> None:
    base = issue("A", 12, "Missing await on `save()`")
    assert fingerprint(base) != fingerprint({**base, **change})


def test_fingerprint_is_stable_text() -> None:
    value = fingerprint(issue("A", 12, "Missing await on `save()`"))
    assert value == "b078fa9d12fce2ab70ac"
    assert value == fingerprint(issue("Z", 11, "missing AWAIT on `Save`"))


def test_legacy_fingerprint_is_what_the_older_rule_computed() -> None:
    # Values written by the previous identity module for these findings (and kept in older baselines).
    assert legacy_fingerprint("src/app.py", 12, "bug", "Missing await on `save()`") == "f4fd148b5b05545efa9c"
    sql = "SQL built by string concatenation"
    assert legacy_fingerprint("src/app.py", 12, "security", sql) == "5afa85dff717fb9fe343"


@pytest.mark.parametrize(("shift", "same"), [(0, True), (-LINE_TOLERANCE, True), (LINE_TOLERANCE + 1, False)])
def test_lines_match_within_the_tolerance_only(shift: int, same: bool) -> None:
    first = Candidate.of(issue("A", 40, "Unclosed file handle"))
    second = Candidate.of(issue("A", 40 + shift, "Unclosed file handle"))
    assert (closeness(first, second) is not None) is same


def test_a_name_quoted_in_one_and_bare_in_the_other_is_the_same_name() -> None:
    quoted = Candidate.of(issue("A", 10, "`email` is never validated before use"))
    bare = Candidate.of(issue("B", 11, "email is not validated before being used"))
    other = Candidate.of(issue("C", 11, "phone is not validated before being used"))
    assert closeness(quoted, bare) == (1, 0.0)
    assert closeness(quoted, other) is None


@pytest.mark.parametrize(
    ("count", "same"), [(MAX_NAMES_WRITTEN_BARE, True), (MAX_NAMES_WRITTEN_BARE + 1, False)]
)
def test_only_a_few_names_may_be_quoted_on_one_side_and_bare_on_the_other(count: int, same: bool) -> None:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"][:count]
    quoted = Candidate.of(
        issue("A", 10, f"Fields {', '.join(f'`{word}`' for word in words)} are never checked")
    )
    bare = Candidate.of(issue("B", 10, f"Fields {', '.join(words)} are never checked"))
    assert (closeness(quoted, bare) is not None) is same


def test_grouping_keeps_one_agents_findings_apart_and_joins_other_agents() -> None:
    reports = [
        ("code-reviewer", Candidate.of(issue("A", 1, "`user_id` is never validated before use"))),
        ("code-reviewer", Candidate.of(issue("B", 3, "`email` is never validated before use"))),
        ("code-reviewer", Candidate.of(issue("C", 5, "Unclosed file handle"))),
        ("code-reviewer", Candidate.of(issue("D", 8, "Unclosed file handle"))),  # the agent meant two
        ("code-reviewer", Candidate.of(issue("D", 8, "Unclosed file handle!"))),  # the same report again
        ("silent-failure-hunter", Candidate.of(issue("E", 4, "email is not validated"))),
        ("silent-failure-hunter", Candidate.of(issue("F", 7, "unclosed FILE handle"))),
    ]
    assert group_reports(reports) == [0, 1, 2, 3, 3, 1, 3]


def test_matching_compares_a_bounded_number_of_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = identity.closeness

    def counting(a: Candidate, b: Candidate) -> tuple[int, float] | None:
        calls.append(1)
        return real(a, b)

    monkeypatch.setattr(identity, "closeness", counting)
    reports = [
        ("code-reviewer", Candidate.of(issue(f"X{n}", 5, f"Unused variable `v_{n}`"))) for n in range(400)
    ]
    assert group_reports(reports) == list(range(400))
    assert len(calls) <= 400 * MAX_COMPARED
    index: NearbyFindings[int] = NearbyFindings()
    for number, (_agent, candidate) in enumerate(reports):
        index.add(candidate, number)
    calls.clear()
    assert index.matches(reports[-1][1]) == []  # v_399 is beyond the first MAX_COMPARED of its block
    assert len(calls) == MAX_COMPARED


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


def test_a_reworded_finding_keeps_its_id_and_another_name_gets_a_new_one() -> None:
    registry = IssueRegistry()
    first = registry.assign(candidates(issue("a", 1, "`user_id` is never validated before use")), 1)
    second = registry.assign(
        candidates(
            issue("b", 3, "`email` is never validated before use"),
            issue("a", 4, "User_Id is not validated before being used."),
        ),
        2,
    )
    assert (first, second) == (["FL-001"], ["FL-002", "FL-001"])
    assert registry.known["FL-001"].text == "User_Id is not validated before being used."


def test_nearest_line_wins_and_each_id_is_used_once_per_round() -> None:
    registry = IssueRegistry()
    ids = registry.assign(candidates(issue("a", 10, "dup"), issue("b", 30, "dup")), 1)
    assert ids == ["FL-001", "FL-002"]
    # both moved by 5 lines into other blocks: each keeps its own id (nearest line first)
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


def test_a_registry_of_the_older_rule_still_gives_its_ids_by_fingerprint() -> None:
    old = {
        "next": 2,
        "issues": [
            {
                "id": "FL-001",
                "file": "src/app.py",
                "category": "bug",
                "description": "missing await on `id`",  # the older normalized description
                "line": 12,
                "fingerprints": ["f4fd148b5b05545efa9c"],
                "first_seen_round": 1,
                "last_seen_round": 1,
            }
        ],
    }
    registry = IssueRegistry.from_json(old)
    found = registry.assign(
        candidates(issue("a", 13, "Missing await on `load()`"), issue("b", 14, "Missing await on `save()`")),
        2,
    )
    # Both had the older fingerprint; only one can keep the id, and the first one seen does.
    assert found == ["FL-001", "FL-002"]
    entry = registry.to_json()["issues"][0]
    assert (entry["text"], entry["line"], entry["last_seen_round"]) == ("Missing await on `load()`", 13, 2)
    # From now on the entry is matched by the current rule.
    assert registry.assign(candidates(issue("a", 15, "missing await on 'load'")), 3) == ["FL-001"]


def test_id_format_grows_past_three_digits() -> None:
    assert (format_id(7), format_id(1234)) == ("FL-007", "FL-1234")
