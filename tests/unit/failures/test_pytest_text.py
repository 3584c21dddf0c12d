from __future__ import annotations

import pytest
from failures.logfixtures import fixture_text

from fixloop.failures.model import Counts, Failure
from fixloop.failures.pytest_text import parse_pytest

CALC = "tests/test_calc.py"
CALC_FAILURES = [
    (f"{CALC}::test_add_negative", "test", CALC, 17, "assert -2 == -3"),
    (
        f"{CALC}::test_parse_price_rejects_words",
        "test",
        CALC,
        21,
        "ValueError: could not convert string to float: 'ten dollars'",
    ),
    (f"{CALC}::test_add_param[2-2-5]", "test", CALC, 26, "assert 4 == 5"),
    (
        f"{CALC}::TestDict::test_keys",
        "test",
        CALC,
        36,
        "AssertionError: assert {'a': 1, 'b': 2} == {'a': 1, 'b': 3}",
    ),
    (f"{CALC}::test_with_db", "error", CALC, 44, "RuntimeError: database is not reachable"),
]


def summary(failures: tuple[Failure, ...]) -> list[tuple[object, ...]]:
    return [(f.test_id, f.kind, f.file, f.line, f.message) for f in failures]


@pytest.mark.parametrize("name", ["default", "quiet", "verbose", "tb_short"])
def test_the_same_run_printed_every_way_gives_the_same_failures(name: str) -> None:
    parsed = parse_pytest(fixture_text(f"pytest/{name}.txt"))
    assert parsed.runner == "pytest"
    assert summary(parsed.failures) == CALC_FAILURES
    assert parsed.counts == Counts(passed=4, failed=4, skipped=1, errors=1)
    assert parsed.run_error is False
    assert parsed.notes == ()
    assert all(failure.runner == "pytest" and failure.suite is None for failure in parsed.failures)


def test_report_all_lists_the_error_first_as_pytest_does() -> None:
    parsed = parse_pytest(fixture_text("pytest/report_all.txt"))
    assert summary(parsed.failures) == [CALC_FAILURES[4], *CALC_FAILURES[:4]]


def test_details_hold_the_whole_section_of_the_failure() -> None:
    failure = parse_pytest(fixture_text("pytest/default.txt")).failures[0]
    assert failure.details == (
        "    def test_add_negative():\n"
        ">       assert add(-1, -1) == -3\n"
        "E       assert -2 == -3\n"
        "E        +  where -2 = add(-1, -1)\n"
        "\n"
        "tests/test_calc.py:17: AssertionError"
    )


def test_a_chained_traceback_keeps_every_frame() -> None:
    failure = parse_pytest(fixture_text("pytest/default.txt")).failures[1]
    lines = failure.details.split("\n")
    assert lines[0] == "    def test_parse_price_rejects_words():"
    assert "tests/test_calc.py:21:" in lines  # trailing spaces are dropped
    assert lines[-1] == "tests/test_calc.py:9: ValueError"


def test_collection_errors_are_a_run_error_with_the_file_and_line() -> None:
    parsed = parse_pytest(fixture_text("pytest/collection_errors.txt"))
    assert summary(parsed.failures) == [
        ("tests/test_broken.py", "error", "tests/test_broken.py", 3, "SyntaxError: invalid syntax"),
        (
            "tests/test_importerr.py",
            "error",
            "tests/test_importerr.py",
            1,
            "ModuleNotFoundError: No module named 'nowhere_module'",
        ),
    ]
    assert parsed.run_error is True
    assert parsed.counts == Counts(errors=2)
    assert parsed.failures[1].details.startswith(
        "ImportError while importing test module '/home/runner/work/shop/shop/tests/test_importerr.py'."
    )


def test_summary_lines_alone_are_enough() -> None:
    text = (
        "..F.\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_api.py::test_login[admin user] - KeyError: 'token'\n"
        "FAILED tests/test_api.py::TestOrders::test_list\n"
        "1 failed, 3 passed in 0.12s\n"
    )
    parsed = parse_pytest(text)
    assert summary(parsed.failures) == [
        ("tests/test_api.py::test_login[admin user]", "test", "tests/test_api.py", None, "KeyError: 'token'"),
        ("tests/test_api.py::TestOrders::test_list", "test", "tests/test_api.py", None, "failed"),
    ]
    assert parsed.counts == Counts(passed=3, failed=1)


def test_a_cut_off_output_gives_the_sections_it_shows_in_their_order() -> None:
    text = fixture_text("pytest/default.txt").split("=== short test summary info ===")[0]
    parsed = parse_pytest(text.rsplit("\n", 1)[0])
    assert [failure.test_id for failure in parsed.failures] == [
        f"{CALC}::test_with_db",  # ERRORS comes before FAILURES
        f"{CALC}::test_add_negative",
        f"{CALC}::test_parse_price_rejects_words",
        f"{CALC}::test_add_param[2-2-5]",
        f"{CALC}::TestDict::test_keys",
    ]
    assert summary(parsed.failures)[1:] == CALC_FAILURES[:4]
    assert parsed.counts == Counts()


def test_verbose_status_lines_name_failures_when_no_summary_is_printed() -> None:
    text = (
        "tests/test_a.py::test_one PASSED                                         [ 50%]\n"
        "tests/test_a.py::test_two FAILED                                         [100%]\n"
        "[gw1] [ 75%] ERROR tests/test_b.py::test_three\n"
    )
    parsed = parse_pytest(text)
    assert [(f.test_id, f.kind) for f in parsed.failures] == [
        ("tests/test_a.py::test_two", "test"),
        ("tests/test_b.py::test_three", "error"),
    ]


def test_a_usage_error_is_a_run_error() -> None:
    parsed = parse_pytest(
        "ERROR: file or directory not found: tests/test_missing.py\n\nno tests ran in 0.01s\n"
    )
    assert summary(parsed.failures) == [
        ("pytest", "error", None, None, "ERROR: file or directory not found: tests/test_missing.py")
    ]
    assert parsed.run_error is True


def test_a_broken_conftest_is_a_run_error() -> None:
    text = (
        "ImportError while loading conftest '/home/runner/work/shop/shop/tests/conftest.py'.\n"
        "tests/conftest.py:3: in <module>\n"
        "    from shop.db import engine\n"
        "E   ModuleNotFoundError: No module named 'shop.db'\n"
    )
    parsed = parse_pytest(text)
    assert summary(parsed.failures) == [
        (
            "/home/runner/work/shop/shop/tests/conftest.py",
            "error",
            "/home/runner/work/shop/shop/tests/conftest.py",
            None,
            "ModuleNotFoundError: No module named 'shop.db'",
        )
    ]
    assert parsed.run_error is True


def test_a_passing_run_has_counts_and_no_failures() -> None:
    parsed = parse_pytest(
        "....                                                                     [100%]\n4 passed in 0.03s\n"
    )
    assert parsed.failures == ()
    assert parsed.counts == Counts(passed=4)
    assert parsed.failed is False
    assert parsed.notes == ()


def test_text_without_pytest_output_gives_an_empty_result_and_a_note() -> None:
    parsed = parse_pytest("hello\nworld\n")
    assert parsed.failures == ()
    assert parsed.notes == ("no pytest results found in the output",)


def test_secrets_in_failures_are_masked() -> None:
    text = (
        "FAILED tests/test_api.py::test_auth - "
        "AssertionError: sent Authorization: Bearer abcdef0123456789xyz\n"
        "1 failed in 0.10s\n"
    )
    failure = parse_pytest(text).failures[0]
    assert failure.message == "AssertionError: sent Authorization: Bearer [REDACTED]"
