from __future__ import annotations

import time

import pytest
from failures.logfixtures import LOGS
from failures.real_runs import REFERENCES
from hypothesis import given, settings
from hypothesis import strategies as st

from fixloop.core.errors import FixloopError
from fixloop.failures import RUNNERS, Parsed, detect, parse

FIXTURES = sorted(path for path in LOGS.glob("*/*") if path.parent.name != "ci" and path not in REFERENCES)
EXPECTED_RUNNER = {"compiler": "diagnostics", "pytest": "pytest", "jest": "jest", "vitest": "vitest"}
EXPECTED_RUNNER |= {"playwright": "playwright", "junit": "junit", "go": "go", "cargo": "cargo"}
EXPECTED_RUNNER |= {"unittest": "unittest", "tap": "tap", "prove": "prove"}

# Pieces of every runner's output, so that generated texts reach deep into the parsers.
FRAGMENTS = [
    "=================================== FAILURES ===================================",
    "==================================== ERRORS ====================================",
    "=========================== short test summary info ============================",
    "____________________________ test_add ____________________________",
    "________________________ ERROR at setup of test_db ________________________",
    "____________________ ERROR collecting tests/test_x.py _____________________",
    "FAILED tests/test_x.py::test_y - assert 1 == 2",
    "ERROR tests/test_x.py",
    "E       assert 1 == 2",
    "tests/test_x.py:12: AssertionError",
    "1 failed, 2 passed in 0.12s",
    "!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!",
    "INTERNALERROR> Traceback",
    "ImportError while loading conftest '/x/conftest.py'.",
    "FAIL test/a.test.js",
    "  \u25cf a \u203a b",
    "  \u25cf Test suite failed to run",
    "      at Object.<anonymous> (test/a.test.js:3:7)",
    "Tests:       1 failed, 1 total",
    "\u23af\u23af\u23af\u23af Failed Tests 1 \u23af\u23af\u23af\u23af",
    "\u23af\u23af\u23af\u23af Unhandled Errors \u23af\u23af\u23af\u23af",
    " FAIL  vt/a.test.ts > b > c",
    " \u276f vt/a.test.ts:3:9",
    "\u23af\u23af\u23af\u23af\u23af[1/2]\u23af",
    "      Tests  1 failed | 2 passed (3)",
    "  1) [chromium] \u203a a.spec.ts:3:5 \u203a works \u2500\u2500\u2500",
    "  \u2718  1 [chromium] \u203a a.spec.ts:3:5 \u203a works (1.2s)",
    "  1 failed",
    "  1 flaky",
    "    [chromium] \u203a a.spec.ts:3:5 \u203a works",
    "Error: No tests found",
    "<testsuite><testcase name='t'><failure message='m'>x</failure></testcase></testsuite>",
    "--- FAIL: TestX (0.00s)",
    "    --- FAIL: TestX/sub (0.00s)",
    "=== RUN   TestX",
    "    x_test.go:12: want 1",
    "panic: boom",
    "FAIL\texample.com/x\t0.01s",
    "FAIL\texample.com/x [build failed]",
    "# example.com/x",
    "x.go:3:4: undefined: y",
    '{"Action":"output","Package":"p","Output":"--- FAIL: TestX (0.00s)\\n"}',
    "test a::b ... FAILED",
    "---- a::b stdout ----",
    "thread 'a::b' panicked at src/lib.rs:3:5:",
    "thread 'a::b' panicked at 'm', src/lib.rs:3:5",
    "failures:",
    "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out",
    "error[E0425]: cannot find value `x`",
    "  --> src/lib.rs:3:5",
    "src/a.c:3:4: error: expected ';'",
    "src/a.ts(3,4): error TS2322: bad",
    "app/x.py:3: error: bad  [misc]",
    "app/x.py:3:1: F401 `os` imported but unused",
    "/abs/src/a.js",
    "  3:4  error  'x' is not defined  no-undef",
    "=" * 70,
    "-" * 70,
    "FAIL: test_b (pkg.mod.Case.test_b) (x=1)",
    "ERROR: setUpClass (pkg.mod.Case)",
    "UNEXPECTED SUCCESS: test_c (pkg.mod.Case)",
    'Traceback (most recent call last):\n  File "t.py", line 3, in test_b',
    "test_b (pkg.mod.Case.test_b) ... FAIL",
    "Ran 3 tests in 0.001s",
    "FAILED (failures=1, errors=2, expected failures=1)",
    "TAP version 13",
    "# Subtest: outer",
    "    not ok 1 - inner # TODO later",
    "not ok 2 - outer",
    "  ---\n  at: Test.<anonymous> (/p/t.js:3:5)\n  ...",
    "ok 1 should be equal",
    "1..2",
    "# fail  1",
    "Bail out! no database",
    "#   Failed test 'cents'\n#   at t/a.t line 7.",
    "#   Failed test at t/a.t line 9.",
    "t/a.t .. ",
    "Test Summary Report",
    "t/a.t (Wstat: 256 (exited 1) Tests: 3 Failed: 1)",
    "  Failed tests:  2, 4-9999999999",
    "  Parse errors: No plan found in TAP output",
    "Files=1, Tests=3,  0 wallclock secs",
    "",
    "    ",
]
texts = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=40), max_size=40).map("\n".join)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_fixture_is_detected_and_parsed(path: object) -> None:
    from pathlib import Path

    assert isinstance(path, Path)
    text = path.read_text(encoding="utf-8")
    runner = EXPECTED_RUNNER[path.parent.name]
    assert detect(text) == runner
    parsed = parse(text)
    assert parsed.runner == runner
    assert parsed.failures
    assert parsed.failures == parse(text, runner=runner).failures


def test_detect_names_none_for_plain_text() -> None:
    assert detect("Installing dependencies\nDone in 3.2s\n") is None
    parsed = parse("Installing dependencies\nDone in 3.2s\n")
    assert parsed == Parsed(runner="unknown", notes=("no test runner, compiler or linter output recognised",))


def test_junit_bytes_are_detected() -> None:
    data = (LOGS / "junit" / "surefire.xml").read_bytes()
    assert parse(data).runner == "junit"
    assert len(parse(data).failures) == 2


def test_an_unknown_runner_name_is_a_caller_error() -> None:
    with pytest.raises(FixloopError) as raised:
        parse("x", runner="mocha")
    assert raised.value.code == "UNKNOWN_RUNNER"
    assert raised.value.details == {"runners": list(RUNNERS)}


@settings(max_examples=150, deadline=None)
@given(texts, st.sampled_from([None, *RUNNERS]))
def test_no_parser_raises_and_each_ends_quickly(text: str, runner: str | None) -> None:
    started = time.monotonic()
    parsed = parse(text, runner=runner)
    assert time.monotonic() - started < 2.0
    assert isinstance(parsed, Parsed)
    assert all(failure.message.count("\n") == 0 for failure in parsed.failures)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    assert isinstance(parse(data), Parsed)
    assert isinstance(parse(data, runner="junit"), Parsed)


def test_a_long_pathological_line_is_parsed_quickly() -> None:
    text = "\n".join(
        [
            "a" * 200_000,
            "_" * 50_000 + " x",
            "test " + "a " * 50_000 + "...",
            "FAILED " + "x - " * 30_000,
            ":1:" * 50_000,
            "\u203a " * 50_000,
        ]
    )
    for runner in [None, *RUNNERS]:
        started = time.monotonic()
        parse(text, runner=runner)
        assert time.monotonic() - started < 2.0, runner
