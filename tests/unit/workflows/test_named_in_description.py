"""The failing tests a bug description names, found in the form the project's runner reports them."""

from __future__ import annotations

from typing import Any

import pytest

from fixloop.workflows.bugfix.named_tests import MAX_NAMED, named_tests
from fixloop.workflows.testselect import matches


@pytest.mark.parametrize(
    ("runner", "description", "expected"),
    [
        (
            "pytest",
            "tests/test_calc.py::TestDiv::test_zero[0] fails; tests/test_calc.py::TestDiv::test_zero[0] too.",
            [
                {
                    "id": "tests/test_calc.py::TestDiv::test_zero[0]",
                    "file": "tests/test_calc.py",
                    "name": "test_zero",
                }
            ],
        ),
        (
            "unittest",
            "Since 2.1 tests.test_amounts.ParseAmountTest.test_cents fails (self.test_x, os.path.join: not)",
            [{"id": "tests.test_amounts.ParseAmountTest.test_cents", "file": None, "name": "test_cents"}],
        ),
        (
            "go",
            "TestDiff/Project3/Inequal and TestNameOf/#04 fail. Test suites: TestSortKeys.",
            [
                {"id": "TestDiff/Project3/Inequal", "file": None, "name": "TestDiff/Project3/Inequal"},
                {"id": "TestNameOf/#04", "file": None, "name": "TestNameOf/#04"},
                {"id": "TestSortKeys", "file": None, "name": "TestSortKeys"},
            ],
        ),
        (
            "cargo",
            "`tests::rounding::rounds_half_up` panics",
            [{"id": "tests::rounding::rounds_half_up", "file": None, "name": "rounds_half_up"}],
        ),
        (
            "vitest",
            "FAIL test/ledger.test.js > parseAmount > reads 1.5\nand `src/a.spec.ts \u203a adds`",
            [
                {
                    "id": "test/ledger.test.js > parseAmount > reads 1.5",
                    "file": "test/ledger.test.js",
                    "name": "reads 1.5",
                },
                {"id": "src/a.spec.ts > adds", "file": "src/a.spec.ts", "name": "adds"},
            ],
        ),
        ("jest", "test/ledger.test.js fails", []),
        ("node-test", "parseAmount > reads cents fails", []),
        (None, "tests/test_calc.py::test_divide fails", []),
    ],
)
def test_named_tests(runner: str | None, description: str, expected: list[dict[str, Any]]) -> None:
    assert named_tests(description, runner) == expected


def test_at_most_max_named() -> None:
    text = " ".join(f"TestCase{number}" for number in range(MAX_NAMED + 5))
    assert len(named_tests(text, "go")) == MAX_NAMED


@pytest.mark.parametrize(
    ("failure", "test", "expected"),
    [
        (
            {"test_id": "TestDiff/Project3/Inequal", "kind": "test"},
            {"id": "TestDiff", "name": "TestDiff"},
            True,
        ),
        ({"test_id": "TestDiffMore/x", "kind": "test"}, {"id": "TestDiff", "name": "TestDiff"}, False),
        (
            {"test_id": "unittest.loader._FailedTest.tests.test_currency", "kind": "error"},
            {"id": "tests.test_currency.CurrencyTest.test_code", "name": "test_code"},
            True,
        ),
        (
            {"test_id": "unittest.loader._FailedTest.test_no_such_test", "kind": "error"},
            {"id": "tests.test_amounts.ParseAmountTest.test_no_such_test", "name": "test_no_such_test"},
            False,
        ),
    ],
)
def test_matches_subtests_and_unloaded_modules(
    failure: dict[str, Any], test: dict[str, Any], expected: bool
) -> None:
    assert matches(failure, test) is expected
