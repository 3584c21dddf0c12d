from __future__ import annotations

import pytest
from failures.logfixtures import fixture_text

from fixloop.failures.model import Counts
from fixloop.failures.playwright import parse_playwright

SPEC = "tests/checkout.spec.js"
EXPECTED = [
    (
        f"{SPEC}:4:3 \u203a checkout \u203a shows the total",
        "chromium",
        SPEC,
        6,
        "Error: expect(received).toBe(expected) // Object.is equality",
    ),
    (
        f"{SPEC}:13:3 \u203a checkout \u203a rejects an expired card",
        "chromium",
        SPEC,
        16,
        "Error: payment gateway timed out",
    ),
    (
        f"{SPEC}:21:1 \u203a home page lists products",
        "chromium",
        SPEC,
        22,
        "Error: expect(received).toEqual(expected) // deep equality",
    ),
]


@pytest.mark.parametrize("name", ["list", "line"])
def test_numbered_failure_sections(name: str) -> None:
    parsed = parse_playwright(fixture_text(f"playwright/{name}.txt"))
    assert [(f.test_id, f.suite, f.file, f.line, f.message) for f in parsed.failures] == EXPECTED
    assert all(failure.kind == "test" for failure in parsed.failures)
    assert parsed.counts == Counts(passed=1, failed=3, skipped=1)


def test_details_hold_the_error_and_the_code_frame() -> None:
    failure = parse_playwright(fixture_text("playwright/list.txt")).failures[1]
    assert failure.details == (
        "Error: payment gateway timed out\n"
        "\n"
        "  14 |     const card = { expired: true };\n"
        "  15 |     if (card.expired) {\n"
        "> 16 |       throw new Error('payment gateway timed out');\n"
        "     |             ^\n"
        "  17 |     }\n"
        "  18 |   });\n"
        "  19 | });\n"
        "    at /home/runner/work/shop/shop/tests/checkout.spec.js:16:13\n"
        "\n"
        "Error Context: ../test-results/checkout-checkout-rejects-an-expired-card-chromium/error-context.md"
    )


def test_marks_alone_name_failures_and_flaky_tests_are_not_failures() -> None:
    text = (
        "  \u2718  1 [firefox] \u203a tests/a.spec.ts:3:5 \u203a logs in (2.1s)\n"
        "  \u2718  2 [firefox] \u203a tests/a.spec.ts:9:5 \u203a logs out (1.0s)\n"
        "  \u2713  3 [firefox] \u203a tests/a.spec.ts:9:5 \u203a logs out (retry #1) (0.9s)\n"
        "\n"
        "  1 failed\n"
        "    [firefox] \u203a tests/a.spec.ts:3:5 \u203a logs in \u2500\u2500\u2500\u2500\n"
        "  1 flaky\n"
        "    [firefox] \u203a tests/a.spec.ts:9:5 \u203a logs out \u2500\u2500\u2500\u2500\n"
        "  4 passed (5.0s)\n"
    )
    parsed = parse_playwright(text)
    assert [(f.test_id, f.suite, f.line) for f in parsed.failures] == [
        ("tests/a.spec.ts:3:5 \u203a logs in", "firefox", 3)
    ]
    assert parsed.counts == Counts(passed=4, failed=1)


def test_a_run_that_did_not_start_is_a_run_error() -> None:
    parsed = parse_playwright("Error: No tests found.\nMake sure that arguments are regular expressions\n")
    assert [(f.test_id, f.kind, f.message) for f in parsed.failures] == [
        ("playwright", "error", "Error: No tests found.")
    ]
    assert parsed.run_error is True
