"""The argument list that runs exactly the named tests, per runner, and why the whole command runs when it
cannot be built safely."""

from __future__ import annotations

from typing import Any

import pytest

from fixloop.workflows.testcommand import Selection, base_argv, select

NEW = {"file": "tests/test_calc.py", "name": "test_divide", "line": 4}
# two tests of different depths: cut to the shallower, so the deeper one's siblings run too, never fewer
GO_RUN = r"-run=^(TestOptions|TestDiff)$/^(EquateApproxTime#01|Project3)$"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest -q", ["pytest", "-q"]),
        (".venv/bin/python -m pytest 'tests/a b.py'", [".venv/bin/python", "-m", "pytest", "tests/a b.py"]),
        ("CI=1 LANG=C npx vitest run", ["env", "CI=1", "LANG=C", "npx", "vitest", "run"]),
        (
            "pytest -q && echo done",
            "the test command uses shell syntax (&), so it is not split into arguments",
        ),
        ("pytest | tee out", "the test command uses shell syntax (|), so it is not split into arguments"),
        ("pytest $ARGS", "the test command uses shell syntax ($), so it is not split into arguments"),
        ("pytest tests/*.py", "the test command uses shell syntax (*), so it is not split into arguments"),
        ("pytest > log 2>&1", "the test command uses shell syntax (& >), so it is not split into arguments"),
        ("pytest `cat args`", "the test command uses shell syntax (`), so it is not split into arguments"),
        (
            "pytest\nrm x",
            "the test command uses shell syntax (line break), so it is not split into arguments",
        ),
        ("pytest 'open", "the test command cannot be split into arguments (No closing quotation)"),
        ("time pytest", "the test command starts with 'time', which only a shell runs"),
        ("cd sub", "the test command starts with 'cd', which only a shell runs"),
        ("X=1", "the test command names no program"),
    ],
)
def test_base_argv(command: str, expected: list[str] | str) -> None:
    assert base_argv(command) == expected


def argv(command: str, tests: list[dict[str, Any]]) -> list[str] | None:
    selection = select(command, tests)
    assert selection is not None
    return list(selection.argv) if selection.argv is not None else None


@pytest.mark.parametrize(
    ("command", "tests", "expected"),
    [
        ("pytest -q", [NEW], ["pytest", "-q", "tests/test_calc.py::test_divide"]),
        (
            "pytest",
            [{"file": "t/test_a.py", "name": "TestA::test_b"}],
            ["pytest", "t/test_a.py::TestA::test_b"],
        ),
        ("pytest", [{"file": "t/a.py", "name": "t/a.py::test_b"}], ["pytest", "t/a.py::test_b"]),
        (
            "python3 -m pytest",
            [NEW, {"id": "tests/test_x.py::test_y[1]", "file": None, "name": "test_y"}, NEW],
            ["python3", "-m", "pytest", "tests/test_calc.py::test_divide", "tests/test_x.py::test_y[1]"],
        ),
        (
            "python3 -m unittest",
            [{"id": "tests.test_a.Case.test_b (x=1)", "file": "/p/tests/test_a.py", "name": "x"}],
            ["python3", "-m", "unittest", "tests.test_a.Case.test_b"],
        ),
        (
            "python3 -m unittest -v",
            [{"file": "tests/test_a.py", "name": "Case.test_new"}, {"file": "./test_b.py", "name": "test_c"}],
            ["python3", "-m", "unittest", "-v", "tests.test_a.Case.test_new", "test_b"],
        ),
        (
            "python3 -m unittest",
            [{"file": "tests/test_a.py", "name": "tests.test_a.Case.t"}],
            ["python3", "-m", "unittest", "tests.test_a.Case.t"],
        ),
        (
            "npx vitest run",
            [
                {"id": "test/a.test.js > parse > reads 1.5", "file": "test/a.test.js", "name": "reads 1.5"},
                {"file": "src/b.test.ts", "name": "adds (1+1)"},
            ],
            [
                "npx",
                "vitest",
                "run",
                "test/a.test.js",
                "src/b.test.ts",
                "-t",
                r"(parse reads 1\.5|adds \(1\+1\))",
            ],
        ),
        (
            "npx jest --ci",
            [{"id": "test/a.test.js > balance > sums", "file": "test/a.test.js", "name": "sums"}],
            ["npx", "jest", "--ci", r"test\/a\.test\.js", "-t", "balance sums"],
        ),
        ("npx jest", [{"file": None, "name": "sums a.b"}], ["npx", "jest", "-t", r"sums a\.b"]),
        ("npx playwright test", [NEW], ["npx", "playwright", "test", "tests/test_calc.py:4"]),
        (
            "npx playwright test",
            [{"file": "e2e/login.spec.ts", "name": "logs in"}],
            ["npx", "playwright", "test", "-g", "logs in"],
        ),
        (
            "go test -count=1 ./...",
            [
                {"id": "TestOptions/EquateApproxTime#01", "suite": "example.com/m/opts"},
                {"id": "TestDiff/Project3/Inequal", "suite": "example.com/m"},
            ],
            ["go", "test", "-count=1", GO_RUN, "example.com/m/opts", "example.com/m"],
        ),
        (
            "go test ./...",
            [
                {"id": "TestNameOf/#04", "suite": "example.com/m/function"},
                {"id": "TestSort.Keys", "suite": None},
            ],
            ["go", "test", "./...", r"-run=^(TestNameOf|TestSort\.Keys)$"],
        ),
        ("go test", [{"name": "TestTypeString"}], ["go", "test", "-run=^TestTypeString$"]),
        (
            "cargo test",
            [{"id": "tests::cents", "file": "src/lib.rs"}, {"id": "tests::rounding::rounds_half_up"}],
            ["cargo", "test", "--", "--exact", "tests::cents", "tests::rounding::rounds_half_up"],
        ),
        (
            "cargo test -- --nocapture",
            [{"name": "cents"}],
            ["cargo", "test", "--", "--nocapture", "--exact", "cents"],
        ),
        (
            "node --test test/",
            [{"id": "parseAmount > reads 1.5 (cents)", "file": "/p/test/a.test.js"}],
            ["node", "--test", r"--test-name-pattern=reads 1\.5 \(cents\)", "test/"],
        ),
    ],
)
def test_each_runner_gets_an_argument_list(
    command: str, tests: list[dict[str, Any]], expected: list[str]
) -> None:
    assert argv(command, tests) == expected


