"""Which tests a run names, and how the engine runs exactly those: runner detection from the configured
test command, the command that selects tests by name per runner, and what became of each named test.

A named test is a dict: `file`, `name`, `line` (from an agent's answer), and for a failure the run saw
before, its runner's `id` (e.g. `tests/test_x.py::test_y`). The command is always the ENGINE's: the
configured `test_command` with selection arguments appended, never a command an agent wrote.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

NamedTest = Mapping[str, Any]
SELECTING_RUNNERS: tuple[str, ...] = ("pytest", "unittest", "vitest", "jest", "playwright")
OUTCOMES: tuple[str, ...] = ("failed", "passed", "not_run", "error")
_SEPARATORS = ("::", " > ", " \u203a ", ".")
_PARAMETERS = re.compile(r"\[[^\[\]]*\]$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
_REGEX_SPECIALS = re.compile(r"([.*+?^${}()|\[\]\\/])")


def detect_runner(command: str | None) -> str | None:
    """The test runner a command starts, when the engine can select tests for it (else None)."""
    if not command:
        return None
    try:
        tokens = shlex.split(command)
    except ValueError:
        tokens = command.split()
    for index, token in enumerate(tokens):
        base = token.rsplit("/", 1)[-1]
        if base in ("pytest", "py.test") or (base == "-m" and tokens[index + 1 : index + 2] == ["pytest"]):
            return "pytest"
        if base == "-m" and tokens[index + 1 : index + 2] == ["unittest"]:
            return "unittest"
        if base in ("vitest", "jest", "playwright"):
            return base
    return None


def short_name(test_id: str) -> str:
    """The last part of a runner's test id: `tests/t.py::TestA::test_b[1]` -> `test_b`."""
    text = _PARAMETERS.sub("", test_id.strip())
    for separator in ("::", " > ", " \u203a "):
        text = text.rsplit(separator, 1)[-1]
    return text.strip()


def from_failure(failure: Mapping[str, Any]) -> dict[str, Any]:
    """A failure the run saw, as a named test (its id kept for exact matching)."""
    test_id = str(failure.get("test_id") or "")
    return {
        "id": test_id,
        "file": failure.get("file"),
        "name": short_name(test_id),
        "line": failure.get("line"),
    }


def label(test: NamedTest) -> str:
    """How a named test is shown to people and agents."""
    if test.get("id"):
        return str(test["id"])
    name, file = str(test.get("name") or ""), test.get("file")
    return f"{file}::{name}" if file and not name.startswith(str(file)) else name


# ---- the command -----------------------------------------------------------------------------------


def _pattern(names: Iterable[str]) -> str:
    escaped = list(dict.fromkeys(_REGEX_SPECIALS.sub(r"\\\1", name) for name in names))
    return escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"


def _pytest_id(test: NamedTest) -> str | None:
    test_id, file, name = str(test.get("id") or ""), test.get("file"), str(test.get("name") or "")
    if "::" in test_id or test_id.endswith(".py"):
        return test_id
    if name.startswith(f"{file}::") or (not file and "::" in name):
        return name
    return f"{file}::{name}" if file and name else None


def _unittest_name(test: NamedTest) -> str | None:
    """The dotted name unittest selects a test by: its id (a subtest's description dropped), else the
    test file's module and the test's `Case.method` name (the module alone for a bare method name)."""
    test_id = str(test.get("id") or "").split(" ", 1)[0]
    if "." in test_id and _DOTTED.match(test_id) and not test_id.startswith("unittest."):
        return test_id  # not a fixture's (`setUpClass (m.Case)`) nor a module's that did not import
    file, name = (
        str(test.get("file") or "").removeprefix("./"),
        str(test.get("name") or "").replace("::", "."),
    )
    if not file.endswith(".py") or file.startswith("/") or ".." in file:
        return None
    module = file.removesuffix(".py").replace("/", ".")
    if not _DOTTED.match(module):
        return None
    if name.startswith(module + ".") and _DOTTED.match(name):
        return name
    if "." in name and _DOTTED.match(name):
        return f"{module}.{name}"
    return module


