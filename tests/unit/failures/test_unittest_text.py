from __future__ import annotations

import pytest
from failures.logfixtures import fixture_text

from fixloop.failures.model import Counts
from fixloop.failures.unittest_text import parse_unittest, unittest_id

ROOT = "/tmp/fixloop-capture/unittest_ledger/"
AMOUNTS, REPORT = ROOT + "tests/test_amounts.py", ROOT + "tests/test_report.py"
EXPECTED = [
    (
        "tests.test_amounts.ParseAmountTest.test_bad_input_raises",
        "test",
        AMOUNTS,
        15,
        "ValueError: invalid literal for int() with base 10: 'ten'",
    ),
    (
        "unittest.loader._FailedTest.tests.test_currency",
        "error",
        ROOT + "tests/test_currency.py",
        3,
        "ImportError: cannot import name 'currency' from 'ledger' (" + ROOT + "ledger/__init__.py)",
    ),
    (
        "setUpClass (tests.test_report.ReportTest)",
        "error",
        REPORT,
        9,
        "FileNotFoundError: [Errno 2] No such file or directory: 'missing-fixture.csv'",
    ),
    (
        "tests.test_amounts.BalanceTest.test_lists",
        "test",
        AMOUNTS,
        35,
        "AssertionError: Lists differ: [0, 100] != [100, 200]",
    ),
    (
        "tests.test_amounts.BalanceTest.test_sums_all_entries",
        "test",
        AMOUNTS,
        32,
        "AssertionError: 200 != 300",
    ),
    ("tests.test_amounts.ParseAmountTest.test_cents", "test", AMOUNTS, 12, "AssertionError: 105 != 150"),
    (
        "tests.test_amounts.ParseAmountTest.test_each_amount (text='2.5')",
        "test",
        AMOUNTS,
        20,
        "AssertionError: 205 != 250",
    ),
    (
        "tests.test_amounts.ParseAmountTest.test_each_amount (text='4.5')",
        "test",
        AMOUNTS,
        20,
        "AssertionError: 405 != 450",
    ),
    (
        "tests.test_amounts.RoundedTest.test_half_up",
        "test",
        AMOUNTS,
        40,
        "AssertionError: 2 != 3 : rounding is off",
    ),
    (
        "tests.test_report.TotalsTest.test_total_message [three entries] (count=3)",
        "test",
        REPORT,
        22,
        "AssertionError: 200 != 300",
    ),
]


@pytest.mark.parametrize("name", ["py310_quiet", "py310_verbose", "py312_quiet", "py312_verbose"])
def test_failures_errors_and_subtests_of_a_real_run(name: str) -> None:
    parsed = parse_unittest(fixture_text(f"unittest/{name}.txt"))
    assert [(f.test_id, f.kind, f.file, f.line, f.message) for f in parsed.failures] == EXPECTED
    assert parsed.counts == Counts(passed=None, failed=7, skipped=1, errors=3)
    assert parsed.run_error is False


def test_details_hold_the_traceback_and_the_docstring_is_not_the_message() -> None:
    failures = parse_unittest(fixture_text("unittest/py312_quiet.txt")).failures
    cents = next(f for f in failures if f.test_id.endswith("test_cents"))
    assert cents.details == (
        "Traceback (most recent call last):\n"
        f'  File "{AMOUNTS}", line 12, in test_cents\n'
        '    self.assertEqual(parse_amount("1.5"), 150)\n'
        "AssertionError: 105 != 150"
    )


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("test_b (pkg.mod.Case.test_b)", "pkg.mod.Case.test_b"),
        ("test_b (pkg.mod.Case)", "pkg.mod.Case.test_b"),
        ("test_b (pkg.mod.Case.test_b) [msg] (x=1, y='a b')", "pkg.mod.Case.test_b [msg] (x=1, y='a b')"),
        ("test_b (pkg.mod.Case) (<subtest>)", "pkg.mod.Case.test_b (<subtest>)"),
        ("setUpModule (pkg.mod)", "setUpModule (pkg.mod)"),
        ("tearDownClass (pkg.mod.Case)", "tearDownClass (pkg.mod.Case)"),
        ("something unusual", "something unusual"),
    ],
)
def test_ids_are_unittests_own(description: str, expected: str) -> None:
    assert unittest_id(description) == expected


