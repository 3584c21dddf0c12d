"""TAP, the Test Anything Protocol (tape, node-tap, `node --test` with the tap reporter, any TAP producer)
-> failures.

Each `not ok N - description` line is a failed test point, unless its directive says TODO or SKIP; the
indented YAML block (`---` to `...`) under it holds its details. Subtests are indented by four spaces under
a `# Subtest: name` comment; a failing subtest is named by its failing points (`outer > inner > point`),
and only a subtest that fails with no failing point of its own is a failure itself. tape names each test
with a `# name` comment before its assertions: that name leads the id of the assertions under it
(`name > assertion`), as node-tap's `fullname` joins its levels. `Bail out!` ends the run: a run error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fixloop.failures.model import Counts, Failure, Parsed
from fixloop.failures.textutil import block, clean_lines, to_int, tolerant

RUNNER = "tap"

_POINT = re.compile(r"^( *)(not ok|ok)\b *(\d+)? *(?:- *)?(.*?)\s*$")
_DIRECTIVE = re.compile(r"(?<!\\)#\s*(todo|skip)\b", re.IGNORECASE)
_COMMENT_TAIL = re.compile(r"\s+(?<!\\)#\s.*$")
_SUBTEST = re.compile(r"^( *)# Subtest: ?(.*?)\s*$")
_HEADING = re.compile(r"^# (\S.*?)\s*$")
_NOT_HEADING = re.compile(
    r"^(?:tests|pass|fail|failed|ok|skip|skipped|todo|suites|cancelled|duration_ms|time=|Looks like"
    r"|SKIP|TODO)\b"
)
_SUMMARY = re.compile(r"^# (tests|pass|fail|skip|skipped|todo) +(\d+)\s*$")
_PLAN = re.compile(r"^( *)1\.\.\d+")
_BAIL_OUT = re.compile(r"^\s*Bail out!\s*(.*)$")
_AT_FRAME = re.compile(r"\(?((?:/|\.{0,2}/?)[^\s():]+\.[A-Za-z]+):(\d+):\d+\)?")
_AT_FIELD = re.compile(
    r"^\s*(fileName|lineNumber|expected|actual|found|wanted|at|location|error|message): *(.*?)\s*$"
)
_BLOCK_MARKS = ("", "|", "|-", "|+", ">", ">-", "|2")  # a YAML value on the lines below, not this one
_MAX_YAML_LINES = 2000
_MAX_DEPTH = 64  # subtest levels named in an id; deeper ones are counted as the 64th
_MAX_LINE_CHARS = 20_000


@dataclass
class _Point:
    path: tuple[str, ...]
    description: str
    number: int | None
    indent: int
    yaml: list[str]


@tolerant(RUNNER)
def parse_tap(text: str) -> Parsed:
    lines = [line[:_MAX_LINE_CHARS] for line in clean_lines(text)]
    failing: list[_Point] = []
    levels: dict[int, str] = {}  # indentation of a subtest's points -> the subtest's name
    heading: str | None = None
    headings = True
    summary: dict[str, int] = {}
    passed = 0
    bail_out: str | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        subtest, point = _SUBTEST.match(line), _POINT.match(line)
        if subtest:
            indent = len(subtest.group(1))
            heading, headings = None, False  # a stream with subtests is not tape's: `# text` is a comment
            levels = {level: name for level, name in levels.items() if level < indent + 4}
            children = _children_indent(lines, index, indent, subtest.group(2))
            if children is not None:
                levels[children] = subtest.group(2)
        elif point:
            indent = len(point.group(1))
            levels = {level: name for level, name in levels.items() if level <= indent}
            description, directive = _description(point.group(4))
            yaml, index = _yaml(lines, index, indent)
            if point.group(2) == "ok" or directive:
                passed += point.group(2) == "ok" and directive != "skip"
                continue
            prefix = (heading,) if heading and indent == 0 and not levels else ()
            path = (prefix + tuple(levels[level] for level in sorted(levels) if level <= indent))[:_MAX_DEPTH]
            failing.append(_Point(path, description, to_int(point.group(3)), indent, yaml))
        elif (heading_match := _HEADING.match(line)) and not _NOT_HEADING.match(heading_match.group(1)):
            heading = heading_match.group(1) if headings else None
        if (summary_match := _SUMMARY.match(line)) is not None:
            summary[summary_match.group(1)] = int(summary_match.group(2)[-9:])
        bail = _BAIL_OUT.match(line)
        if bail:
            bail_out = bail.group(1) or "bailed out"
    enclosing = {point.path[:depth] for point in failing for depth in range(1, len(point.path) + 1)}
    failures = [_failure(point) for point in failing if (*point.path, point.description) not in enclosing]
    if bail_out is not None:
        failures.append(Failure(RUNNER, "Bail out!", "error", bail_out))
    counts = Counts(
        passed=summary.get("pass", passed if failing or passed else None),
        failed=summary.get("fail", len(failures) if failing or passed else None),
        skipped=summary.get("skip", summary.get("skipped")),
    )
    run_error = bail_out is not None and len(failures) == 1
    return Parsed(runner=RUNNER, failures=tuple(failures), counts=counts, run_error=run_error)


def _children_indent(lines: list[str], start: int, indent: int, name: str) -> int | None:
    """Where the points of the subtest a `# Subtest: name` comment opens are: one level in (node-tap,
    Test::More, node --test), or at the comment's own level (the TAP 14 specification's placement).
    None when the comment names the very next point (node --test heads each test so): no subtest."""
    for line in lines[start : start + 50]:
        found = _POINT.match(line) or _PLAN.match(line) or _SUBTEST.match(line)
        if not found:
            continue
        if len(found.group(1)) > indent:
            return len(found.group(1))
        if found.re is _POINT and _description(found.group(4))[0] == name:
            return None
        return indent
    return indent + 4


def _description(text: str) -> tuple[str, str | None]:
    """`two and a half # TODO later` -> ("two and a half", "todo"); node-tap's `# time=...` is dropped."""
    directive = _DIRECTIVE.search(text)
    if directive:
        return text[: directive.start()].strip(), directive.group(1).lower()
    return _COMMENT_TAIL.sub("", text).strip().replace("\\#", "#"), None


