"""What a CI log reduces to: its failing steps' failures, bounded, with an account of what was left out."""

from __future__ import annotations

from dataclasses import dataclass

from fixloop.core.errors import FixloopError
from fixloop.failures.model import Failure


@dataclass(frozen=True)
class Limits:
    """How much of a log a reduction may return.

    lines_per_failure bounds one failure (its message line and error block); total_lines bounds everything
    returned; tail_lines is how many closing lines of each step are kept in memory (a step's summary sits
    there); max_line_chars cuts longer lines (minified code, base64 blobs).
    """

    lines_per_failure: int = 200
    total_lines: int = 2000
    tail_lines: int = 400
    max_line_chars: int = 2000

    def __post_init__(self) -> None:
        for name in ("lines_per_failure", "total_lines", "tail_lines", "max_line_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise FixloopError("INVALID_LIMITS", f"{name} must be a positive whole number, not {value!r}")
        if self.lines_per_failure < 3 or self.max_line_chars < 80:
            raise FixloopError(
                "INVALID_LIMITS", "lines_per_failure must be at least 3 and max_line_chars at least 80"
            )


@dataclass(frozen=True)
class ReducedFailure:
    """A failure as returned: `failure.details` holds at most the kept lines (a marker line stands for the
    dropped middle). lines_kept counts the message line and the kept detail lines."""

    failure: Failure
    job: str | None
    step: str | None
    lines_kept: int
    lines_dropped: int


@dataclass(frozen=True)
class FailedStep:
    """A step that failed. `tail` holds its last lines when no parser found a failure in it."""

    job: str | None
    step: str | None
    exit_code: int | None
    runner: str | None
    run_error: bool
    failures: int  # failures parsed in the step (kept or dropped)
    tail: tuple[str, ...] = ()
    tail_dropped: int = 0  # the step's lines before the tail, not returned


@dataclass(frozen=True)
class Reduced:
    """A CI log's failures. failures_dropped counts those left out for the total cap; lines_read counts the
    log's lines; lines_kept counts every returned line (failures and tails), at most Limits.total_lines;
    job_failed says whether the log says its job failed (a runner's closing failure line)."""

    failures: tuple[ReducedFailure, ...]
    steps: tuple[FailedStep, ...]
    failures_dropped: int
    lines_read: int
    lines_kept: int
    notes: tuple[str, ...] = ()
    job_failed: bool = False
