"""Perl's `prove` (TAP::Harness; Test::More tests), with or without -v -> failures.

prove does not print the TAP of a passing run, nor its `not ok` lines without -v. What it always prints:
Test::More's diagnostics on stderr (`#   Failed test 'name'` then `#   at t/x.t line 7.`; unnamed,
`#   Failed test at t/x.t line 7.`), and the Test Summary Report: per failed file, `Failed tests:  2, 4-5`
(top-level test numbers), `Non-zero exit status: 2`, `Parse errors: ...`. A file's failed numbers are
named, in order, by its top-level diagnostics (indented ones belong to subtests, whose parent fails too);
with -v the `not ok N - name` lines of the file name them exactly.

test_id is the test's name (`test N` when it has none), `suite` and `file` its .t file. A file that fails
with no failed test (it died, or its plan is wrong) is one failure of kind "error" whose id is the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fixloop.failures.model import Counts, Failure, Parsed
from fixloop.failures.textutil import clean_lines, to_int, tolerant

RUNNER = "prove"

_REPORT = "Test Summary Report"
_FILE_HEADER = re.compile(r"^(\S+\.t) \.{2,}(?: |$)")
_FILE_SUMMARY = re.compile(r"^(\S+)\s+\(Wstat: .*?Tests: (\d+) Failed: (\d+)\)\s*$")
_FAILED_NUMBERS = re.compile(r"^\s+Failed tests?:\s+(.+?)\s*$")
_PROBLEM = re.compile(r"^\s+(Non-zero exit status: .+|Parse errors: .+|Non-zero wait status: .+)$")
_NAMED = re.compile(r"^#   Failed test '(.*)'\s*$")
_UNNAMED = re.compile(r"^#   Failed test at (\S+) line (\d+)\.\s*$")
_AT = re.compile(r"^#   at (\S+) line (\d+)\.\s*$")
_NOT_OK = re.compile(r"^not ok (\d+)(?: - (.*?))?(?:\s+#\s*(TODO|SKIP)\b.*)?\s*$", re.IGNORECASE)
_TOTALS = re.compile(r"^Files=(\d+), Tests=(\d+),")
_RESULT = re.compile(r"^Result: (PASS|FAIL|NOTESTS)\s*$")
_MAX_NUMBERS = 10_000  # failed test numbers read from the whole report
_MAX_LINE_CHARS = 20_000


@dataclass
class _File:
    failed_numbers: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    diagnostics: list[tuple[str, int | None]] = field(default_factory=list)  # (name, line)
    verbose: dict[int, str] = field(default_factory=dict)  # number -> name, from `not ok` lines


@tolerant(RUNNER)
def parse_prove(text: str) -> Parsed:
    lines = [line[:_MAX_LINE_CHARS] for line in clean_lines(text)]
    files: dict[str, _File] = {}
    pending_name: str | None = None
    current: str | None = None
    in_report = False
    failed_read = 0
    tests_total: int | None = None
    for line in lines:
        if line.strip() == _REPORT:
            in_report, current = True, None
            continue
        header, totals = _FILE_HEADER.match(line), _TOTALS.match(line)
        if totals:
            tests_total, in_report = to_int(totals.group(2)), False
            continue
        if in_report:
            current, added = _read_report_line(line, current, files, _MAX_NUMBERS - failed_read)
            failed_read += added
            continue
        if header:
            current = header.group(1)
            files.setdefault(current, _File())
        named, unnamed, at, not_ok = (
            _NAMED.match(line),
            _UNNAMED.match(line),
            _AT.match(line),
            _NOT_OK.match(line),
        )
        if named:
            pending_name = named.group(1)
        elif unnamed:
            files.setdefault(unnamed.group(1), _File()).diagnostics.append(("", to_int(unnamed.group(2))))
        elif at and pending_name is not None:
            files.setdefault(at.group(1), _File()).diagnostics.append((pending_name, to_int(at.group(2))))
            pending_name = None
        elif not_ok and current is not None and not not_ok.group(3):
            number = to_int(not_ok.group(1))
            if number is not None:
                files[current].verbose[number] = (not_ok.group(2) or "").strip()
    failures = [failure for name, found in files.items() for failure in _failures(name, found)]
    failed = sum(len(found.failed_numbers) for found in files.values())
    counts = Counts()
    if tests_total is not None:
        counts = Counts(passed=max(0, tests_total - failed), failed=failed)
    run_error = bool(failures) and all(failure.kind == "error" for failure in failures)
    return Parsed(runner=RUNNER, failures=tuple(failures), counts=counts, run_error=run_error)


def _read_report_line(
    line: str, current: str | None, files: dict[str, _File], room: int
) -> tuple[str | None, int]:
    """The file the report speaks of after `line`, and how many failed numbers the line added (at most
    `room`)."""
    summary, numbers, problem = _FILE_SUMMARY.match(line), _FAILED_NUMBERS.match(line), _PROBLEM.match(line)
    if summary:
        current = summary.group(1)
        files.setdefault(current, _File())
    elif numbers and current is not None:
        added = _numbers(numbers.group(1), room)
        files[current].failed_numbers += added
        return current, len(added)
    elif problem and current is not None:
        files[current].problems.append(problem.group(1))
    return current, 0


def _numbers(text: str, limit: int) -> list[int]:
    """`2, 4-6` -> [2, 4, 5, 6] (at most `limit` of them)."""
    found: list[int] = []
    for part in text.split(","):
        if len(found) >= limit:
            break
        first, _, last = part.strip().partition("-")
        start, end = to_int(first.strip()), to_int(last.strip() or first.strip())
        if start is not None and end is not None and start <= end:
            found += range(start, min(end, start + limit - len(found) - 1) + 1)
    return found


def _failures(name: str, found: _File) -> list[Failure]:
    if not found.failed_numbers:
        if not found.problems:
            return []
        message = "; ".join(found.problems)
        return [Failure(RUNNER, name, "error", message, file=name, suite=name)]
    failures = []
    for position, number in enumerate(found.failed_numbers):
        diagnosed = found.diagnostics[position] if position < len(found.diagnostics) else None
        title = found.verbose.get(number, diagnosed[0] if diagnosed else "")
        line = diagnosed[1] if diagnosed else None
        failures.append(
            Failure(
                RUNNER,
                title or f"test {number}",
                "test",
                f"test {number} failed" + (f": {title}" if title else ""),
                file=name,
                line=line,
                suite=name,
            )
        )
    return failures
