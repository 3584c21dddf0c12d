"""Compiler, type checker and linter diagnostics -> failures.

Understood shapes: `file:line:col: error: message` (gcc, clang, javac, swiftc, mypy without a column), go's
`file:line:col: message`, ruff/flake8/pylint `file:line:col: F401 message`, eslint unix
`file:line:col: message [Error/rule]`, tsc `file(line,col): error TS2322: message`, tsc --pretty and pyright
`file:line:col - error TS2322: message`, eslint stylish (a file line, then `  line:col  error  message  rule`
lines),
and rustc/ruff blocks (`error[E0425]: message` or `F401 message`, then `  --> file:line:col`).
Warnings and notes are not failures; a note goes into the details of the error before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fixloop.failures.model import Counts, Failure, FailureKind, Parsed
from fixloop.failures.textutil import block, clean_lines, to_int, tolerant

RUNNER = "diagnostics"

_PATH = r"(?P<file>[^\s:()'\"][^:()'\"]*?)"
_COLON = re.compile(r"^" + _PATH + r":(?P<line>\d+):(?:(?P<col>\d+):?)? (?P<rest>.+)$")
_TSC = re.compile(
    r"^" + _PATH + r"\((?P<line>\d+),(?P<col>\d+)\): (?P<sev>error|warning) (?P<code>TS\d+): (?P<msg>.+)$"
)
_DASH = re.compile(
    r"^\s*"
    + _PATH
    + r":(?P<line>\d+):(?P<col>\d+) - (?P<sev>error|warning|information)(?: (?P<code>TS\d+))?:? (?P<msg>.+)$"
)
_SEVERITY = re.compile(
    r"^(?P<sev>fatal error|error|warning|note|info|hint|remark)(?:\[[^\]]*\])?: (?P<msg>.*)$"
)
_ESLINT_UNIX = re.compile(r"\[(?P<sev>Error|Warning)/(?P<rule>[^\]]+)\]$")
_LINT_CODE = re.compile(r"^(?P<code>[A-Z]{1,4}\d{2,4})\b:?(?: \[\*\])? ")
_STYLISH_FILE = re.compile(r"^(?P<file>(?:[A-Za-z]:)?[^\s:]*\.\w+)$")
_STYLISH_ENTRY = re.compile(
    r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<sev>error|warning)\s+(?P<msg>.+?)(?:\s{2,}(?P<rule>\S+))?\s*$"
)
_ARROW_HEADER = re.compile(
    r"^(?:(?P<sev>error|warning)(?:\[(?P<code>\w+)\])?: "  # rustc
    r"|(?P<lint>[A-Z]{1,4}\d{2,4})(?: \[\*\])? )"  # ruff
    r"(?P<msg>.+)$"
)
_ARROW = re.compile(r"^\s*--> " + _PATH + r":(?P<line>\d+):(?P<col>\d+)\s*$")
_FOUND = re.compile(r"^Found (\d+) errors?\b|^✖ \d+ problems? \((\d+) errors?")
_FRAME = re.compile(r"^\s|^\d+\s{2,}|^\d+\s*[|│]|^[|│~^]")  # code frames: gcc's, tsc --pretty's
_TYPED = (".py", ".pyi")
_COMPILED = (
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".cxx",
    ".hpp",
    ".hh",
    ".m",
    ".mm",
    ".rs",
    ".go",
    ".java",
    ".kt",
    ".swift",
    ".cs",
)


@dataclass
class _Draft:
    failure: Failure | None  # None: a warning or a note, not a failure
    lines: list[str] = field(default_factory=list)
    arrow: bool = False  # a rustc/ruff block: runs to the next blank line
    note: bool = False


@tolerant(RUNNER)
def parse_diagnostics(text: str) -> Parsed:
    lines = clean_lines(text)
    drafts: list[_Draft] = []
    current: _Draft | None = None
    stylish_file: str | None = None
    errors: int | None = None
    for index, line in enumerate(lines):
        draft = _diagnostic(line, lines[index + 1 : index + 3], stylish_file)
        if draft is not None and draft.note:
            if current is not None and current.failure is not None:
                current.lines.append(line)  # a note belongs to the error before it
            continue
        if draft is not None:
            current = draft
            drafts.append(draft)
            continue
        if current is not None and _continues(current, line):
            current.lines.append(line)
            continue
        current = None
        if _STYLISH_FILE.match(line):
            stylish_file = line.strip()
        found = _FOUND.match(line)
        if found:
            errors = to_int(found.group(1) or found.group(2))
    failures = _unique_failures(drafts)
    return Parsed(runner=RUNNER, failures=failures, counts=Counts(errors=errors))


def _continues(draft: _Draft, line: str) -> bool:
    if draft.arrow:
        return bool(line.strip())
    return not line.strip() or bool(_FRAME.match(line))


def _unique_failures(drafts: list[_Draft]) -> tuple[Failure, ...]:
    seen: set[tuple[str | None, int | None, str]] = set()
    failures: list[Failure] = []
    for draft in drafts:
        failure = draft.failure
        if failure is None or (failure.file, failure.line, failure.message) in seen:
            continue
        seen.add((failure.file, failure.line, failure.message))
        failures.append(_with_details(failure, draft.lines))
    return tuple(failures)


def _with_details(failure: Failure, lines: list[str]) -> Failure:
    return Failure(
        failure.runner,
        failure.test_id,
        failure.kind,
        failure.message,
        failure.file,
        failure.line,
        block([failure.details, *lines]),
        failure.suite,
    )


def _diagnostic(line: str, following: list[str], stylish_file: str | None) -> _Draft | None:
    """A draft when `line` opens a diagnostic (an error, a warning or a note), else None."""
    if len(line) > 4000 or not line.strip():
        return None
    header = _ARROW_HEADER.match(line)
    if header:
        arrow = next((m for m in map(_ARROW.match, following) if m), None)
        if arrow:
            severity = header.group("sev") or "error"
            code = header.group("code") or header.group("lint")
            file, number, column = arrow.group("file", "line", "col")
            return _draft(line, file, number, column, severity, code, line, arrow=True)
    for pattern in (_TSC, _DASH):
        match = pattern.match(line)
        if match:
            message = f"{match.group('sev')} {match.group('code') or ''}: {match.group('msg')}".replace(
                " :", ":"
            )
            return _draft(
                line, match["file"], match["line"], match["col"], match["sev"], match["code"], message
            )
    match = _COLON.match(line)
    if match:
        return _colon(line, match)
    entry = _STYLISH_ENTRY.match(line) if stylish_file else None
    if entry and stylish_file:
        rule = entry.group("rule")
        message = f"{entry.group('msg')} [{rule}]" if rule else entry.group("msg")
        return _draft(
            line, stylish_file, entry["line"], entry["col"], entry["sev"], rule, message, kind="lint"
        )
    return None


def _colon(line: str, match: re.Match[str]) -> _Draft | None:
    rest = match.group("rest").strip()
    severity_match = _SEVERITY.match(rest)
    unix = _ESLINT_UNIX.search(rest)
    lint = _LINT_CODE.match(rest)
    file, number, column = match.group("file", "line", "col")
    if severity_match:
        severity = severity_match.group("sev")
        code_match = re.search(r"\[([\w-]+)\]$", rest)
        return _draft(line, file, number, column, severity, code_match.group(1) if code_match else None, rest)
    if unix:
        return _draft(
            line, file, number, column, unix.group("sev").lower(), unix.group("rule"), rest, kind="lint"
        )
    if lint:
        return _draft(line, file, number, column, "error", lint.group("code"), rest, kind="lint")
    if column and file.endswith(".go"):  # go build and go vet print no severity
        return _draft(line, file, number, column, "error", None, rest)
    return None


def _draft(
    line: str,
    file: str,
    number: str,
    column: str | None,
    severity: str,
    code: str | None,
    message: str,
    arrow: bool = False,
    kind: FailureKind | None = None,
) -> _Draft:
    if severity in ("note", "info", "hint", "remark", "information"):
        return _Draft(None, note=True)
    if severity == "warning":
        return _Draft(None, arrow=arrow)
    location = f"{file}:{number}:{column}" if column else f"{file}:{number}"
    test_id = f"{location} {code}" if code else location
    failure = Failure(RUNNER, test_id, kind or _kind(file, code), message, file, to_int(number), line)
    return _Draft(failure, arrow=arrow)


def _kind(file: str, code: str | None) -> FailureKind:
    """A type checker's error (tsc, mypy, pyright), a lint rule (ruff's F401), or a compiler's error."""
    lowered = file.lower()
    if code and code.startswith("TS"):
        return "type"
    if code and _LINT_CODE.match(code + " ") and not code.startswith("E0"):  # E0425 is rustc's
        return "lint"
    if lowered.endswith(_TYPED):
        return "type"
    if lowered.endswith(_COMPILED):
        return "build"
    return "error"
