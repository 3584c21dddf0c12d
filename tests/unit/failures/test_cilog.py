from __future__ import annotations

import gzip
import time
import tracemalloc
from pathlib import Path

import pytest
from failures.logfixtures import LOGS, fixture_text, write_github_log
from hypothesis import given, settings
from hypothesis import strategies as st

from fixloop.core.errors import FixloopError
from fixloop.failures.cilog import Limits, Reduced, reduce_log_file, reduce_log_text

PYTEST_DETAILS = """cart = <shop.cart.Cart object at 0x7f3a2c1b9e50>

    def test_total_with_coupon(cart):
        cart.add(Item(sku="BOOK-1", price=Decimal("10.00")))
        cart.apply(Coupon(code="SAVE10", percent=10))
>       assert cart.total() == Decimal("8.10")
E       AssertionError: assert Decimal('9.00') == Decimal('8.10')
E        +  where Decimal('9.00') = total()
E        +    where total = <shop.cart.Cart object at 0x7f3a2c1b9e50>.total
E        +  and   Decimal('8.10') = Decimal('8.10')

tests/test_cart.py:42: AssertionError
------------------------------ Captured log call -------------------------------
INFO     shop.cart:cart.py:57 applying coupon SAVE10 to 1 item(s)
INFO     shop.cart:cart.py:71 coupon SAVE10 skipped: minimum order 20.00 not reached"""


def failure_rows(reduced: Reduced) -> list[tuple[object, ...]]:
    return [
        (
            r.job,
            r.step,
            r.failure.runner,
            r.failure.test_id,
            r.failure.kind,
            r.failure.line,
            r.lines_kept,
            r.lines_dropped,
        )
        for r in reduced.failures
    ]


def check_github_reduction(reduced: Reduced) -> None:
    assert failure_rows(reduced) == [
        ("lint", "Run ruff", "diagnostics", "src/shop/cart.py:3:8 F401", "lint", 3, 2, 0),
        (
            "test (3.11)",
            "Run tests",
            "pytest",
            "tests/test_cart.py::test_total_with_coupon",
            "test",
            42,
            16,
            0,
        ),
    ]
    pytest_failure = reduced.failures[1].failure
    assert pytest_failure.message == "AssertionError: assert Decimal('9.00') == Decimal('8.10')"
    assert pytest_failure.details == PYTEST_DETAILS
    steps = [
        (s.job, s.step, s.exit_code, s.runner, s.failures, len(s.tail), s.tail_dropped) for s in reduced.steps
    ]
    assert steps == [
        ("lint", "Run ruff", 1, "diagnostics", 1, 0, 0),
        ("test (3.11)", "Run tests", 1, "pytest", 1, 0, 0),
        ("docs", "Build the docs", 2, None, 0, 200, 5812),
    ]
    assert reduced.steps[2].tail[-4:] == (
        "/home/runner/work/shop/shop/docs/install.rst:12:undefined label: 'configuration'",
        "make: *** [Makefile:20: html] Error 2",
        "make: Leaving directory '/home/runner/work/shop/shop/docs'",
        "Process completed with exit code 2.",
    )
    assert reduced.lines_read == 32076
    assert reduced.lines_kept == 2 + 16 + 200
    assert reduced.failures_dropped == 0
    assert reduced.notes == ()
    returned = [line for r in reduced.failures for line in r.failure.details.split("\n")]
    returned += [line for step in reduced.steps for line in step.tail]
    assert not any("\x1b" in line or "\r" in line or "2024-05-14T" in line for line in returned)


def test_a_several_megabyte_github_log_reduces_to_its_failures(github_log: Path) -> None:
    assert github_log.stat().st_size > 4_000_000
    check_github_reduction(reduce_log_file(github_log))


