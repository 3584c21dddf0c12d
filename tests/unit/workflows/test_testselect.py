"""Selecting tests by name per runner, and telling what became of a named test in a run."""

from __future__ import annotations

from typing import Any

import pytest

from fixloop.workflows.testselect import (
    detect_runner,
    from_failure,
    label,
    matches,
    outcome,
    selection_command,
    short_name,
)


@pytest.mark.parametrize(
    ("command", "runner"),
    [
        ("pytest -q", "pytest"),
        (".venv/bin/python -m pytest tests", "pytest"),
        ("/usr/bin/py.test", "pytest"),
        ("npx vitest run", "vitest"),
        ("node_modules/.bin/jest --ci", "jest"),
        ("npx playwright test", "playwright"),
        ("npm test", None),
        ("make check", None),
        ("go test ./...", None),
        ("", None),
        (None, None),
        ("echo 'unbalanced", None),
    ],
)
def test_detect_runner(command: str | None, runner: str | None) -> None:
    assert detect_runner(command) == runner


NEW = {"file": "tests/test_calc.py", "name": "test_divide", "line": 4}


@pytest.mark.parametrize(
    ("runner", "tests", "expected"),
    [
        ("pytest", [NEW], "pytest -q tests/test_calc.py::test_divide"),
        (
            "pytest",
            [{"file": "t/test_a.py", "name": "TestA::test_b"}],
            "pytest -q t/test_a.py::TestA::test_b",
        ),
        ("pytest", [{"file": "t/a.py", "name": "t/a.py::test_b"}], "pytest -q t/a.py::test_b"),
        (
            "pytest",
            [NEW, {"id": "tests/test_x.py::test_y[1]", "file": None, "name": "test_y"}],
            "pytest -q tests/test_calc.py::test_divide 'tests/test_x.py::test_y[1]'",
        ),
        ("pytest", [{"file": None, "name": "test_b"}], None),
        ("vitest", [NEW], "pytest -q tests/test_calc.py -t test_divide"),
        (
            "vitest",
            [NEW, {"file": "src/a.test.ts", "name": "adds (1+1)"}],
            "pytest -q tests/test_calc.py src/a.test.ts -t '(test_divide|adds \\(1\\+1\\))'",
        ),
        ("vitest", [{"file": None, "name": "x"}], None),
        ("jest", [{"file": "a.test.js", "name": "sums a.b"}], "pytest -q -t 'sums a\\.b'"),
        ("playwright", [NEW], "pytest -q tests/test_calc.py:4"),
        ("playwright", [{"file": "e2e/login.spec.ts", "name": "logs in"}], "pytest -q -g 'logs in'"),
        (None, [NEW], None),
        ("pytest", [], None),
    ],
)
def test_selection_command(runner: str | None, tests: list[dict[str, Any]], expected: str | None) -> None:
    # The base command stays as configured; only selection arguments are appended.
    assert selection_command("pytest -q", runner, tests) == expected


def test_names_and_labels() -> None:
    assert short_name("tests/t.py::TestA::test_b[1-2]") == "test_b"
    assert short_name("src/a.test.ts > math > adds") == "adds"
    assert from_failure({"test_id": "tests/t.py::test_b", "file": "tests/t.py", "line": 3}) == {
        "id": "tests/t.py::test_b",
        "file": "tests/t.py",
        "name": "test_b",
        "line": 3,
    }
    assert label({"id": "x::y", "name": "y"}) == "x::y"
    assert label(NEW) == "tests/test_calc.py::test_divide"
    assert label({"file": None, "name": "adds"}) == "adds"


@pytest.mark.parametrize(
    ("failure", "test", "expected"),
    [
        ({"test_id": "tests/test_calc.py::test_divide", "kind": "test"}, NEW, True),
        ({"test_id": "tests/test_calc.py::test_divide[3]", "kind": "test"}, NEW, True),
        ({"test_id": "tests/other.py::test_divide", "kind": "test"}, NEW, False),
        ({"test_id": "tests/test_calc.py::test_divide_more", "kind": "test"}, NEW, False),
        ({"test_id": "tests.test_calc.test_divide", "kind": "test", "file": None}, NEW, True),
        (
            {"test_id": "src/a.test.ts > math > adds", "kind": "test", "file": "src/a.test.ts"},
            {"file": "src/a.test.ts", "name": "adds"},
            True,
        ),
        ({"test_id": "tests/test_calc.py", "kind": "error", "file": "tests/test_calc.py"}, NEW, True),
        ({"test_id": "tests/other.py", "kind": "error", "file": "tests/other.py"}, NEW, False),
        ({"test_id": "x::y", "kind": "test"}, {"id": "x::y", "name": "y", "file": "elsewhere.py"}, True),
    ],
)
def test_matches(failure: dict[str, Any], test: dict[str, Any], expected: bool) -> None:
    assert matches(failure, test) is expected


def run(**fields: Any) -> dict[str, Any]:
    return {
        "parsed_failures": [],
        "exit_code": 0,
        "started": True,
        "timed_out": False,
        "counts": {},
        **fields,
    }


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (
            run(
                exit_code=1, parsed_failures=[{"test_id": "tests/test_calc.py::test_divide", "kind": "test"}]
            ),
            "failed",
        ),
        (run(counts={"passed": 1, "failed": 0}), "passed"),
        (run(), "passed"),  # the output named no counts: exit 0 is all there is
        (run(counts={"passed": 0, "failed": 0, "skipped": 3}), "not_run"),
        (run(exit_code=1, parsed_failures=[{"test_id": "tests/b.py::test_x", "kind": "test"}]), "passed"),
        (run(exit_code=4, run_error=True), "error"),
        (run(exit_code=1, run_error=True, parsed_failures=[{"test_id": "b.py::t", "kind": "test"}]), "error"),
        (run(exit_code=None, timed_out=True), "error"),
        (run(started=False, exit_code=None), "error"),
    ],
)
def test_outcome(facts: dict[str, Any], expected: str) -> None:
    assert outcome(facts, NEW) == expected


@pytest.mark.parametrize(
    ("command", "tests", "expected"),
    [
        (
            "python3 -m unittest",
            [{"id": "tests.test_a.Case.test_b (x=1)", "file": "/p/tests/test_a.py", "name": "x"}],
            "python3 -m unittest tests.test_a.Case.test_b",
        ),
        (
            "python3 -m unittest -v",
            [{"file": "tests/test_a.py", "name": "Case.test_new"}, {"file": "./test_b.py", "name": "test_c"}],
            "python3 -m unittest -v tests.test_a.Case.test_new test_b",
        ),
        (
            "python3 -m unittest",
            [{"file": "tests/test_a.py", "name": "tests.test_a.Case.t"}],
            "python3 -m unittest tests.test_a.Case.t",
        ),
        ("python3 -m unittest", [{"id": "setUpClass (tests.test_a.Case)", "file": None, "name": "x"}], None),
        ("python3 -m unittest", [{"file": "/abs/test_a.py", "name": "Case.test_b"}], None),
        ("python3 -m unittest", [{"file": "tests/test-a.py", "name": "Case.test_b"}], None),
        ("python3 -m unittest discover -s tests", [{"file": "tests/test_a.py", "name": "Case.test_b"}], None),
    ],
)
def test_unittest_selection(command: str, tests: list[dict[str, Any]], expected: str | None) -> None:
    assert detect_runner(command) == "unittest"
    assert selection_command(command, "unittest", tests) == expected
