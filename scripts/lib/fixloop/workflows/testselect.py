"""Which tests a run names and what became of each: runner detection from the configured test command,
names and labels, and whether a run's failures or counts say a named test failed, passed or did not run
(the command that runs exactly the named tests: testcommand.py).

A named test is a dict: `file`, `name`, `line` (from an agent's answer), and for a failure the run saw
before, its runner's `id` (e.g. `tests/test_x.py::test_y`) and, for go test, its package (`suite`).
"""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Mapping
from typing import Any

NamedTest = Mapping[str, Any]
OUTCOMES: tuple[str, ...] = ("failed", "passed", "not_run", "error")
_SEPARATORS = ("::", " > ", " \u203a ", ".")
_PARAMETERS = re.compile(r"\[[^\[\]]*\]$")
_UNITTEST_NOT_LOADED = "unittest.loader._FailedTest."


def detect_runner(command: str | None) -> str | None:
    """The test runner a command starts, when the engine can select tests for it (else None): pytest,
    unittest, vitest, jest, playwright, go, cargo or node-test."""
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
        if base == "go" and tokens[index + 1 : index + 2] == ["test"]:
            return "go"
        if base == "cargo" and "test" in tokens[index + 1 : index + 3]:  # `cargo test`, `cargo +nightly test`
            return "cargo"
        if base in ("node", "nodejs"):  # `node --test`: the option before any file
            options = itertools.takewhile(lambda word: word.startswith("-"), tokens[index + 1 :])
            if "--test" in options:
                return "node-test"
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
    test = {
        "id": test_id,
        "file": failure.get("file"),
        "name": short_name(test_id),
        "line": failure.get("line"),
    }
    if failure.get("suite"):
        test["suite"] = failure["suite"]  # go test's package
    return test


def label(test: NamedTest) -> str:
    """How a named test is shown to people and agents."""
    if test.get("id"):
        return str(test["id"])
    name, file = str(test.get("name") or ""), test.get("file")
    return f"{file}::{name}" if file and not name.startswith(str(file)) else name


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
    if test_id.startswith(_UNITTEST_NOT_LOADED) and test.get("id"):
        # a module that did not import fails its tests; a name the module does not hold is no failure of it
        return str(test["id"]).startswith(test_id.removeprefix(_UNITTEST_NOT_LOADED) + ".")
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
    if plain.startswith(wanted + "/") and not any(mark in plain for mark in ("::", " > ", " \u203a ")):
        return True  # go test: a subtest of the named test failed (`TestA/case`), so TestA failed
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