def test_the_same_log_in_memory_and_gzipped(github_log: Path, tmp_path: Path) -> None:
    text = github_log.read_text(encoding="utf-8")
    check_github_reduction(reduce_log_text(text))
    packed = tmp_path / "log.txt.gz"
    packed.write_bytes(gzip.compress(text.encode("utf-8")))
    check_github_reduction(reduce_log_file(packed))


def test_gitlab_job_log_without_a_marked_step() -> None:
    reduced = reduce_log_file(LOGS / "ci" / "gitlab_go_test.log")
    assert [(job, step, test_id, kind) for job, step, _, test_id, kind, *_ in failure_rows(reduced)] == [
        (None, "step_script", "TestTotalEmpty", "test"),
        (None, "step_script", "TestDiscounts/half", "test"),
        (None, "step_script", "TestCents", "test"),
        (None, "step_script", "store/store.go:6:27", "build"),
        (None, "step_script", "store/store.go:9:27", "build"),
    ]
    assert reduced.failures[0].failure.suite == "example.com/shop/cart"
    assert reduced.notes == (
        "the job failed (exit code 1); no step is marked as failed, these failures were found in its steps",
    )


def test_jenkins_console_log() -> None:
    reduced = reduce_log_file(LOGS / "ci" / "jenkins_jest.log")
    assert [(step, runner, test_id) for _, step, runner, test_id, *_ in failure_rows(reduced)] == [
        ("Test", "jest", "test/cart.test.js > cart > total > is zero for an empty cart"),
        ("Test", "jest", "test/cart.test.js > cart > applies a coupon"),
        ("Test", "jest", "test/cart.test.js > cart > keeps the line items"),
        ("Test", "jest", "test/broken.test.js"),
    ]


def test_a_raw_github_log_is_split_at_its_run_groups() -> None:
    text = (
        "2024-01-02T03:04:05.0000000Z ##[group]Run npm ci\n"
        "2024-01-02T03:04:05.1000000Z added 412 packages in 9s\n"
        "2024-01-02T03:04:06.0000000Z ##[endgroup]\n"
        "2024-01-02T03:04:07.0000000Z ##[group]Run cargo test\n"
        "2024-01-02T03:04:07.1000000Z ##[endgroup]\n"
        + "".join(
            f"2024-01-02T03:04:08.0000000Z {line}\n" for line in fixture_text("cargo/default.txt").split("\n")
        )
        + "2024-01-02T03:04:09.0000000Z ##[error]Process completed with exit code 101.\n"
    )
    reduced = reduce_log_text(text)
    assert [(step, test_id) for _, step, _, test_id, *_ in failure_rows(reduced)] == [
        ("cargo test", "tests::parses_amounts"),
        ("cargo test", "tests::empty_ledger_is_zero"),
        ("cargo test", "tests::rounding::rounds_half_up"),
    ]
    assert [(s.step, s.exit_code, s.runner) for s in reduced.steps] == [("cargo test", 101, "cargo")]


def many_failures_log(count: int) -> str:
    sections = "".join(
        f"_____ test_case_{n} _____\n" + "".join(f"E       line {k} of case {n}\n" for k in range(30))
        for n in range(count)
    )
    summary = "".join(
        f"FAILED tests/test_many.py::test_case_{n} - line 0 of case {n}\n" for n in range(count)
    )
    output = (
        "=================================== FAILURES ===================================\n"
        + sections
        + "=========================== short test summary info ============================\n"
        + summary
        + f"======= {count} failed in 2.00s =======\n"
    )
    return "".join(
        f"unit\tRun tests\t2024-01-02T03:04:05.0000000Z {line}\n" for line in output.split("\n")
    ) + ("unit\tRun tests\t2024-01-02T03:04:06.0000000Z ##[error]Process completed with exit code 1.\n")


