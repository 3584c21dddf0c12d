from __future__ import annotations

import pytest
from failures.logfixtures import fixture_text

from fixloop.failures.model import Counts
from fixloop.failures.vitest import parse_vitest

CART = "vt/cart.test.js"
EXPECTED = [
    (
        "vt/broken.test.js",
        "error",
        "vt/broken.test.js",
        2,
        "Error: Cannot find module '../src/missing.js' imported from "
        "/home/runner/work/shop/shop/vt/broken.test.js",
    ),
    (
        f"{CART} > cart > total > is zero for an empty cart",
        "test",
        CART,
        10,
        "AssertionError: expected +0 to be 1 // Object.is equality",
    ),
    (f"{CART} > cart > applies a coupon", "test", CART, 14, 'TypeError: coupon has no code: {"off":3}'),
    (
        f"{CART} > cart > keeps the line items",
        "test",
        CART,
        17,
        "AssertionError: expected { items: [ 1, 2 ], currency: 'EUR' } "
        "to deeply equal { items: [ 1, 2, 3 ], currency: 'EUR' }",
    ),
]


@pytest.mark.parametrize("name", ["color", "plain", "verbose"])
def test_failed_tests_and_suites(name: str) -> None:
    parsed = parse_vitest(fixture_text(f"vitest/{name}.txt"))
    assert [(f.test_id, f.kind, f.file, f.line, f.message) for f in parsed.failures] == EXPECTED
    assert parsed.counts == Counts(passed=2, failed=3, skipped=1)
    assert parsed.run_error is False


def test_details_hold_the_diff_and_the_frame() -> None:
    failure = parse_vitest(fixture_text("vitest/color.txt")).failures[1]
    assert failure.details.split("\n")[:8] == [
        "AssertionError: expected +0 to be 1 // Object.is equality",
        "",
        "- Expected",
        "+ Received",
        "",
        "- 1",
        "+ 0",
        "",
    ]
    assert " \u276f vt/cart.test.js:10:25" in failure.details.split("\n")


def test_verbose_lines_alone_name_the_failures() -> None:
    text = (
        " ✓ vt/a.test.ts > sums 1ms\n"
        " \u00d7 vt/a.test.ts > totals > rounds 3ms\n"
        "   → expected 1.01 to be 1\n"
        " \u00d7 |unit| vt/b.test.ts > parses\n"
    )
    parsed = parse_vitest(text)
    assert [(f.test_id, f.file, f.message) for f in parsed.failures] == [
        ("vt/a.test.ts > totals > rounds", "vt/a.test.ts", "expected 1.01 to be 1"),
        ("vt/b.test.ts > parses", "vt/b.test.ts", "failed"),
    ]


def test_several_tests_sharing_one_error_and_an_unhandled_error() -> None:
    text = (
        "⎯⎯⎯⎯⎯⎯⎯ Failed Tests 2 ⎯⎯⎯⎯⎯⎯⎯\n"
        "\n"
        " FAIL  |unit| vt/a.test.ts > first\n"
        " FAIL  |unit| vt/a.test.ts > second\n"
        "Error: database is down\n"
        " \u276f vt/a.test.ts:4:9\n"
        "\n"
        "⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯\n"
        "\n"
        "⎯⎯⎯⎯⎯⎯ Unhandled Errors ⎯⎯⎯⎯⎯⎯\n"
        "\n"
        "Vitest caught 1 unhandled error during the test run.\n"
        "\n"
        "⎯⎯⎯⎯ Unhandled Rejection ⎯⎯⎯⎯\n"
        "TypeError: fetch failed\n"
        " \u276f src/api.ts:12:3\n"
        "\n"
        " Test Files  1 failed (1)\n"
        "      Tests  2 failed (2)\n"
        "     Errors  1 error\n"
    )
    parsed = parse_vitest(text)
    assert [(f.test_id, f.kind, f.line, f.message) for f in parsed.failures] == [
        ("vt/a.test.ts > first", "test", 4, "Error: database is down"),
        ("vt/a.test.ts > second", "test", 4, "Error: database is down"),
        ("unhandled error", "error", None, "TypeError: fetch failed"),
    ]
    assert parsed.counts == Counts(failed=2, errors=1)


def test_a_describe_block_in_the_default_reporter_is_one_failure_of_its_file() -> None:
    text = (
        " \u276f src/cart.test.ts (2 tests | 1 failed) 9ms\n"
        "   \u00d7 cart badge > shows the count 3ms\n"
        "     \u2192 expected 1 to be 2\n"
        "\n"
        "\u23af\u23af\u23af Failed Tests 1 \u23af\u23af\u23af\n"
        "\n"
        " FAIL  src/cart.test.ts > cart badge > shows the count\n"
        "AssertionError: expected 1 to be 2\n"
        " \u276f src/cart.test.ts:7:21\n"
        "\u23af\u23af\u23af[1/1]\u23af\n"
        "\n"
        " Tests  1 failed | 1 passed (2)\n"
    )
    parsed = parse_vitest(text)
    assert [(f.test_id, f.file, f.line) for f in parsed.failures] == [
        ("src/cart.test.ts > cart badge > shows the count", "src/cart.test.ts", 7)
    ]
