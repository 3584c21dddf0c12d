from __future__ import annotations

import pytest
from failures.logfixtures import fixture_text

from fixloop.failures.cargo import parse_cargo
from fixloop.failures.model import Counts

EXPECTED = [
    ("tests::parses_amounts", "src/lib.rs", 6, "amount is a number: ParseIntError { kind: InvalidDigit }"),
    (
        "tests::empty_ledger_is_zero",
        "src/lib.rs",
        20,
        "assertion `left == right` failed: an empty ledger has no balance",
    ),
    ("tests::rounding::rounds_half_up", "src/lib.rs", 35, "rounding is off"),
]


@pytest.mark.parametrize("name", ["default", "backtrace"])
def test_failed_tests_with_their_panics(name: str) -> None:
    parsed = parse_cargo(fixture_text(f"cargo/{name}.txt"))
    assert [(f.test_id, f.file, f.line, f.message) for f in parsed.failures] == EXPECTED
    assert all(f.kind == "test" and f.suite == "src/lib.rs" for f in parsed.failures)
    assert parsed.counts == Counts(passed=1, failed=3, skipped=1)
    assert parsed.run_error is False


def test_details_hold_the_section() -> None:
    failure = parse_cargo(fixture_text("cargo/default.txt")).failures[1]
    assert failure.details == (
        "thread 'tests::empty_ledger_is_zero' (31307) panicked at src/lib.rs:20:9:\n"
        "assertion `left == right` failed: an empty ledger has no balance\n"
        "  left: 0\n"
        " right: 1"
    )


def test_compile_errors_are_a_run_error() -> None:
    parsed = parse_cargo(fixture_text("cargo/build_error.txt"))
    assert [(f.test_id, f.kind, f.file, f.line, f.message) for f in parsed.failures] == [
        (
            "src/lib.rs:15:20 E0425",
            "build",
            "src/lib.rs",
            15,
            "error[E0425]: cannot find function `balanse` in this scope",
        ),
        ("src/lib.rs:16:27 E0308", "build", "src/lib.rs", 16, "error[E0308]: mismatched types"),
    ]
    assert parsed.run_error is True
    assert parsed.failures[1].details == (
        "error[E0308]: mismatched types\n"
        "  --> src/lib.rs:16:27\n"
        "   |\n"
        '16 |         let unused: u32 = "x";\n'
        "   |                     ---   ^^^ expected `u32`, found `&str`\n"
        "   |                     |\n"
        "   |                     expected due to this"
    )


def test_the_old_panic_format_and_a_failure_without_a_section() -> None:
    text = (
        "running 2 tests\n"
        "test parser::tests::reads_header ... FAILED\n"
        "test parser::tests::reads_body ... FAILED\n"
        "\n"
        "failures:\n"
        "\n"
        "---- parser::tests::reads_header stdout ----\n"
        "thread 'parser::tests::reads_header' panicked at 'no header found', src/parser.rs:88:9\n"
        "\n"
        "test result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out\n"
    )
    parsed = parse_cargo(text)
    assert [(f.test_id, f.file, f.line, f.message) for f in parsed.failures] == [
        ("parser::tests::reads_header", "src/parser.rs", 88, "no header found"),
        ("parser::tests::reads_body", None, None, "failed"),
    ]
    assert parsed.counts == Counts(passed=0, failed=2, skipped=0)


def test_nextest_output() -> None:
    text = (
        "    Starting 3 tests across 1 binary\n"
        "        PASS [   0.004s] ledger tests::sums_entries\n"
        "        FAIL [   0.005s] ledger tests::parses_amounts\n"
        "\n"
        "--- STDOUT:              ledger tests::parses_amounts ---\n"
        "\n"
        "running 1 test\n"
        "test tests::parses_amounts ... FAILED\n"
        "\n"
        "--- STDERR:              ledger tests::parses_amounts ---\n"
        "thread 'tests::parses_amounts' panicked at src/lib.rs:6:25:\n"
        "amount is a number: ParseIntError { kind: InvalidDigit }\n"
        "\n"
        "     Summary [   0.006s] 3 tests run: 2 passed, 1 failed, 0 skipped\n"
    )
    parsed = parse_cargo(text)
    assert [(f.test_id, f.line, f.message) for f in parsed.failures] == [
        ("tests::parses_amounts", 6, "amount is a number: ParseIntError { kind: InvalidDigit }")
    ]
    assert parsed.counts == Counts(passed=2, failed=1, skipped=0)
