from __future__ import annotations

import json

import pytest
from failures.logfixtures import fixture_text

from fixloop.failures.gotest import parse_go
from fixloop.failures.model import Counts

CART = "example.com/shop/cart"
TESTS = [
    ("TestTotalEmpty", "test", CART, "cart_test.go", 14, "cart_test.go:14: Total(nil) = 0, want 1"),
    ("TestDiscounts/half", "test", CART, "cart_test.go", 24, "cart_test.go:24: discount half = 0, want 5"),
]
PANIC = (
    "TestCents",
    "test",
    "example.com/shop/price",
    "/home/runner/work/shop/shop/price/price_test.go",
    6,
    "panic: runtime error: index out of range [3] with length 2 [recovered]",
)
BUILD = [
    (
        "store/store.go:6:27",
        "build",
        "example.com/shop/store",
        "store/store.go",
        6,
        "undefined: undefinedThing",
    ),
    (
        "store/store.go:9:27",
        "build",
        "example.com/shop/store",
        "store/store.go",
        9,
        'cannot use "zero" (untyped string constant) as int value in return statement',
    ),
]


def rows(text: str) -> list[tuple[object, ...]]:
    return [(f.test_id, f.kind, f.suite, f.file, f.line, f.message) for f in parse_go(text).failures]


@pytest.mark.parametrize("name", ["default", "verbose"])
def test_failures_panics_and_build_errors_with_their_packages(name: str) -> None:
    assert rows(fixture_text(f"go/{name}.txt")) == [*TESTS, PANIC, *BUILD]


def test_counts_need_verbose_output() -> None:
    assert parse_go(fixture_text("go/default.txt")).counts == Counts(failed=3)
    assert parse_go(fixture_text("go/verbose.txt")).counts == Counts(passed=2, failed=3, skipped=1)


def test_details_hold_the_test_log_and_the_panic() -> None:
    failures = parse_go(fixture_text("go/default.txt")).failures
    assert failures[0].details == (
        "cart_test.go:14: Total(nil) = 0, want 1\ncart_test.go:15: an empty cart should cost nothing"
    )
    panic = failures[2].details.split("\n")
    assert panic[0] == "panic: runtime error: index out of range [3] with length 2 [recovered]"
    assert "\t/home/runner/work/shop/shop/price/price_test.go:6 +0x1d" in panic


def test_json_events() -> None:
    parsed = parse_go(fixture_text("go/json.txt"))
    assert [(f.test_id, f.suite, f.line) for f in parsed.failures] == [
        ("TestTotalEmpty", CART, 14),
        ("TestDiscounts/half", CART, 24),
    ]
    assert parsed.counts == Counts(passed=2, failed=2, skipped=1)


def test_only_build_errors_make_a_run_error() -> None:
    lines = fixture_text("go/default.txt").split("\n")
    parsed = parse_go("\n".join([*lines[:3], "FAIL\texample.com/shop/store [build failed]", "FAIL"]))
    assert parsed.run_error is True
    assert [failure.kind for failure in parsed.failures] == ["build", "build"]


def test_a_timeout_panic_blames_the_running_test() -> None:
    events = [
        {"Action": "output", "Package": "example.com/slow", "Output": "=== RUN   TestSync\n"},
        {"Action": "output", "Package": "example.com/slow", "Output": "panic: test timed out after 10m0s\n"},
        {"Action": "output", "Package": "example.com/slow", "Output": "\trunning tests:\n"},
        {"Action": "output", "Package": "example.com/slow", "Output": "FAIL\texample.com/slow\t600.012s\n"},
    ]
    text = "\n".join(json.dumps(event) for event in events)
    assert rows(text) == [
        ("TestSync", "test", "example.com/slow", None, None, "panic: test timed out after 10m0s")
    ]


def test_a_package_that_failed_setup_without_details() -> None:
    parsed = parse_go("FAIL\texample.com/shop/db [setup failed]\nFAIL\n")
    assert rows("FAIL\texample.com/shop/db [setup failed]\nFAIL\n") == [
        ("example.com/shop/db", "build", "example.com/shop/db", None, None, "setup failed")
    ]
    assert parsed.run_error is True