def test_a_cut_off_run_keeps_what_the_status_lines_name() -> None:
    text = (
        "test_a (m.Case.test_a) ... ok\n"
        "test_b (m.Case.test_b) ... FAIL\n"
        "test_c (m.Case.test_c)\n"
        "Checks the third thing. ... ERROR\n"
        "test_d (m.Case.test_d) ... unexpected success\n"
        "\n"
        "======================================================================\n"
        "FAIL: test_b (m.Case.test_b)\n"
        "----------------------------------------------------------------------\n"
        "Traceback (most recent call last):\n"
    )
    parsed = parse_unittest(text)
    assert [(f.test_id, f.kind, f.message) for f in parsed.failures] == [
        ("m.Case.test_b", "test", "failed"),
        ("m.Case.test_c", "test", "error"),
        ("m.Case.test_d", "test", "unexpected success"),
    ]
    assert parsed.counts == Counts()


def test_unexpected_successes_and_a_clean_summary() -> None:
    text = (
        "x.u\n"
        "======================================================================\n"
        "UNEXPECTED SUCCESS: test_known (m.Case.test_known)\n"
        "----------------------------------------------------------------------\n"
        "Ran 3 tests in 0.001s\n"
        "\n"
        "FAILED (expected failures=1, unexpected successes=1)\n"
    )
    parsed = parse_unittest(text)
    assert [(f.test_id, f.message) for f in parsed.failures] == [("m.Case.test_known", "unexpected success")]
    assert parsed.counts == Counts(passed=None, failed=1, skipped=0, errors=0)
    clean = parse_unittest("....s\n" + "-" * 70 + "\nRan 5 tests in 0.010s\n\nOK (skipped=1)\n")
    assert (clean.failures, clean.counts) == ((), Counts(passed=4, failed=0, skipped=1, errors=0))


def test_only_import_errors_are_a_run_error() -> None:
    text = (
        "E\n" + "=" * 70 + "\n"
        "ERROR: tests.test_x (unittest.loader._FailedTest.tests.test_x)\n" + "-" * 70 + "\n"
        "ImportError: Failed to import test module: tests.test_x\n"
        "Traceback (most recent call last):\n"
        '  File "/p/tests/test_x.py", line 1, in <module>\n'
        "    import missing\n"
        "ModuleNotFoundError: No module named 'missing'\n"
        "\n" + "-" * 70 + "\nRan 1 test in 0.000s\n\nFAILED (errors=1)\n"
    )
    parsed = parse_unittest(text)
    assert [(f.kind, f.file, f.line, f.message) for f in parsed.failures] == [
        ("error", "/p/tests/test_x.py", 1, "ModuleNotFoundError: No module named 'missing'")
    ]
    assert parsed.run_error is True


def test_a_failure_and_an_error_in_teardown_are_both_kept() -> None:
    block = (
        "=" * 70
        + "\n{outcome}: test_b (m.Case.test_b)\n"
        + "-" * 70
        + "\nTraceback (most recent call last):\n{error}\n\n"
    )
    text = block.format(outcome="ERROR", error="OSError: cleanup") + block.format(
        outcome="FAIL", error="AssertionError"
    )
    text += "-" * 70 + "\nRan 1 test in 0.001s\n\nFAILED (failures=1, errors=1)\n"
    parsed = parse_unittest(text)
    assert [(f.test_id, f.kind, f.message) for f in parsed.failures] == [
        ("m.Case.test_b", "test", "OSError: cleanup"),
        ("m.Case.test_b", "test", "AssertionError"),
    ]
