"""`cargo test` (and cargo-nextest) output -> failures.

Each test binary prints `test a::b ... FAILED` lines, then a `---- a::b stdout ----` section per failure
holding the panic (`thread 'a::b' panicked at src/lib.rs:6:25:` and its message), then `test result:` totals.
A crate that does not compile prints rustc's `error[E0425]: ...` / `--> file:line:col` blocks instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from fixloop.failures.diagnostics import parse_diagnostics
from fixloop.failures.model import Counts, Failure, Parsed
from fixloop.failures.textutil import block, clean_lines, to_int, tolerant, unique

RUNNER = "cargo"

_TEST_LINE = re.compile(r"^test (.+?) \.\.\. (FAILED|ok|ignored)\b")
_SECTION = re.compile(r"^---- (.+?) std(?:out|err) ----\s*$")
_NEXTEST_FAIL = re.compile(r"^\s*(?:FAIL|SIGSEGV|SIGABRT|SIGBUS|TIMEOUT) \[\s*[\d.]+s\] (\S+) (\S.*?)\s*$")
_NEXTEST_SECTION = re.compile(r"^\s*-{2,} STD(?:OUT|ERR):\s+(\S+) (\S.*?)(?:\s+-{2,})?\s*$")
_SECTION_END = re.compile(
    r"^(?:failures:|test result: |\s*Running |\s*Doc-tests |\s*(?:PASS|FAIL|SKIP) \[|\s*Summary \[)"
)
_RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")
_NEXTEST_SUMMARY = re.compile(r"^\s*Summary \[.*?\] +\d+ tests? run: (.*)$")
_RUNNING = re.compile(r"^\s*Running (?:unittests )?(\S+)")
_PANIC = re.compile(r"^thread '(.+?)'(?: \(\d+\))? panicked at (\S+?):(\d+):\d+:$")
_PANIC_OLD = re.compile(r"^thread '(.+?)' panicked at '(.*)', (\S+?):(\d+):\d+$")
_NOTE = re.compile(r"^(?:note: |stack backtrace:)")


@dataclass
class _Section:
    name: str
    suite: str | None
    lines: list[str] = field(default_factory=list)


@tolerant(RUNNER)
def parse_cargo(text: str) -> Parsed:
    lines = clean_lines(text)
    failed_names: list[tuple[str, str | None]] = []
    sections: list[_Section] = []
    by_name: dict[tuple[str, str | None], _Section] = {}
    current: _Section | None = None
    target: str | None = None
    totals = [0, 0, 0]
    saw_totals = False
    for line in lines:
        running, section = _RUNNING.match(line), _SECTION.match(line) or _NEXTEST_SECTION.match(line)
        if running:
            target = running.group(1)
        if section:
            name = section.group(section.re.groups)  # nextest names the binary first, then the test
            current = by_name.get((name, target))
            if current is None:  # nextest prints a test's stdout and its stderr apart
                current = by_name[(name, target)] = _Section(name, target)
                sections.append(current)
            continue
        if _SECTION_END.match(line):
            current = None
        elif current is not None:
            current.lines.append(line)
            continue
        status = _TEST_LINE.match(line)
        nextest = _NEXTEST_FAIL.match(line)
        if status and status.group(2) == "FAILED":
            failed_names.append((status.group(1), target))
        elif nextest:
            failed_names.append((nextest.group(2), target))
        result, summary = _RESULT.match(line), _NEXTEST_SUMMARY.match(line)
        if result:
            saw_totals = True
            totals = [total + int(number[-9:]) for total, number in zip(totals, result.groups(), strict=True)]
        elif summary:
            saw_totals = True
            words = dict(
                (word, int(number[-9:]))
                for number, word in re.findall(r"(\d+) (passed|failed|skipped)", line)
            )
            totals = [words.get("passed", 0), words.get("failed", 0), words.get("skipped", 0)]
    tests = [_failure(section) for section in sections]
    named = {test.test_id for test in tests}
    tests += [
        Failure(RUNNER, name, "test", "failed", suite=suite)
        for name, suite in failed_names
        if name not in named
    ]
    builds = [
        replace(failure, runner=RUNNER)
        for failure in parse_diagnostics(text).failures
        if failure.kind == "build"
    ]
    failures = unique([*tests, *builds])
    counts = Counts(passed=totals[0], failed=totals[1], skipped=totals[2]) if saw_totals else Counts()
    return Parsed(runner=RUNNER, failures=failures, counts=counts, run_error=bool(builds) and not tests)


def _failure(section: _Section) -> Failure:
    lines = section.lines
    message, file, number = "", None, None
    for index, line in enumerate(lines):
        new, old = _PANIC.match(line), _PANIC_OLD.match(line)
        if new:
            file, number = new.group(2), to_int(new.group(3))
            message = next((text.strip() for text in lines[index + 1 :] if text.strip()), "")
            message = "" if _NOTE.match(message) else message
            break
        if old:
            message, file, number = old.group(2), old.group(3), to_int(old.group(4))
            break
    if not message:
        message = next((line.strip() for line in lines if line.strip() and not _NOTE.match(line)), "failed")
    return Failure(RUNNER, section.name, "test", message, file, number, block(lines), section.suite)
