"""The failing tests a user's bug description names, in the form the project's runner reports them, so that
they can run alone before the whole suite.

    pytest        tests/test_x.py::TestA::test_b[1]
    unittest      tests.test_x.CaseTest.test_b           (module, a Capitalised case, a test* method)
    go            TestParse, TestDiff/Cycle/Graph#01     (Test/Example/Fuzz, its subtests after slashes)
    cargo         tests::parses_cents                    (a path of two parts or more)
    jest, vitest  test/a.test.js > describe > test name  (as they report a failure; a line or quote ends it)

Other runners (node --test, playwright) are not looked for: their names cannot be told from prose.
"""

from __future__ import annotations

import re
from typing import Any

from fixloop.workflows.testselect import short_name

MAX_DESCRIPTION_SCANNED = 100_000
MAX_NAMED = 20
_PYTEST = re.compile(r"[\w./-]+\.py::[\w.:\[\]-]+")
_UNITTEST = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.[A-Z]\w*\.test\w*\b")  # module.Case.test
_GO = re.compile(r"\b(?:Test|Example|Fuzz)[A-Z0-9_]\w*(?:/[\w#+=-]+(?:\.[\w#+=-]+)*)*")
_CARGO = re.compile(r"\b[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+\b")
_JS = re.compile(r"([\w./@-]+\.(?:test|spec)\.[cm]?[jt]sx?)( (?:>|\u203a) [^\n\"'`]+)")
_JS_SEPARATOR = re.compile(r"\s+(?:>|\u203a)\s+")


def _pytest(text: str) -> list[dict[str, Any]]:
    ids = dict.fromkeys(match.group(0).rstrip(".:") for match in _PYTEST.finditer(text))  # a sentence's end
    return [{"id": node, "file": node.split("::", 1)[0], "name": short_name(node)} for node in ids]


def _unittest(text: str) -> list[dict[str, Any]]:
    ids = dict.fromkeys(match.group(0) for match in _UNITTEST.finditer(text))
    return [{"id": dotted, "file": None, "name": dotted.rsplit(".", 1)[1]} for dotted in ids]


def _go(text: str) -> list[dict[str, Any]]:
    names = dict.fromkeys(match.group(0) for match in _GO.finditer(text))
    return [{"id": name, "file": None, "name": name} for name in names]


def _cargo(text: str) -> list[dict[str, Any]]:
    paths = dict.fromkeys(match.group(0) for match in _CARGO.finditer(text))
    return [{"id": path, "file": None, "name": path.rsplit("::", 1)[1]} for path in paths]


def _jest_like(text: str) -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for match in _JS.finditer(text):
        parts = [part.strip() for part in _JS_SEPARATOR.split(match.group(2)) if part.strip()]
        if parts:
            test_id = " > ".join([match.group(1), *parts])
            found.setdefault(test_id, {"id": test_id, "file": match.group(1), "name": parts[-1]})
    return list(found.values())


_FINDERS = {
    "pytest": _pytest,
    "unittest": _unittest,
    "go": _go,
    "cargo": _cargo,
    "jest": _jest_like,
    "vitest": _jest_like,
}


def named_tests(description: str, runner: str | None) -> list[dict[str, Any]]:
    """The tests `description` names for `runner` (at most MAX_NAMED), as named tests."""
    find = _FINDERS.get(runner or "")
    return find(description[:MAX_DESCRIPTION_SCANNED])[:MAX_NAMED] if find else []