def selection_command(command: str, runner: str | None, tests: Sequence[NamedTest]) -> str | None:
    """`command` narrowed to `tests` for `runner`, or None when it cannot be (run the whole command then).

    pytest: the node ids appended; unittest: dotted test names appended (not after `discover`); vitest:
    `<files> -t <names>`; jest: `-t <names>`; playwright: `<file>:<line>` for each, else `-g <names>`.
    Names go in as escaped regular expressions.
    """
    if not tests or runner not in SELECTING_RUNNERS:
        return None
    names = [str(test.get("name") or "") for test in tests]
    files = [str(test.get("file") or "") for test in tests]
    if runner == "unittest":
        dotted = [_unittest_name(test) for test in tests]
        if any(item is None for item in dotted) or " discover" in f" {command}":
            return None  # `discover` takes no test names
        return " ".join([command, *(str(item) for item in dict.fromkeys(dotted))])
    if runner == "pytest":
        ids = [_pytest_id(test) for test in tests]
        if any(item is None for item in ids):
            return None
        return " ".join([command, *(shlex.quote(str(item)) for item in dict.fromkeys(ids))])
    if not all(names):
        return None
    if runner == "vitest":
        if not all(files):
            return None
        unique = (shlex.quote(file) for file in dict.fromkeys(files))
        return " ".join([command, *unique, "-t", shlex.quote(_pattern(names))])
    if runner == "jest":
        return f"{command} -t {shlex.quote(_pattern(names))}"
    lines = [test.get("line") for test in tests]
    if all(files) and all(isinstance(line, int) for line in lines):
        places = dict.fromkeys(f"{file}:{line}" for file, line in zip(files, lines, strict=True))
        return " ".join([command, *(shlex.quote(place) for place in places)])
    return f"{command} -g {shlex.quote(_pattern(names))}"


# ---- what became of a named test --------------------------------------------------------------------


def _same_file(one: object, other: object) -> bool:
    if not one or not other:
        return True  # an unknown side constrains nothing
    a = str(one).replace("\\", "/").removeprefix("./")
    b = str(other).replace("\\", "/").removeprefix("./")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _failure_file(failure: Mapping[str, Any]) -> str | None:
    if failure.get("file"):
        return str(failure["file"])
    test_id = str(failure.get("test_id") or "")
    return test_id.split("::", 1)[0] if "::" in test_id else None


def matches(failure: Mapping[str, Any], test: NamedTest) -> bool:
    """Whether `failure` is the named test failing (or its file failing to load, for an error)."""
    test_id = str(failure.get("test_id") or "")
    if test.get("id") and test_id == test["id"]:
        return True
    if not _same_file(_failure_file(failure), test.get("file")):
        return False
    if failure.get("kind") == "error" and test.get("file") and _failure_file(failure):
        return True  # the test's file did not load: the test cannot pass
    name = str(test.get("name") or "").strip()
    if not name:
        return False
    plain = _PARAMETERS.sub("", test_id.strip())
    wanted = _PARAMETERS.sub("", name)
    if plain == wanted or plain.endswith(tuple(separator + wanted for separator in _SEPARATORS)):
        return True
    return short_name(test_id) == short_name(name)


def outcome(run: Mapping[str, Any], test: NamedTest) -> str:
    """failed, passed, not_run (the run selected no test) or error (the run broke before saying)."""
    failures = [item for item in run.get("parsed_failures") or [] if isinstance(item, Mapping)]
    if any(matches(failure, test) for failure in failures):
        return "failed"
    exit_code = run.get("exit_code")
    if not run.get("started") or run.get("timed_out") or exit_code is None:
        return "error"
    if exit_code == 0:
        counts = run.get("counts") or {}
        ran = [counts.get(key) for key in ("passed", "failed")]
        if any(value is not None for value in ran) and not any(ran):
            return "not_run"
        return "passed"
    others_failed = any(failure.get("kind") == "test" for failure in failures)
    return "passed" if others_failed and not run.get("run_error") else "error"
