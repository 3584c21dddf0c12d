"""A CI job's log -> the failures of its failing steps, bounded, with an account of what was left out.

The log is read line by line. Per step, only a small ring of its last lines and the windows that follow
failure-looking lines (a pytest section header, `--- FAIL:`, `error[E0425]:`, `●`, ...) are kept; when the
step ends, the parsers read those, and what they find is trimmed to the limits. So a 50 MB log costs a few
megabytes of memory at most. A step counts as failing when the log says so (GitHub's `##[error]`); a log
that marks no step (GitLab, Jenkins) has its failures taken from wherever the parsers find them.
"""

from __future__ import annotations

import gzip
import io
import re
import zlib
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from fixloop.core.errors import FixloopError
from fixloop.failures.budget import Budget
from fixloop.failures.cimodel import FailedStep, Limits, Reduced, ReducedFailure
from fixloop.failures.detect import parse
from fixloop.failures.diagnostics import parse_diagnostics
from fixloop.failures.logclean import LineCleaner
from fixloop.failures.model import Parsed

__all__ = ["FailedStep", "Limits", "Reduced", "ReducedFailure", "reduce_log_file", "reduce_log_text"]

_CONTEXT_BEFORE = 3  # lines shown before a window's first line
_WINDOW_CHARS = 2_000_000  # what a step's windows may hold, whatever the lines' lengths
_MAX_NOTES = 20
# GitLab runner's own sections around the job's script: a failure that no parser recognises is the script's
# (step_script, or build_script on older runners), not the cleanup's that happens to come last.
_RUNNER_SECTIONS = frozenset(
    {
        "prepare_executor",
        "prepare_script",
        "get_sources",
        "restore_cache",
        "download_artifacts",
        "after_script",
        "archive_cache",
        "archive_cache_on_failure",
        "upload_artifacts_on_success",
        "upload_artifacts_on_failure",
        "cleanup_file_variables",
    }
)

# Lines that open a window (at their start, after any indentation).
_OPENS_WINDOW = re.compile(
    r"\s*(?:_{3,} \S|={3,} (?:FAILURES|ERRORS|short test summary)|(?:FAILED|ERROR) \S"  # pytest
    r"|● |FAIL\b|⎯+ (?:Failed|Unhandled)|[✘\u00d7✗✕] |\d+\) \S"  # Jest, Vitest, Playwright
    r"|--- FAIL: |panic: |# \S|\{.*\"Output\":\"\s*(?:--- FAIL: |panic: )"  # go (plain and -json)
    r"|---- \S.* ----|test \S.* \.\.\. FAILED|error(?:\[\w+\])?: |failures:|-+ STD(?:OUT|ERR): "  # cargo
    r"|Traceback \(most recent call last\)|\w*Error: )"
)
_DIAGNOSTIC_SHAPE = re.compile(  # each shape holds "rror" or ": "
    r":\d+(?::\d+)?:? (?:fatal )?error\b|\(\d+,\d+\): error|:\d+:\d+: [A-Z]{1,4}\d{2,4} |:\d+:\d+ - error"
    r"|^\s+\d+:\d+\s+error\s|\[Error/"
)


class _Step:
    """What is kept of one step while it is read: its failure windows and a ring of its last lines."""

    def __init__(self, job: str | None, name: str | None, limits: Limits) -> None:
        self.job, self.name = job, name
        self.limits = limits
        self.ring: deque[str] = deque(maxlen=limits.tail_lines)  # the step's last lines
        self.kept: list[tuple[int, str]] = []
        self.kept_chars = 0
        self.window_budget = limits.total_lines + limits.lines_per_failure
        self.window_left = 0
        self.last_kept = -1
        self.overflow = 0
        self.failed = False
        self.exit_code: int | None = None
        self.lines = 0

    def add(self, text: str) -> None:
        index = self.lines  # the line's place in the step
        self.lines += 1
        if _OPENS_WINDOW.match(text) or (("rror" in text or ": " in text) and _DIAGNOSTIC_SHAPE.search(text)):
            if self.window_left == 0:
                before = min(_CONTEXT_BEFORE, len(self.ring), index - self.last_kept - 1)
                for back in range(before, 0, -1):
                    self._keep((index - back, self.ring[-back]))
            self.window_left = self.limits.lines_per_failure
        if self.window_left > 0:
            self.window_left -= 1
            self._keep((index, text))
        self.ring.append(text)

    def _keep(self, item: tuple[int, str]) -> None:
        if len(self.kept) < self.window_budget and self.kept_chars + len(item[1]) <= _WINDOW_CHARS:
            self.kept.append(item)
            self.kept_chars += len(item[1])
            self.last_kept = item[0]
        else:
            self.overflow += 1

    def text(self) -> str:
        """The kept windows and the ring, in the step's order, each line once."""
        ring_start = self.lines - len(self.ring)
        before_ring = [text for index, text in self.kept if index < ring_start]
        return "\n".join([*before_ring, *self.ring])

    def label(self) -> str:
        return " / ".join(part for part in (self.job, self.name) if part) or "the log"


