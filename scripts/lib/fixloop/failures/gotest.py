"""`go test` output (plain, -v, -json) -> failures.

A failed test prints `--- FAIL: TestName (0.00s)` with its log lines indented under it (before it with -v);
the package comes later, on its `FAIL\tpkg\t0.01s` line. A package that did not compile prints `# pkg` and
`file:line:col: message` lines, then `FAIL\tpkg [build failed]`. A panic prints `panic:` and goroutine traces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fixloop.core import jsoncodec
from fixloop.failures.model import Counts, Failure, FailureKind, Parsed
from fixloop.failures.textutil import block, clean_lines, same_file, to_int, tolerant

RUNNER = "go"

_FAIL = re.compile(r"^(\s*)--- FAIL: (\S+)(?: \([\d.]+s\))?\s*$")
_PASS_SKIP = re.compile(r"^\s*--- (PASS|SKIP): \S+")
_RUN = re.compile(r"^=== (RUN|CONT|NAME|PAUSE)\s+(\S+)\s*$")
_PACKAGE = re.compile(r"^(FAIL|ok)\s+(\S+)(?:\s+\[(build|setup) failed\]|\s.*)?$")
_BUILD_HEADER = re.compile(r"^# (\S+)(?: \[.*\])?\s*$")
_DIAGNOSTIC = re.compile(r"^(\S+?\.go):(\d+)(?::(\d+))?: (.+)$")
_LOG_LOCATION = re.compile(r"^\s*(\S+?\.go):(\d+)(?::|\s|$)")
_TRACE_LOCATION = re.compile(r"^\s+(\S+?\.go):(\d+)(?:\s|$)")
_NOISE = re.compile(r"^(?:FAIL|PASS|exit status \d+|coverage: .*|testing: warning: .*)\s*$")


@dataclass
class _Test:
    name: str
    lines: list[str] = field(default_factory=list)
    package: str | None = None
    panicked: bool = False


@dataclass
class _State:
    tests: list[_Test] = field(default_factory=list)
    unassigned: list[_Test] = field(default_factory=list)
    output: dict[str, list[str]] = field(default_factory=dict)  # -v: lines a test logged before its result
    builds: list[Failure] = field(default_factory=list)
    broken_packages: list[tuple[str, str]] = field(default_factory=list)  # (package, build|setup)
    passed: int = 0
    skipped: int = 0
    verbose: bool = False


@tolerant(RUNNER)
def parse_go(text: str) -> Parsed:
    state = _State()
    _read(clean_lines(_plain_text(text)), state)
    tests = _leaf_failures(state.tests)
    failures = [*tests, *state.builds]
    built = {failure.suite for failure in state.builds}
    for package, what in state.broken_packages:
        if package not in built:
            failures.append(Failure(RUNNER, package, "build", f"{what} failed", suite=package))
    counts = Counts(
        passed=state.passed if state.verbose else None,
        failed=len(tests) if state.tests else None,
        skipped=state.skipped if state.verbose else None,
    )
    run_error = bool(failures) and not any(failure.kind == "test" for failure in failures)
    return Parsed(runner=RUNNER, failures=tuple(failures), counts=counts, run_error=run_error)


def _plain_text(text: str) -> str:
    """`go test -json` events -> the text they carry; other text is kept as it is.

    The events may come after other lines: a CI step prints its commands (`$ go test -json ./...`) first.
    """
    if '"Action"' not in text:
        return text
    parts: list[str] = []
    for line in text.split("\n"):
        try:
            event = jsoncodec.loads(line) if line.startswith("{") and '"Action"' in line else None
        except ValueError:  # not an event; a line nested past the recursion limit is one too
            event = None
        if isinstance(event, dict) and "Action" in event:
            output = event.get("Output")
            if event["Action"] == "output" and isinstance(output, str):
                parts.append(output)
        else:
            parts.append(line + "\n")
    return "".join(parts)


def _read(lines: list[str], state: _State) -> None:
    open_test: _Test | None = None
    running: str | None = None
    build_package: str | None = None
    for line in lines:
        failed, run, package = _FAIL.match(line), _RUN.match(line), _PACKAGE.match(line)
        if failed:
            name = failed.group(2)
            open_test = _Test(name, state.output.pop(name, []))
            state.tests.append(open_test)
            state.unassigned.append(open_test)
            build_package = None
        elif run:
            state.verbose, running, open_test, build_package = True, run.group(2), None, None
        elif result := _PASS_SKIP.match(line):
            state.passed += result.group(1) == "PASS"
            state.skipped += result.group(1) == "SKIP"
            open_test = None
        elif package and not _NOISE.match(line):
            for test in state.unassigned:
                test.package = package.group(2)
            state.unassigned = []
            if package.group(3):
                state.broken_packages.append((package.group(2), package.group(3)))
            open_test, running, build_package = None, None, None
        elif header := _BUILD_HEADER.match(line):
            build_package, open_test = header.group(1), None
        elif build_package and (diagnostic := _DIAGNOSTIC.match(line)):
            file, number, column, message = diagnostic.groups()
            test_id = f"{file}:{number}:{column}" if column else f"{file}:{number}"
            state.builds.append(
                Failure(RUNNER, test_id, "build", message, file, to_int(number), line, build_package)
            )
        elif line.startswith("panic: ") or (open_test is not None and open_test.panicked):
            if open_test is None:  # a panic outside a reported test (a timeout, init): blame the running test
                open_test = _Test(running or "(package)")
                state.tests.append(open_test)
                state.unassigned.append(open_test)
            open_test.panicked = True
            open_test.lines.append(line)
        elif open_test is not None and (line.startswith((" ", "\t")) or not line.strip()):
            open_test.lines.append(line)
        elif running is not None and line.startswith((" ", "\t")):
            state.output.setdefault(running, []).append(line)
        elif not _NOISE.match(line):
            open_test = None


def _leaf_failures(tests: list[_Test]) -> list[Failure]:
    """A parent test fails because a subtest failed: report the subtests (the parent's own lines stay)."""
    parents: set[tuple[str | None, str]] = set()
    for test in tests:
        parts = test.name.split("/")
        parents.update((test.package, "/".join(parts[:depth])) for depth in range(1, len(parts)))
    failures = []
    for test in tests:
        has_failed_child = (test.package, test.name) in parents
        if has_failed_child and not test.panicked and not any(line.strip() for line in test.lines):
            continue
        failures.append(_failure(test))
    return failures


def _failure(test: _Test) -> Failure:
    lines = [line for line in test.lines if not _FAIL.match(line)]
    panic = next((line.strip() for line in lines if line.startswith("panic: ")), None)
    message = panic or next((line.strip() for line in lines if line.strip()), "failed")
    file, number = _location(lines)
    kind: FailureKind = "test" if test.name.startswith(("Test", "Example", "Fuzz", "Benchmark")) else "error"
    return Failure(RUNNER, test.name, kind, message, file, number, block(lines), test.package)


def _location(lines: list[str]) -> tuple[str | None, int | None]:
    """Where the test failed: its first log line's file, or the test file's frame in a panic's trace."""
    for line in lines:
        logged = _LOG_LOCATION.match(line)
        if logged and not line.startswith("\t"):
            return logged.group(1), to_int(logged.group(2))
    frames = [m for m in map(_TRACE_LOCATION.match, lines) if m]
    chosen = next((m for m in frames if m.group(1).endswith("_test.go")), None)
    chosen = chosen or next((m for m in frames if not same_file(m.group(1), "testing/testing.go")), None)
    if chosen is None:
        return None, None
    return chosen.group(1), to_int(chosen.group(2))
