"""Playwright Test's terminal output (list, line and dot reporters) -> failures.

Each failure has a numbered section `  1) [project] > file:line:col > describe > title ───` (Playwright
writes `>` as a right-pointing angle quote) holding the error,
the code frame and the `at file:line:col` location; the list reporter also marks tests `✘`, and the closing
summary lists the failed and flaky ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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

RUNNER = "playwright"

_TITLE = (
    r"(?:\[(?P<project>[^\]]+)\] \u203a )?"  # [chromium] >
    r"(?P<file>[^\s\u203a]+?):(?P<line>\d+):(?P<col>\d+) \u203a (?P<title>.+?)"
)
_SECTION = re.compile(r"^\s*\d+\) " + _TITLE + r"(?:\s*─+)?\s*$")
_MARK = re.compile(r"^\s*[✘\u00d7✗]\s+\d+ " + _TITLE + r"(?: \(retry #\d+\))?(?: \(\d[^)]*\))?\s*$")
_LISTED = re.compile(r"^\s{4}" + _TITLE + r"(?:\s*─+)?\s*$")
_SUMMARY = re.compile(r"^\s*(\d+) (failed|flaky|passed|skipped|did not run|interrupted)\b")
_PROGRESS = re.compile(r"^\[\d+/\d+\] ")
_AT = re.compile(r"^\s*at (?:.*? \()?(.+?):(\d+):\d+\)?\s*$")
_TOP_ERROR = re.compile(r"^Error: ")


@dataclass
class _Section:
    match: re.Match[str]
    lines: list[str] = field(default_factory=list)


@tolerant(RUNNER)
def parse_playwright(text: str) -> Parsed:
    lines = clean_lines(text)
    sections: list[_Section] = []
    marked: list[re.Match[str]] = []
    listed: dict[str, list[re.Match[str]]] = {"failed": [], "flaky": []}
    totals: dict[str, int] = {}
    top_errors: list[str] = []
    current: _Section | None = None
    summary_list: str | None = None
    for line in lines:
        section, summary = _SECTION.match(line), _SUMMARY.match(line)
        in_list = _LISTED.match(line) if summary_list in listed else None
        if section:
            current = _Section(section)
            sections.append(current)
        elif summary:
            current, summary_list = None, summary.group(2)
            totals.update(counted(line))
        elif _PROGRESS.match(line):
            current = None
        elif current is not None:
            current.lines.append(line)
        elif in_list and summary_list:
            listed[summary_list].append(in_list)
        elif mark := _MARK.match(line):
            marked.append(mark)
        elif _TOP_ERROR.match(line):
            top_errors.append(line.strip())
    flaky = {_identity(match) for match in listed["flaky"]}
    failures = [_failure(one.match, one.lines) for one in sections]
    failures += [_failure(match, []) for match in [*listed["failed"], *marked]]
    found = unique(f for f in failures if (f.suite, f.test_id) not in flaky)
    if not found and top_errors:  # the run did not start: a config error, no tests found
        found = (Failure(RUNNER, RUNNER, "error", top_errors[0], details="\n".join(top_errors[:50])),)
    counts = Counts(passed=totals.get("passed"), failed=totals.get("failed"), skipped=totals.get("skipped"))
    run_error = bool(found) and all(failure.kind == "error" for failure in found)
    return Parsed(runner=RUNNER, failures=found, counts=counts, run_error=run_error)


def _identity(match: re.Match[str]) -> tuple[str | None, str]:
    file, line, column, title = match.group("file", "line", "col", "title")
    return match.group("project"), f"{file}:{line}:{column} {ANGLE} {title}"


def _failure(match: re.Match[str], lines: list[str]) -> Failure:
    project, test_id = _identity(match)
    file = match.group("file")
    line = to_int(match.group("line"))
    for text in lines:
        at = _AT.match(text)
        if at and same_file(at.group(1), file):
            line = to_int(at.group(2))
            break
    message = first_line(lines) or "failed"
    return Failure(
        RUNNER, test_id, "test", message, file=file, line=line, details=block(lines), suite=project
    )
