"""Test runs, builds and CI logs -> what failed, bounded: the model is handed that, never a whole log.

Standard library only (imports fixloop.core). Parsers are pure functions of text that never raise on bad
input: an output they cannot read gives an empty result with a note.

    parse(text, runner=None) -> Parsed       detect(text) -> runner name or None
    parse_pytest, parse_unittest, parse_jest, parse_vitest, parse_playwright, parse_junit, parse_go,
    parse_cargo, parse_tap, parse_prove, parse_diagnostics
                                             one runner each
    reduce_log_file(path, limits) -> Reduced, reduce_log_text(text, limits) -> Reduced
                                             CI logs (fixloop.failures.cilog)
"""

from __future__ import annotations

from fixloop.failures.cargo import parse_cargo
from fixloop.failures.cilog import reduce_log_file, reduce_log_text
from fixloop.failures.cimodel import FailedStep, Limits, Reduced, ReducedFailure
from fixloop.failures.detect import RUNNERS, detect, parse
from fixloop.failures.diagnostics import parse_diagnostics
from fixloop.failures.gotest import parse_go
from fixloop.failures.jest import parse_jest
from fixloop.failures.junit import parse_junit
from fixloop.failures.model import Counts, Failure, FailureKind, Parsed
from fixloop.failures.playwright import parse_playwright
from fixloop.failures.prove import parse_prove
from fixloop.failures.pytest_text import parse_pytest
from fixloop.failures.tap import parse_tap
from fixloop.failures.unittest_text import parse_unittest
from fixloop.failures.vitest import parse_vitest

__all__ = [
    "RUNNERS",
    "Counts",
    "FailedStep",
    "Failure",
    "FailureKind",
    "Limits",
    "Parsed",
    "Reduced",
    "ReducedFailure",
    "detect",
    "parse",
    "parse_cargo",
    "parse_diagnostics",
    "parse_go",
    "parse_jest",
    "parse_junit",
    "parse_playwright",
    "parse_prove",
    "parse_pytest",
    "parse_tap",
    "parse_unittest",
    "parse_vitest",
    "reduce_log_file",
    "reduce_log_text",
]
