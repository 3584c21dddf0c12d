"""Which runner printed an output, and parsing with the right parser."""

from __future__ import annotations

import re
from collections.abc import Callable

from fixloop.core.errors import FixloopError
from fixloop.failures.cargo import parse_cargo
from fixloop.failures.diagnostics import parse_diagnostics
from fixloop.failures.gotest import parse_go
from fixloop.failures.jest import parse_jest
from fixloop.failures.junit import parse_junit
from fixloop.failures.model import Parsed
from fixloop.failures.playwright import parse_playwright
from fixloop.failures.prove import parse_prove
from fixloop.failures.pytest_text import parse_pytest
from fixloop.failures.tap import parse_tap
from fixloop.failures.textutil import strip_ansi
from fixloop.failures.unittest_text import parse_unittest
from fixloop.failures.vitest import parse_vitest

TEXT_PARSERS: dict[str, Callable[[str], Parsed]] = {
    "pytest": parse_pytest,
    "jest": parse_jest,
    "vitest": parse_vitest,
    "playwright": parse_playwright,
    "go": parse_go,
    "cargo": parse_cargo,
    "unittest": parse_unittest,
    "prove": parse_prove,
    "tap": parse_tap,
    "diagnostics": parse_diagnostics,
}
RUNNERS = (*TEXT_PARSERS, "junit")

# (runner, pattern, weight): a runner's score is the sum of the weights of the lines that match.
# Earlier runners win ties: their markers are the more specific.
_MARKERS: tuple[tuple[str, re.Pattern[str], int], ...] = tuple(
    (runner, re.compile(pattern), weight)
    for runner, pattern, weight in (
        ("playwright", r"^\s*\d+\) \[[^\]]+\] \u203a ", 3),
        ("playwright", r"^\s*[✘✓\u00d7-]\s+\d+ (?:\[[^\]]+\] \u203a )?\S+:\d+:\d+ \u203a ", 3),
        ("playwright", r"^Running \d+ tests? using \d+ workers?", 3),
        ("vitest", r"^\s*⎯+ (?:Failed (?:Tests|Suites)|Unhandled Errors)", 3),
        ("vitest", r"^\s*Test Files {2}", 3),
        ("vitest", r"^\s*RUN\s+v\d+\.\d+", 3),
        ("vitest", r"^\s*FAIL\s+\S+ > ", 2),
        ("jest", r"^\s*● ", 3),
        ("jest", r"^Test Suites: ", 3),
        ("jest", r"^Tests: +\d", 2),
        ("pytest", r"^=+ (?:test session starts|FAILURES|ERRORS|short test summary info) =+$", 3),
        ("pytest", r"^(?:FAILED|ERROR) \S+\.py", 3),
        ("pytest", r"^=*\s*\d+ (?:failed|passed|errors?)(?:, \d+ \w+)* in \d+(?:\.\d+)?s", 3),
        ("cargo", r"^test result: ", 3),
        ("cargo", r"^running \d+ tests?$", 3),
        ("cargo", r"^---- .+ std(?:out|err) ----$", 3),
        ("cargo", r"^error\[E\d{4}\]", 3),
        ("cargo", r"^test \S+ \.\.\. (?:ok|FAILED)", 2),
        ("go", r"^\s*--- FAIL: ", 3),
        ("go", r"^(?:FAIL|ok)\s+\S+\s+(?:\d+\.\d+s|\[build failed\]|\[setup failed\]|\(cached\))", 3),
        ("go", r"^=== RUN ", 2),
        ("go", r'^\{"(?:Time|ImportPath)":.*"Action":"(?:output|fail|build-output|build-fail)"', 3),  # -json
        ("unittest", r"^Ran \d+ tests? in \d", 3),
        ("unittest", r"^(?:FAIL|ERROR|UNEXPECTED SUCCESS): \S+ \([\w.]+\)", 3),
        ("unittest", r"^FAILED \((?:failures|errors|skipped|expected failures|unexpected successes)=\d", 3),
        ("unittest", r"^\s*\S+ \([\w.]+\)(?: .*)? \.\.\. (?:ok|FAIL|ERROR|skipped|expected failure)", 2),
        ("prove", r"^Test Summary Report$|^Files=\d+, Tests=\d+, |^Result: (?:PASS|FAIL|NOTESTS)$", 3),
        ("prove", r"^\S+\.t \.{2,}(?: |$)", 2),
        ("tap", r"^TAP version \d+$|^\s*# Subtest: ", 3),
        ("tap", r"^\s*(?:not )?ok \d+\b", 2),
        ("tap", r"^\s*1\.\.\d+$", 1),
        (
            "diagnostics",
            r"^\S+:\d+:\d+: (?:fatal error|error)\b|^\S+\(\d+,\d+\): error TS|^\S+:\d+: error:"
            r"|^\S+:\d+:\d+: [A-Z]{1,4}\d{2,4} |^\S+:\d+:\d+ - error|^\s+\d+:\d+\s+error\s"
            r"|^\S+:\d+:\d+: .*\[Error/[^\]]+\]$|^\s*--> \S+:\d+:\d+\s*$",
            1,
        ),
    )
)
_SCANNED_LINES = 20_000  # from each end of a long output: markers sit at the start and at the end
_PROVE_DECIDES = 6  # prove -v prints each file's TAP: two of prove's own markers outweigh any amount of it


def detect(text: str) -> str | None:
    """The runner that printed `text` (one of RUNNERS), or None when nothing in it is recognisable."""
    head = text.lstrip("\ufeff \t\r\n")[:200]
    if head.startswith(("<?xml", "<testsuites", "<testsuite")):
        return "junit"
    if head.startswith("{") and '"Action"' in head:
        return "go"  # go test -json
    lines = text.split("\n")
    if len(lines) > 2 * _SCANNED_LINES:
        lines = lines[:_SCANNED_LINES] + lines[-_SCANNED_LINES:]
    scores: dict[str, int] = {}
    for raw in lines:
        line = strip_ansi(raw[:1000]).rstrip("\r")
        for runner, pattern, weight in _MARKERS:
            if pattern.search(line):
                scores[runner] = scores.get(runner, 0) + weight
                break
    if not scores:
        return None
    if scores.get("prove", 0) >= _PROVE_DECIDES:
        return "prove"
    order = [runner for runner, _, _ in _MARKERS]
    return max(scores, key=lambda runner: (scores[runner], -order.index(runner)))


def parse(text: str | bytes, runner: str | None = None) -> Parsed:
    """Parse a test run's or a build's output; `runner` (one of RUNNERS) skips detection.

    Never raises on bad input; an unknown `runner` name is a caller's error (FixloopError unknown_runner).
    """
    if runner is not None and runner not in RUNNERS:
        raise FixloopError("UNKNOWN_RUNNER", f"unknown runner {runner!r}", runners=list(RUNNERS))
    if runner == "junit":
        return parse_junit(text)
    if isinstance(text, bytes):
        if runner is None and detect(text[:200].decode("utf-8", "replace")) == "junit":
            return parse_junit(text)
        text = text.decode("utf-8", "replace")
    chosen = runner or detect(text)
    if chosen is None:
        return Parsed(runner="unknown", notes=("no test runner, compiler or linter output recognised",))
    if chosen == "junit":
        return parse_junit(text)
    return TEXT_PARSERS[chosen](text)
