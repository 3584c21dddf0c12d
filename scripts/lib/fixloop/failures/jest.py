"""Jest's terminal output -> failures.

Jest prints a `FAIL file` header per failing suite, then one `● describe > test` block (Jest joins the names
with a right-pointing angle quote) per failed test
(or `● Test suite failed to run` when the file did not load), and `Tests:` totals at the end.
"""

from __future__ import annotations

import re

from fixloop.failures.model import Counts, Failure, Parsed
from fixloop.failures.textutil import (
    ANGLE,
    block,
    clean_lines,
    counted,
    first_line,
    same_file,
    to_int,
    tolerant,
    unique,
)

RUNNER = "jest"

_SUITE = re.compile(r"^\s*(FAIL|PASS)\s+(.+?)(?:\s+\(\d[\d.]* ?m?s\))?\s*$")
_BULLET = re.compile(r"^\s*● (.+?)\s*$")
_STACK = re.compile(r"^\s*at (?:.*? \()?(.+?):(\d+):\d+\)?\s*$")
_END = re.compile(
    r"^\s*(?:Test Suites:|Tests:|Snapshots:|Time:|Ran all test suites|Summary of all failing tests)"
)
_TESTS_TOTAL = re.compile(r"^\s*Tests:\s+(.+)$")
_SUITE_ERROR = "Test suite failed to run"


@tolerant(RUNNER)
def parse_jest(text: str) -> Parsed:
    lines = clean_lines(text)
    failures: list[Failure] = []
    suite_file: str | None = None
    title: str | None = None
    body: list[str] = []
    totals: dict[str, int] = {}
    for line in [*lines, "Ran all test suites."]:  # the sentinel closes the last block
        suite = _SUITE.match(line)
        bullet = _BULLET.match(line)
        if suite or bullet or _END.match(line):
            if title is not None:
                failures.append(_failure(suite_file, title, body))
            title, body = None, []
        if suite:
            suite_file = suite.group(2).split()[-1]  # a project's displayName may come first
        elif bullet:
            title = bullet.group(1)
        elif title is not None:
            body.append(line)
        total = _TESTS_TOTAL.match(line)
        if total:
            totals = counted(total.group(1))
    found = unique(failures)
    tests = [failure for failure in found if failure.kind == "test"]
    counts = Counts(passed=totals.get("passed"), failed=totals.get("failed"), skipped=totals.get("skipped"))
    return Parsed(runner=RUNNER, failures=found, counts=counts, run_error=bool(found) and not tests)


def _failure(suite_file: str | None, title: str, body: list[str]) -> Failure:
    file_line = None
    for line in body:
        stack = _STACK.match(line)
        if stack and suite_file and same_file(stack.group(1), suite_file):
            file_line = to_int(stack.group(2))
            break
    message = first_line(body) or title
    if title == _SUITE_ERROR or suite_file is None:  # the file did not load, or jest itself failed
        test_id = suite_file or RUNNER
        return Failure(RUNNER, test_id, "error", message, suite_file, file_line, block(body))
    path = " > ".join(part.strip() for part in title.split(f" {ANGLE} "))
    return Failure(RUNNER, f"{suite_file} > {path}", "test", message, suite_file, file_line, block(body))