@pytest.mark.parametrize(
    ("command", "tests", "reason"),
    [
        ("npm test", [NEW], "fixloop cannot name single tests to this test command's runner"),
        ("make check", [NEW], "fixloop cannot name single tests to this test command's runner"),
        (
            "pytest -q; echo done",
            [NEW],
            "the test command uses shell syntax (;), so it is not split into arguments",
        ),
        ("pytest", [{"file": None, "name": "test_b"}], "pytest: test_b has no file to make a node id of"),
        ("pytest", [{"id": "--rootdir=/x"}], "pytest: --rootdir=/x has no file to make a node id of"),
        (
            "pytest",
            [{"id": "-p::evil"}],
            "pytest: the node id '-p::evil' would be read as an option",
        ),
        (
            "python3 -m unittest",
            [{"id": "setUpClass (tests.test_a.Case)", "file": None, "name": "x"}],
            "unittest: 'setUpClass (tests.test_a.Case)' has no dotted name unittest can load",
        ),
        (
            "python3 -m unittest",
            [{"file": "/abs/test_a.py", "name": "Case.test_b"}],
            "unittest: 'Case.test_b' has no dotted name unittest can load",
        ),
        (
            "python3 -m unittest discover -s tests",
            [{"file": "tests/test_a.py", "name": "Case.test_b"}],
            "unittest: `unittest discover` takes no test names",
        ),
        ("npx vitest run", [{"file": None, "name": "x"}], "vitest: a named test has no file"),
        (
            "npx vitest run",
            [{"file": "--config=evil.js", "name": "x"}],
            "vitest: the file '--config=evil.js' would be read as an option",
        ),
        ("cargo test", [{"id": "--ignored"}], "cargo: '--ignored' is not a Rust test path"),
        ("go test ./...", [{"file": "a_test.go"}], "go: a named test has no name"),
    ],
)
def test_the_whole_command_runs_and_says_why(command: str, tests: list[dict[str, Any]], reason: str) -> None:
    assert select(command, tests) == Selection(None, reason)


def test_no_named_test_is_no_selection() -> None:
    assert select("pytest", []) is None


def test_a_hostile_test_name_stays_one_argument() -> None:
    name = "x'; touch /tmp/owned; echo '$(id)`id`"
    selection = select("pytest -q", [{"id": f"tests/test_a.py::{name}"}])
    assert selection is not None and selection.argv == ("pytest", "-q", f"tests/test_a.py::{name}")
    assert (
        selection.shown
        == "pytest -q " + "'tests/test_a.py::x'\"'\"'; touch /tmp/owned; echo '\"'\"'$(id)`id`'"
    )
    vitest = select("npx vitest run", [{"file": "test/a.test.js", "name": name}])
    assert vitest is not None and vitest.argv is not None
    assert vitest.argv[-2:] == ("-t", r"x'; touch \/tmp\/owned; echo '\$\(id\)`id`")
