"""Python unittest's text output (`python -m unittest`, with or without -v; Django's runner prints the
same) -> failures.

Each failure or error gets a block: a line of 70 `=`, `FAIL: ` or `ERROR: ` and the test's description
(`test_b (pkg.mod.Case.test_b)` from Python 3.11, `test_b (pkg.mod.Case)` before; a subtest adds
`[message] (param=value)`; a docstring's first line may follow on its own line), a line of 70 `-`, then
the traceback. Python 3.11+ lists `UNEXPECTED SUCCESS: ...` lines too. `Ran N tests` and
`FAILED (failures=1, errors=2)` close the run. Verbose status lines (`... FAIL`) name what a cut-off
output lost.

test_id is unittest's own `TestCase.id()`: `pkg.mod.Case.test_b`, plus the subtest's description.
An ERROR inside a test is a test failure (its message names the exception); an error of a class or module
fixture or of a test module that did not import is kind "error".
"""

from __future__ import annotations

import re

from fixloop.failures.model import Counts, Failure, FailureKind, Parsed
from fixloop.failures.textutil import block, clean_lines, first_line, to_int, tolerant

RUNNER = "unittest"

_SEPARATOR_EQUALS = "=" * 70
_SEPARATOR_DASHES = "-" * 70
_HEADER = re.compile(r"^(FAIL|ERROR): (\S.*)$")
_UNEXPECTED = re.compile(r"^UNEXPECTED SUCCESS: (\S.*)$")
_DESCRIPTION = re.compile(r"^(\S+) \(([\w.]+)\)(?: (\S.*))?$")
_STATUS = re.compile(r"^\s*(.*?) \.\.\. (FAIL|ERROR|unexpected success)$")
_RAN = re.compile(r"^Ran (\d+) tests? in ")
_RESULT = re.compile(r"^(FAILED|OK)(?: \((.*)\))?\s*$")
_FRAME = re.compile(r'^\s*File "(.+)", line (\d+)')
_LIBRARY = re.compile(r"/lib/python\d|[\\/]site-packages[\\/]|[\\/]unittest[\\/]|^<frozen ")
_FIXTURES = frozenset({"setUpClass", "tearDownClass", "setUpModule", "tearDownModule"})
_LOADER_FAILURE = "unittest.loader._FailedTest."
_MAX_HEADER_LINES = 5
_MESSAGES = {"FAIL": "failed", "ERROR": "error", "unexpected success": "unexpected success"}
_MAX_LINE_CHARS = 20_000


def unittest_id(description: str) -> str:
    """unittest's id of the test a description names: `test_b (m.Case.test_b) (x=1)` -> `m.Case.test_b (x=1)`
    (Python 3.10 prints `test_b (m.Case)`)."""
    match = _DESCRIPTION.match(description.strip())
    if match is None:
        return description.strip()
    name, where, rest = match.groups()
    if name in _FIXTURES:
        return description.strip()  # a fixture's error holder: its id is its description
    base = where if where.endswith("." + name) else f"{where}.{name}"
    return f"{base} {rest}" if rest else base


def _kind(identifier: str, outcome: str) -> FailureKind:
    fixture = identifier.split(" ", 1)[0] in _FIXTURES
    if outcome == "ERROR" and (fixture or identifier.startswith(_LOADER_FAILURE)):
        return "error"
    return "test"