def test_output_is_bounded_and_says_what_it_dropped() -> None:
    reduced = reduce_log_text(
        many_failures_log(50), Limits(lines_per_failure=10, total_lines=45, tail_lines=5000)
    )
    assert [(r.failure.test_id, r.lines_kept, r.lines_dropped) for r in reduced.failures] == [
        ("tests/test_many.py::test_case_0", 9, 22),
        ("tests/test_many.py::test_case_1", 9, 22),
        ("tests/test_many.py::test_case_2", 9, 22),
        ("tests/test_many.py::test_case_3", 9, 22),
        ("tests/test_many.py::test_case_4", 4, 27),
    ]
    assert reduced.failures[4].failure.details == (
        "E       line 0 of case 4\n"
        "E       line 1 of case 4\n"
        "[... 27 lines dropped ...]\n"
        "E       line 29 of case 4"
    )
    assert reduced.failures_dropped == 45
    assert reduced.lines_kept == 45
    assert reduced.steps[0].failures == 50


def test_default_limits_bound_a_log_full_of_failures() -> None:
    reduced = reduce_log_text(many_failures_log(300))
    assert reduced.lines_kept <= 2000
    assert all(r.lines_kept + (r.lines_dropped > 0) <= 200 for r in reduced.failures)
    assert len(reduced.failures) + reduced.failures_dropped == 300
    assert reduced.failures_dropped > 0


def test_a_log_without_any_failure_returns_its_last_lines() -> None:
    reduced = reduce_log_text("".join(f"step {n} done\n" for n in range(500)))
    assert reduced.failures == ()
    assert [(s.step, len(s.tail), s.tail_dropped, s.tail[-1]) for s in reduced.steps] == [
        (None, 200, 300, "step 499 done")
    ]
    assert reduced.notes == (
        "nothing in the log says the job failed; "
        "no failure was recognised, the log's last lines are returned",
    )


def test_an_empty_log_and_an_overlong_line(tmp_path: Path) -> None:
    assert reduce_log_text("") == Reduced(
        failures=(), steps=(), failures_dropped=0, lines_read=0, lines_kept=0
    )
    path = tmp_path / "one-line.log"
    path.write_text("x" * 5_000_000 + "\nFAILED tests/a.py::t - boom\n1 failed in 1.0s\n", encoding="utf-8")
    tracemalloc.start()
    try:
        reduced = reduce_log_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
    assert [r.failure.test_id for r in reduced.failures] == ["tests/a.py::t"]


def test_an_unreadable_log_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as raised:
        reduce_log_file(tmp_path / "missing.log")
    assert raised.value.code == "LOG_UNREADABLE"
    (tmp_path / "bad.gz").write_bytes(b"not gzip at all")
    with pytest.raises(FixloopError) as raised:
        reduce_log_file(tmp_path / "bad.gz")
    assert raised.value.code == "LOG_UNREADABLE"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=60) | st.sampled_from(many_failures_log(2).split("\n")), max_size=60))
def test_any_text_reduces_within_the_limits(lines: list[str]) -> None:
    limits = Limits(lines_per_failure=5, total_lines=12)
    reduced = reduce_log_text("\n".join(lines), limits)
    assert reduced.lines_kept <= 12
    returned = sum(
        1 + len(r.failure.details.split("\n")) if r.failure.details else 1 for r in reduced.failures
    )
    returned += sum(len(step.tail) for step in reduced.steps)
    assert returned <= reduced.lines_kept


def test_a_fifty_megabyte_log_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    size = write_github_log(path, scale=11)
    assert size > 50_000_000
    started = time.perf_counter()
    reduce_log_file(path)
    elapsed = time.perf_counter() - started
    tracemalloc.start()
    try:
        reduced = reduce_log_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    print(f"\n50 MB log: reduced in {elapsed:.2f} s; peak traced memory {peak / 1e6:.1f} MB")
    assert peak < 64_000_000
    assert [r.failure.test_id for r in reduced.failures] == [
        "src/shop/cart.py:3:8 F401",
        "tests/test_cart.py::test_total_with_coupon",
    ]
    assert reduced.lines_kept <= 2000
