from __future__ import annotations

import pytest
from failures.logfixtures import fixture_text

from fixloop.failures.model import Counts
from fixloop.failures.prove import parse_prove

EXPECTED = [
    ("t/amounts.t", "one and a half", "test", 7, "test 2 failed: one and a half"),
    ("t/amounts.t", "sums every entry", "test", 9, "test 4 failed: sums every entry"),
    ("t/amounts.t", "test 5", "test", 10, "test 5 failed"),
    ("t/report.t", "totals", "test", 10, "test 2 failed: totals"),
    (
        "t/setup.t",
        "t/setup.t",
        "error",
        None,
        "Non-zero exit status: 2; Parse errors: No plan found in TAP output",
    ),
]


@pytest.mark.parametrize("name", ["quiet", "verbose"])
def test_failed_tests_named_by_test_mores_diagnostics(name: str) -> None:
    parsed = parse_prove(fixture_text(f"prove/{name}.txt"))
    assert [(f.suite, f.test_id, f.kind, f.line, f.message) for f in parsed.failures] == EXPECTED
    assert all(f.file == f.suite for f in parsed.failures)
    assert parsed.counts == Counts(passed=5, failed=4)
    assert parsed.run_error is False


def test_numbers_without_diagnostics_and_a_huge_range() -> None:
    text = (
        "t/a.t .. \n"
        "Failed 3/9 subtests\n"
        "\n"
        "Test Summary Report\n"
        "-------------------\n"
        "t/a.t (Wstat: 256 (exited 1) Tests: 9 Failed: 3)\n"
        "  Failed tests:  2, 5-6\n"
        "t/b.t (Wstat: 256 (exited 1) Tests: 9 Failed: 9)\n"
        "  Failed tests:  1-99999999999, 1-999999999\n"
        "t/c.t (Wstat: 256 (exited 1) Tests: 9 Failed: 9)\n"
        "  Failed tests:  1-999999999\n"
        "Files=2, Tests=18,  0 wallclock secs\n"
        "Result: FAIL\n"
    )
    parsed = parse_prove(text)
    assert [(f.suite, f.test_id) for f in parsed.failures][:4] == [
        ("t/a.t", "test 2"),
        ("t/a.t", "test 5"),
        ("t/a.t", "test 6"),
        ("t/b.t", "test 1"),
    ]
    assert len(parsed.failures) == 10_000  # at most that many are read
