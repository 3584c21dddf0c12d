from __future__ import annotations

from failures.logfixtures import fixture_text

from fixloop.failures.model import Counts
from fixloop.failures.tap import parse_tap

TAPE_FILE = "/tmp/fixloop-capture/tape_ledger/test/amounts.js"
NODE_TAP_FILE = "test/amounts.test.js"


def test_tape_assertions_under_their_test_names() -> None:
    parsed = parse_tap(fixture_text("tap/tape.txt"))
    assert [(f.test_id, f.file, f.line, f.message) for f in parsed.failures] == [
        ("parseAmount reads cents > one and a half", TAPE_FILE, 11, "one and a half: expected 150, got 105"),
        ("parseAmount reads cents > two and a half", TAPE_FILE, 13, "two and a half: expected 250, got 205"),
        (
            "balance sums every entry > should be deeply equivalent",
            TAPE_FILE,
            19,
            "should be deeply equivalent: expected [ 100, 200 ], got [ 0, 100 ]",
        ),
        (
            "rounded rounds half up > should be strictly equal",
            TAPE_FILE,
            24,
            "should be strictly equal: expected 3, got 2",
        ),
        ("a rejected promise > Error: ledger file is locked", None, None, "Error: ledger file is locked"),
    ]
    assert all(f.kind == "test" and f.runner == "tap" for f in parsed.failures)
    assert parsed.counts == Counts(passed=3, failed=5)
    assert parsed.failures[0].details.startswith(
        "operator: equal\nexpected: 150\nactual:   105\nat: Test.<anonymous>"
    )


def test_node_tap_subtests_are_named_by_their_failing_points() -> None:
    parsed = parse_tap(fixture_text("tap/node_tap.txt"))
    assert [(f.test_id, f.file, f.line) for f in parsed.failures] == [
        (f"{NODE_TAP_FILE} > parseAmount > reads one and a half", NODE_TAP_FILE, 7),
        (f"{NODE_TAP_FILE} > parseAmount > cents > two and a half", NODE_TAP_FILE, 10),
        (f"{NODE_TAP_FILE} > balance > sums every entry", NODE_TAP_FILE, 16),
        (f"{NODE_TAP_FILE} > rounded rounds half up > should be equal", NODE_TAP_FILE, 20),
        (f"{NODE_TAP_FILE} > throws > ledger file is locked", NODE_TAP_FILE, 24),
    ]


def test_todo_skip_a_subtest_that_fails_alone_and_tap_14_subtest_comments() -> None:
    text = (
        "TAP version 14\n"
        "not ok 1 - known bug # TODO fix later\n"
        "ok 2 - not on this platform # SKIP windows only\n"
        "# Subtest: setup\n"
        "    ok 1 - opens\n"
        "    1..1\n"
        "not ok 3 - setup\n"
        "  ---\n"
        "  error: timeout after 30s\n"
        "  ...\n"
        "    # Subtest: nested\n"
        "    not ok 1 - inner \\# with a hash\n"
        "    1..1\n"
        "not ok 4 - nested\n"
        "not ok 5\n"
        "1..5\n"
    )
    parsed = parse_tap(text)
    assert [(f.test_id, f.message) for f in parsed.failures] == [
        ("setup", "setup: timeout after 30s"),
        ("nested > inner # with a hash", "inner # with a hash"),
        ("test 5", "failed"),
    ]
    assert parsed.failures[0].details == "error: timeout after 30s"
    assert parsed.counts == Counts(passed=1, failed=3)


def test_bail_out_is_a_run_error() -> None:
    parsed = parse_tap("TAP version 13\n1..3\nok 1 - connects\nBail out! database is gone\n")
    assert [(f.test_id, f.kind, f.message) for f in parsed.failures] == [
        ("Bail out!", "error", "database is gone")
    ]
    assert parsed.run_error is True


def test_a_yaml_block_without_its_end_does_not_swallow_the_next_points() -> None:
    parsed = parse_tap("not ok 1 - first\n  ---\n  found: 1\nnot ok 2 - second\n")
    assert [(f.test_id, f.details) for f in parsed.failures] == [("first", "found: 1"), ("second", "")]


def test_node_test_heads_each_test_with_its_own_subtest_comment() -> None:
    parsed = parse_tap(fixture_text("tap/node_test.txt"))
    folder = "/tmp/fixloop-capture/node_test_ledger/test/"
    assert [(f.test_id, f.file, f.line, f.message) for f in parsed.failures] == [
        ("parseAmount > reads cents", folder + "ledger.test.js", 10, "reads cents: expected 150, got 105"),
        ("balance sums every entry", folder + "ledger.test.js", 15, "balance sums every entry"),
        (
            "rounded rounds half up",
            folder + "ledger.test.js",
            19,
            "rounded rounds half up: expected 3, got 2",
        ),
        (folder + "report.test.js", folder + "report.test.js", 1, folder + "report.test.js: test failed"),
    ]
    assert parsed.counts == Counts(passed=1, failed=4, skipped=0)
