"""pytest's terminal output (-q, default, -v, -rA; --tb long, short, line or no) -> failures.

The short test summary (`FAILED node - message`) names the failures; the `____ title ____` sections under
FAILURES and ERRORS hold their details. Either is enough: a cut-off output still gives what it shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fixloop.failures.model import Counts, Failure, FailureKind, Parsed
from fixloop.failures.textutil import block, clean_lines, counted, same_file, to_int, tolerant, unique

RUNNER = "pytest"

_RULE = re.compile(r"^={3,} ?(.*?) ?={3,}$")
_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$")
_SUMMARY_ENTRY = re.compile(r"^(FAILED|ERROR) (\S.*?)(?: - (.*))?$")
# pytest 9 reports a failed unittest subtest as `SUBFAILED(x=1) node - message` or
# `SUBFAILED[message] (x=1) node - message`; its section is titled `Case.test (x=1)`.
_SUBTEST_ENTRY = re.compile(r"^SUBFAILED((?:\[.*?\])? ?(?:\(.*?\))?) (\S+::\S+)(?: - (.*))?$")
_VERBOSE = re.compile(r"^(\S[^\s:]*::.*?) (FAILED|ERROR)(?: |$)")
_XDIST = re.compile(r"^\[gw\d+\] \[ *\d+%\] (FAILED|ERROR) (\S.*?)\s*$")
_TOTALS = re.compile(r"^(?:\d+ [a-z]+,? )+in \d+(?:\.\d+)?s\b|^no tests ran in ")
_LOCATION = re.compile(r"^(\S+?):(\d+):(?: |$)")
_EXCEPTION = re.compile(r"^(?:[\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Failed|Timeout)\b|assert\b)")
_SYNTAX_LOCATION = re.compile(r'File "(.+)", line (\d+)')
_SETUP = re.compile(r"^ERROR at (setup|teardown) of (.+)$")
_COLLECTING = re.compile(r"^ERROR collecting (.+)$")
_CONFTEST = re.compile(r"^ImportError while loading conftest '(.+)'\.$")


@dataclass
class _Section:
    title: str
    in_errors: bool
    lines: list[str] = field(default_factory=list)


@dataclass
class _Output:
    sections: list[_Section] = field(default_factory=list)
    summary: list[tuple[str, str, str]] = field(default_factory=list)  # (FAILED|ERROR, node id, message)
    verbose: list[tuple[str, str]] = field(default_factory=list)  # (FAILED|ERROR, node id)
    totals: str | None = None
    interrupted: bool = False
    session_errors: list[Failure] = field(default_factory=list)


@tolerant(RUNNER)
def parse_pytest(text: str) -> Parsed:
    output = _read(clean_lines(text))
    failures, run_level = _failures(output)
    test_level = [failure for failure in failures if failure.test_id not in run_level]
    totals = counted(output.totals or "")
    counts = Counts(
        passed=totals.get("passed"),
        failed=totals.get("failed"),
        skipped=totals.get("skipped"),
        errors=totals.get("errors"),
    )
    run_error = bool(run_level or output.interrupted) and not test_level
    return Parsed(runner=RUNNER, failures=failures, counts=counts, run_error=run_error)


def _read(lines: list[str]) -> _Output:
    output = _Output()
    rule: str | None = None
    section: _Section | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        rule_match = _RULE.match(line)
        if rule_match or _TOTALS.match(line):
            body = rule_match.group(1) if rule_match else line
            if _TOTALS.match(body):
                output.totals = body
            rule, section = (body if rule_match else rule), None
            continue
        if line.startswith("!") and ("Interrupted" in line or "during collection" in line):
            output.interrupted = True
            continue
        if rule in ("FAILURES", "ERRORS"):
            section_match = _SECTION.match(line)
            if section_match:
                section = _Section(section_match.group(1), rule == "ERRORS")
                output.sections.append(section)
            elif section is not None:
                section.lines.append(line)
            continue
        index = _read_outside_sections(lines, index, line, rule, output)
    return output


def _read_outside_sections(lines: list[str], index: int, line: str, rule: str | None, output: _Output) -> int:
    """Summary entries, -v status lines and session-level errors; returns the next line to read."""
    entry, subtest = _SUMMARY_ENTRY.match(line), _SUBTEST_ENTRY.match(line)
    if entry and rule in (None, "short test summary info"):
        output.summary.append((entry.group(1), entry.group(2).strip(), (entry.group(3) or "").strip()))
        return index
    if subtest and rule in (None, "short test summary info"):
        node = f"{subtest.group(2)} {subtest.group(1).strip()}"
        output.summary.append(("FAILED", node, (subtest.group(3) or "").strip()))
        return index
    status = _VERBOSE.match(line) or _XDIST.match(line)
    if status:
        outcome, node = (status.group(2), status.group(1)) if status.re is _VERBOSE else status.groups()
        output.verbose.append((outcome, node.strip()))
        return index
    conftest = _CONFTEST.match(line)
    if line.startswith(("ERROR: ", "INTERNALERROR>")) or conftest:
        end = index
        while end < len(lines) and lines[end].strip() and not _RULE.match(lines[end]) and end - index < 200:
            end += 1
        body = [line, *lines[index:end]]
        test_id = conftest.group(1) if conftest else RUNNER
        message = _message(body) if conftest else line.removeprefix("INTERNALERROR> ").strip()
        output.session_errors.append(
            Failure(
                RUNNER, test_id, "error", message, file=test_id if conftest else None, details=block(body)
            )
        )
        return end
    return index


def _failures(output: _Output) -> tuple[tuple[Failure, ...], set[str]]:
    """The failures in the order pytest listed them, and the ids of those that are not about one test."""
    named: list[tuple[str, str, str]] = list(output.summary)
    if not named:
        named = [(outcome, node, "") for outcome, node in output.verbose]
    by_subject: dict[tuple[bool, str], list[_Section]] = {}
    for section in output.sections:
        by_subject.setdefault((section.in_errors, _section_subject(section)), []).append(section)
    taken: set[int] = set()
    failures: list[Failure] = []
    run_level: set[str] = set()
    for outcome, node, summary_message in named:
        found = _take_section(by_subject, taken, node, outcome == "ERROR")
        failure = _failure(node, outcome == "ERROR", found, summary_message)
        failures.append(failure)
        if "::" not in node:
            run_level.add(failure.test_id)
    for section in output.sections:  # sections no summary line named (a cut-off output)
        if id(section) in taken:
            continue
        node = _node_of_section(section)
        failure = _failure(node, section.in_errors, section, "")
        failures.append(failure)
        if _COLLECTING.match(section.title):
            run_level.add(node)
    for failure in output.session_errors:
        failures.append(failure)
        run_level.add(failure.test_id)
    return unique(failures), run_level


def _headline(node: str) -> str:
    """The title pytest gives a node's section: `tests/t.py::TestA::test_b[1]` -> `TestA.test_b[1]`."""
    _, _, rest = node.partition("::")
    return rest.replace("::", ".") if rest else node