@tolerant(RUNNER)
def parse_unittest(text: str) -> Parsed:
    lines = [line[:_MAX_LINE_CHARS] for line in clean_lines(text)]
    failures: list[Failure] = []
    statuses: list[tuple[str, str]] = []
    ran: int | None = None
    totals: dict[str, int] = {}
    summary_seen = False
    index = 0
    while index < len(lines):
        line = lines[index]
        if line == _SEPARATOR_EQUALS and index + 1 < len(lines) and _HEADER.match(lines[index + 1]):
            failure, index = _read_block(lines, index + 1)
            failures.append(failure)
            continue
        index += 1
        unexpected, status = _UNEXPECTED.match(line), _STATUS.match(line)
        ran_match, result = _RAN.match(line), _RESULT.match(line)
        if unexpected:
            identifier = unittest_id(unexpected.group(1))
            failures.append(Failure(RUNNER, identifier, "test", "unexpected success"))
        elif status:
            described = status.group(1) if _DESCRIPTION.match(status.group(1)) else lines[index - 2]
            statuses.append((unittest_id(described), status.group(2)))
        elif ran_match:
            ran = to_int(ran_match.group(1))
        elif result and (ran is not None or result.group(2)):
            summary_seen = True
            totals = _totals(result.group(2) or "")
    named = {failure.test_id for failure in failures}
    for identifier, outcome in statuses:  # a cut-off output: the status line is all that is left
        if identifier not in named:
            failures.append(Failure(RUNNER, identifier, _kind(identifier, outcome), _MESSAGES[outcome]))
    counts = _counts(ran, totals, summary_seen)
    kept = tuple(failures)  # a test that failed and then erred in tearDown is reported twice, as here
    run_error = bool(kept) and all(failure.kind == "error" for failure in kept)
    return Parsed(runner=RUNNER, failures=kept, counts=counts, run_error=run_error)


def _read_block(lines: list[str], start: int) -> tuple[Failure, int]:
    """The failure whose header is at `start`, and the index of the line after its block."""
    header = _HEADER.match(lines[start])
    assert header is not None
    outcome, description = header.groups()
    index = start + 1
    while index < len(lines) and index - start < _MAX_HEADER_LINES and lines[index] != _SEPARATOR_DASHES:
        index += 1  # the docstring's first line
    if index < len(lines) and lines[index] == _SEPARATOR_DASHES:
        index += 1
    else:
        index = start + 1
    body_start = index
    while index < len(lines) and lines[index] not in (_SEPARATOR_EQUALS, _SEPARATOR_DASHES):
        index += 1
    body = lines[body_start:index]
    identifier = unittest_id(description)
    file, line = _place(body)
    return (
        Failure(
            RUNNER,
            identifier,
            _kind(identifier, outcome),
            _message(body) or _MESSAGES[outcome],
            file=file,
            line=line,
            details=block(body),
        ),
        index,
    )


def _place(body: list[str]) -> tuple[str | None, int | None]:
    """The first frame of the traceback in the project's own code (not Python's library)."""
    frames = [match.groups() for match in map(_FRAME.match, body) if match]
    own = [frame for frame in frames if not _LIBRARY.search(frame[0])]
    if not own:
        return None, None
    return own[0][0], to_int(own[0][1])


def _message(body: list[str]) -> str:
    """The exception the last traceback ended with: its first line after the last frame."""
    starts = [
        index for index, line in enumerate(body) if line.startswith("Traceback (most recent call last)")
    ]
    if not starts:
        return first_line(body)
    for line in body[starts[-1] + 1 :]:
        if line.strip() and not line.startswith((" ", "\t")):
            return line.strip()
    return ""


def _totals(text: str) -> dict[str, int]:
    """`failures=1, errors=2, expected failures=1` -> {"failures": 1, "errors": 2, "expected failures": 1}."""
    found: dict[str, int] = {}
    for part in text.split(","):
        key, _, value = part.strip().partition("=")
        number = to_int(value.strip())
        if number is not None:
            found[key.strip()] = number
    return found


def _counts(ran: int | None, totals: dict[str, int], summary_seen: bool) -> Counts:
    if not summary_seen and ran is None:
        return Counts()
    failed = totals.get("failures", 0) + totals.get("unexpected successes", 0)
    errors, skipped = totals.get("errors", 0), totals.get("skipped", 0)
    passed = None
    if ran is not None and not failed and not errors:  # subtests make the ran count useless otherwise
        passed = max(0, ran - skipped - totals.get("expected failures", 0))
    return Counts(passed=passed, failed=failed, skipped=skipped, errors=errors)