class _Reducer:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.failing = Budget(limits)
        self.elsewhere = Budget(limits)  # failures in steps the log did not mark as failing
        self.step: _Step | None = None
        self.last_step: _Step | None = None
        self.last_script_step: _Step | None = None  # the last step that is not the runner's own section
        self.lines_read = 0
        self.cleaner = LineCleaner(limits.max_line_chars)
        self.job_failed = False
        self.job_exit_code: int | None = None
        self.notes: list[str] = []

    def feed(self, raw: str) -> None:
        self.lines_read += 1
        line = self.cleaner.clean(raw)
        step = self.step
        if line.job is not None or line.step is not None:
            if step is None or (step.job, step.name) != (line.job, line.step):
                step = self._switch(_Step(line.job, line.step, self.limits))
        elif line.starts_step is not None or step is None:
            step = self._switch(_Step(None, line.starts_step, self.limits))
        if line.step_failed:
            step.failed = True
            step.exit_code = line.exit_code if line.exit_code is not None else step.exit_code
        if line.job_failed:
            self.job_failed = True
            self.job_exit_code = line.exit_code if line.exit_code is not None else self.job_exit_code
        if line.text is not None and not line.job_failed:
            # the runner's closing line (`ERROR: Job failed: exit code 1`) is about the job, not the step's
            # output: a parser would read it as the step's own error; the notes say the job failed
            step.add(line.text)

    def _switch(self, step: _Step) -> _Step:
        if self.step is not None:
            self._finish(self.step)
        self.step = step
        return step

    def _finish(self, step: _Step) -> None:
        self.last_step = step
        if step.lines == 0:
            return
        if step.name not in _RUNNER_SECTIONS:
            self.last_script_step = step
        marked = step.failed or step.exit_code not in (None, 0)
        text = step.text()
        parsed = parse(text)
        if not parsed.failures:
            diagnostics = parse_diagnostics(text)
            parsed = diagnostics if diagnostics.failures else parsed
        if not marked and not parsed.failures:
            return
        if step.overflow:
            self._note(
                f"{step.label()}: {step.overflow} lines near its later failures were not kept"
                f" (of those, only the ones among its last {self.limits.tail_lines} lines were read)"
            )
        budget = self.failing if marked else self.elsewhere
        budget.add_step(step.job, step.name, step.exit_code, parsed, list(step.ring), step.lines)

    def _note(self, note: str) -> None:
        if len(self.notes) < _MAX_NOTES:
            self.notes.append(note)

    def result(self) -> Reduced:
        if self.step is not None:
            self._finish(self.step)
            self.step = None
        budget = self.failing
        job = "the job failed" if self.job_failed else "nothing in the log says the job failed"
        if self.job_exit_code is not None:
            job += f" (exit code {self.job_exit_code})"
        if not budget.steps and self.elsewhere.steps:
            budget = self.elsewhere
            self._note(f"{job}; no step is marked as failed, these failures were found in its steps")
        elif not budget.steps and (last := self.last_script_step or self.last_step) is not None:
            empty = Parsed(runner="unknown")
            budget.add_step(last.job, last.name, self.job_exit_code, empty, list(last.ring), last.lines)
            self._note(f"{job}; no failure was recognised, the log's last lines are returned")
        if budget.steps_dropped:
            self._note(f"{budget.steps_dropped} more failing steps are not described")
        return Reduced(
            failures=tuple(budget.failures),
            steps=tuple(budget.steps),
            failures_dropped=budget.failures_dropped,
            lines_read=self.lines_read,
            lines_kept=budget.lines,
            notes=tuple(self.notes),
            job_failed=self.job_failed,
        )


def _lines(stream: TextIO, max_chars: int) -> Iterator[str]:
    """The stream's lines, each cut to max_chars (the rest of an overlong line is skipped, not held)."""
    while True:
        line = stream.readline(max_chars)
        if not line:
            return
        if len(line) == max_chars and not line.endswith("\n"):
            rest = line
            while rest and not rest.endswith("\n"):
                rest = stream.readline(max_chars)
            line += " [line cut]"
        yield line


def _reduce(stream: TextIO, limits: Limits) -> Reduced:
    reducer = _Reducer(limits)
    for line in _lines(stream, limits.max_line_chars):
        reducer.feed(line)
    return reducer.result()


def reduce_log_text(text: str, limits: Limits | None = None) -> Reduced:
    """Reduce a CI log held in memory. Never raises on odd text."""
    return _reduce(io.StringIO(text, newline="\n"), limits or Limits())


def reduce_log_file(path: str | Path, limits: Limits | None = None) -> Reduced:
    """Reduce a CI log file (gzip when its name ends in .gz), streaming it.

    An unreadable file is a FixloopError (log_unreadable); its content never raises.
    """
    limits = limits or Limits()
    try:
        if str(path).endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="\n") as stream:
                return _reduce(stream, limits)
        with open(path, encoding="utf-8", errors="replace", newline="\n") as stream:
            return _reduce(stream, limits)
    except (OSError, EOFError, zlib.error) as error:
        raise FixloopError("LOG_UNREADABLE", f"cannot read the log {str(path)!r}: {error}") from error
