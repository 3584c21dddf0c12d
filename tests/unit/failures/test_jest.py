from __future__ import annotations

import pytest
from failures.logfixtures import fixture_text

from fixloop.failures.jest import parse_jest
from fixloop.failures.model import Counts

CART = "test/cart.test.js"
CART_FAILURES = [
    (
        f"{CART} > cart > total > is zero for an empty cart",
        "test",
        CART,
        9,
        "expect(received).toBe(expected) // Object.is equality",
    ),
    (f"{CART} > cart > applies a coupon", "test", CART, 13, 'TypeError: coupon has no code: {"off":3}'),
    (
        f"{CART} > cart > keeps the line items",
        "test",
        CART,
        16,
        "expect(received).toEqual(expected) // deep equality",
    ),
]
BROKEN = (
    "test/broken.test.js",
    "error",
    "test/broken.test.js",
    1,
    "Cannot find module '../src/missing' from 'test/broken.test.js'",
)


@pytest.mark.parametrize("name", ["default", "verbose"])
def test_failures_and_the_suite_that_did_not_load(name: str) -> None:
    parsed = parse_jest(fixture_text(f"jest/{name}.txt"))
    assert [(f.test_id, f.kind, f.file, f.line, f.message) for f in parsed.failures] == [
        *CART_FAILURES,
        BROKEN,
    ]
    assert parsed.counts == Counts(passed=2, failed=3, skipped=1)
    assert parsed.run_error is False


def test_colours_are_ignored() -> None:
    parsed = parse_jest(fixture_text("jest/color.txt"))
    assert [(f.test_id, f.kind, f.file, f.line, f.message) for f in parsed.failures] == CART_FAILURES
    assert parsed.counts == Counts(passed=1, failed=3, skipped=1)


def test_details_hold_the_diff_and_the_code_frame() -> None:
    failure = parse_jest(fixture_text("jest/default.txt")).failures[0]
    assert failure.details == (
        "expect(received).toBe(expected) // Object.is equality\n"
        "\n"
        "Expected: 1\n"
        "Received: 0\n"
        "\n"
        "   7 |     });\n"
        "   8 |     it('is zero for an empty cart', () => {\n"
        ">  9 |       expect(total([])).toBe(1);\n"
        "     |                         ^\n"
        "  10 |     });\n"
        "  11 |   });\n"
        "  12 |   it('applies a coupon', () => {\n"
        "\n"
        "  at Object.toBe (test/cart.test.js:9:25)"
    )


def test_only_a_suite_that_did_not_load_is_a_run_error() -> None:
    text = fixture_text("jest/default.txt")
    only_broken = text[text.index("FAIL test/broken.test.js") :]
    parsed = parse_jest(only_broken)
    assert [(f.test_id, f.kind) for f in parsed.failures] == [("test/broken.test.js", "error")]
    assert parsed.run_error is True


def test_a_configuration_error_before_any_suite() -> None:
    text = "● Validation Error:\n\n  Module ts-jest in the transform option was not found.\n"
    parsed = parse_jest(text)
    assert [(f.test_id, f.kind, f.message) for f in parsed.failures] == [
        ("jest", "error", "Module ts-jest in the transform option was not found.")
    ]
    assert parsed.run_error is True
