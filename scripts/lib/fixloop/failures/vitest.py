"""Vitest's terminal output (default and verbose reporters) -> failures.

Failures are printed under `⎯⎯ Failed Tests N ⎯⎯` (and `Failed Suites`, `Unhandled Errors`): each starts
with ` FAIL  file > describe > test` (several headers may share one error), ends at `⎯⎯[i/n]⎯`. The verbose
reporter also prints `x file > describe > test` (a multiplication sign for the x) and `→ message` as the run
goes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fixloop.failures.model import Counts, Failure, FailureKind, Parsed
from fixloop.failures.textutil import (
    block,
    clean_lines,
    counted,
    first_line,
    same_file,
    to_int,
    tolerant,
    unique,
)

RUNNER = "vitest"

_SECTION = re.compile(r"^\s*⎯+ (Failed Tests|Failed Suites|Unhandled Errors?)(?: \d+)? ⎯+\s*$")
_HEADER = re.compile(r"^\s*FAIL\s+(?:\|[^|]*\|\s+)?(.+?)\s*$")
_CLOSE = re.compile(r"^\s*⎯+\[\d+/\d+\]⎯+\s*$")
_SUMMARY = re.compile(r"^\s*(Test Files|Tests|Errors|Start at|Duration)\s{2,}(.*)$")
_VERBOSE = re.compile(r"^\s*[\u00d7✗✕] (?:\|[^|]*\|\s+)?(.+? > .+?)(?: \d+(?:\.\d+)?m?s)?\s*$")
_ARROW = re.compile(r"^\s*→ (.+)$")
_LOCATION = re.compile(r"^\s*\u276f (?:\S+ )?(\S+?):(\d+):\d+\s*$")
_UNHANDLED = "unhandled error"
_ERROR_LINE = re.compile(r"^\w*(?:Error|Rejection|Exception)\b")
_FILE_NAME = re.compile(r"\.[cm]?[jt]sx?$|\.(?:vue|svelte|astro)$")


@dataclass
class _Block:
    section: str
    headers: list[str]
    lines: list[str] = field(default_factory=list)


@tolerant(RUNNER)
def parse_vitest(text: str) -> Parsed:
    lines = clean_lines(text)
    blocks: list[_Block] = []
    verbose: list[Failure] = []
    section: str | None = None
    current: _Block | None = None
    totals: dict[str, int] = {}
    for index, line in enumerate(lines):
        section_match, summary = _SECTION.match(line), _SUMMARY.match(line)
        if section_match or summary or _CLOSE.match(line):
            current = None
            if section_match:
                section = section_match.group(1)
                if section.startswith("Unhandled"):
                    current = _Block(section, [_UNHANDLED])
                    blocks.append(current)
            if summary:
                section = None
                _count(summary.group(1), summary.group(2), totals)
            continue
        header = _HEADER.match(line) if section and not section.startswith("Unhandled") else None
        if header:
            name = header.group(1)
            if name.endswith(" ]") and " [ " in name:  # `FAIL  file [ file ]`: a suite that did not load
                name = name[: name.index(" [ ")]
            if current is not None and not current.lines:
                current.headers.append(name)
            else:
                current = _Block(section or "", [name])
                blocks.append(current)
        elif current is not None:
            current.lines.append(line)
        elif section is None:
            failed = _VERBOSE.match(line)
            if failed:
                arrow = _ARROW.match(lines[index + 1]) if index + 1 < len(lines) else None
                message = arrow.group(1).strip() if arrow else "failed"
                file = failed.group(1).split(" > ")[0]
                # the default reporter's failed `describe > test` line under its file line names no file: the
                # Failed Tests section that follows names the test in full
                if _looks_like_file(file):
                    verbose.append(Failure(RUNNER, failed.group(1), "test", message, file=file))
    failures = unique([failure for one in blocks for failure in _failures(one)] + verbose)
    tests = [failure for failure in failures if failure.kind == "test"]
    counts = Counts(
        passed=totals.get("passed"),
        failed=totals.get("failed"),
        skipped=totals.get("skipped"),
        errors=totals.get("errors"),
    )
    return Parsed(runner=RUNNER, failures=failures, counts=counts, run_error=bool(failures) and not tests)


def _looks_like_file(name: str) -> bool:
    return "/" in name or bool(_FILE_NAME.search(name))


def _count(label: str, text: str, totals: dict[str, int]) -> None:
    if label == "Tests":
        totals.update(counted(text))
    elif label == "Errors":
        errors = counted(text).get("errors")
        if errors is not None:
            totals["errors"] = errors


def _failures(one: _Block) -> list[Failure]:
    lines, details = one.lines, block(one.lines)
    if one.section.startswith("Unhandled"):
        message = next((line.strip() for line in lines if _ERROR_LINE.match(line.strip())), first_line(lines))
        return [Failure(RUNNER, _UNHANDLED, "error", message or "failed", details=details)]
    kind: FailureKind = "test" if one.section == "Failed Tests" else "error"
    message = first_line(lines) or "failed"
    failures = []
    for header in one.headers:
        file = header.split(" > ")[0]
        line = next(
            (to_int(m.group(2)) for m in map(_LOCATION.match, lines) if m and same_file(m.group(1), file)),
            None,
        )
        failures.append(Failure(RUNNER, header, kind, message, file=file, line=line, details=details))
    return failures
