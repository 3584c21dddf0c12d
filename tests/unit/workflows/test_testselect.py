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
        ("go test ./...", "go"),
        ("go vet ./...", None),
        ("cargo test --workspace", "cargo"),
        ("cargo +nightly test", "cargo"),
        ("cargo build", None),
        ("node --test", "node-test"),
        ("node --experimental-vm-modules --test test/", "node-test"),
        ("node script.js --test", None),
        ("node node_modules/.bin/jest", "jest"),
        ("", None),
        (None, None),
        ("echo 'unbalanced", None),
    ],
)
def test_detect_runner(command: str | None, runner: str | None) -> None:
    assert detect_runner(command) == runner


NEW = {"file": "tests/test_calc.py", "name": "test_divide", "line": 4}


def test_names_and_labels() -> None:
    assert short_name("tests/t.py::TestA::test_b[1-2]") == "test_b"
    assert short_name("src/a.test.ts > math > adds") == "adds"
    assert from_failure({"test_id": "tests/t.py::test_b", "file": "tests/t.py", "line": 3}) == {
        "id": "tests/t.py::test_b",
        "file": "tests/t.py",
        "name": "test_b",
        "line": 3,
    }
    go = from_failure({"test_id": "TestA/b", "file": "a_test.go", "line": 9, "suite": "example.com/m/a"})
    assert (go["id"], go["name"], go["suite"]) == ("TestA/b", "TestA/b", "example.com/m/a")
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