def _section_subject(section: _Section) -> str:
    setup = _SETUP.match(section.title)
    if setup:
        return setup.group(2)
    collecting = _COLLECTING.match(section.title)
    return collecting.group(1) if collecting else section.title


def _take_section(
    by_subject: dict[tuple[bool, str], list[_Section]], taken: set[int], node: str, is_error: bool
) -> _Section | None:
    """The section of `node`: same title; of those, the one whose traceback is in the node's file."""
    headline, file = _headline(node), node.partition("::")[0]
    candidates = by_subject.get((is_error, headline), [])
    if not candidates:
        return None
    chosen = next((s for s in candidates if _first_location(s.lines, file)), candidates[0])
    candidates.remove(chosen)
    taken.add(id(chosen))
    return chosen


def _node_of_section(section: _Section) -> str:
    subject = _section_subject(section)
    if _COLLECTING.match(section.title):
        return subject
    location = next((m for m in map(_LOCATION.match, section.lines) if m), None)
    if location is None:
        return subject
    return location.group(1) + "::" + subject.replace(".", "::")


def _first_location(lines: list[str], file: str) -> int | None:
    for line in lines:
        location = _LOCATION.match(line)
        if location and same_file(location.group(1), file):
            return to_int(location.group(2))
    return None


def _message(lines: list[str]) -> str:
    raised = [line[1:].strip() for line in lines if line == "E" or line.startswith("E ")]
    chosen = next((line for line in raised if _EXCEPTION.match(line)), None)
    return chosen or next((line for line in raised if line), "")


def _failure(node: str, is_error: bool, section: _Section | None, summary_message: str) -> Failure:
    file = node.partition("::")[0]
    collecting = "::" not in node
    kind: FailureKind = "error" if is_error else "test"
    lines = section.lines if section else []
    message = _message(lines) or summary_message
    if not message and lines:  # --tb=line or an exception without E lines: `path:12: ValueError`
        located = [m for m in map(_LOCATION.match, lines) if m]
        message = lines[-1].split(": ", 1)[-1].strip() if located else ""
    line = _first_location(lines, file)
    if collecting and line is None:
        for raised in lines:
            syntax = _SYNTAX_LOCATION.search(raised)
            if syntax and same_file(syntax.group(1), file):
                line = to_int(syntax.group(2))
                break
    return Failure(
        RUNNER,
        node,
        kind,
        message or ("collection failed" if collecting else "failed"),
        file=file or None,
        line=line,
        details=block(lines),
    )