def _yaml(lines: list[str], start: int, indent: int) -> tuple[list[str], int]:
    """The YAML block under a test point (its lines, and the index after it), or ([], start)."""
    index = start
    while index < len(lines) and not lines[index].strip():
        index += 1
    if (
        index >= len(lines)
        or lines[index].strip() != "---"
        or len(lines[index]) - len(lines[index].lstrip()) <= indent
    ):
        return [], start
    end = index + 1
    while end < len(lines) and lines[end].strip() != "..." and end - index < _MAX_YAML_LINES:
        if lines[end].strip() and len(lines[end]) - len(lines[end].lstrip()) <= indent:
            return lines[index + 1 : end], end  # no `...`: the block ends where its indentation does
        end += 1
    return lines[index + 1 : end], min(end + 1, len(lines))


def _failure(point: _Point) -> Failure:
    name = point.description or f"test {point.number}"
    fields: dict[str, str] = {}
    for line in point.yaml:
        field = _AT_FIELD.match(line)
        if field and field.group(1) not in fields and field.group(2) not in _BLOCK_MARKS:
            fields[field.group(1)] = field.group(2).strip("'\"")
    file, line_number = fields.get("fileName") or None, to_int(fields.get("lineNumber"))
    if file is None:
        frame = _AT_FRAME.search(fields.get("at", "")) or _AT_FRAME.search(fields.get("location", ""))
        if frame:
            file, line_number = frame.group(1), to_int(frame.group(2))
    message = point.description or "failed"
    expected, actual = fields.get("expected", fields.get("wanted")), fields.get("actual", fields.get("found"))
    error = fields.get("error", fields.get("message"))
    if expected and actual:
        message = f"{message}: expected {expected}, got {actual}"
    elif error and error != point.description:
        message = f"{message}: {error}"
    return Failure(
        RUNNER,
        " > ".join((*point.path, name)),
        "test",
        message,
        file=file,
        line=line_number,
        details=block(point.yaml),
    )
