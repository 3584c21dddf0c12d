"""What a test run or a build said went wrong: failures, the run's counts, and notes on the parsing itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

FailureKind = Literal["test", "build", "lint", "type", "error"]
"""test: a test failed; build: code did not compile; lint: a linter rule; type: a type checker;
error: the run itself broke (collection, setup, import, panic outside a test, usage)."""


@dataclass(frozen=True)
class Failure:
    """One thing that failed, named the way its runner names it.

    test_id is the runner's own name: a pytest node id (`tests/test_x.py::test_y`), a Jest or Vitest path
    (`file > describe > test`), a Playwright id (`file:line:col > title`, with
    Playwright's angle quote for `>`), a go test name (with `suite` the
    package), a cargo test path (`module::test`), a JUnit `classname.name`, or `file:line:col code` for a
    compiler or linter diagnostic. `message` is one line; `details` is the error block (assertion diff,
    stack trace, code frame) as the runner printed it.
    """

    runner: str
    test_id: str
    kind: FailureKind
    message: str
    file: str | None = None
    line: int | None = None
    details: str = ""
    suite: str | None = None  # go package, Playwright project, JUnit test suite


@dataclass(frozen=True)
class Counts:
    """The run's totals, each None unless the output says it."""

    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    errors: int | None = None

    def known(self) -> bool:
        return any(value is not None for value in (self.passed, self.failed, self.skipped, self.errors))


@dataclass(frozen=True)
class Parsed:
    """What a parser found in one output.

    run_error is True when the run failed as a whole without any test failing (a collection, syntax,
    import or build error; a crash before the tests ran). notes say what the parser could not read.
    """

    runner: str
    failures: tuple[Failure, ...] = ()
    counts: Counts = field(default_factory=Counts)
    run_error: bool = False
    notes: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return bool(self.failures) or self.run_error or bool(self.counts.failed) or bool(self.counts.errors)

    def found_anything(self) -> bool:
        return bool(self.failures) or self.run_error or self.counts.known()
