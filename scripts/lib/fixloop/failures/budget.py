"""Keeping a reduction within its limits, and counting exactly what it leaves out."""

from __future__ import annotations

from dataclasses import replace

from fixloop.core.redact import redact
from fixloop.failures.cimodel import FailedStep, Limits, ReducedFailure
from fixloop.failures.model import Failure, Parsed

MAX_STEPS = 500  # failing steps described; more are counted in a note


def trim_block(details: str, room: int) -> tuple[list[str], int, int]:
    """At most `room` lines of `details`: its head and its end, a marker line for the middle.

    Returns (lines to show, detail lines kept, detail lines dropped).
    """
    lines = details.split("\n") if details else []
    if len(lines) <= room:
        return lines, len(lines), 0
    if room <= 0:
        return [], 0, len(lines)
    shown = room - 1  # one line goes to the marker
    head = shown * 2 // 3
    tail = shown - head
    dropped = len(lines) - shown
    kept = [
        *lines[:head],
        f"[... {dropped} lines dropped ...]",
        *(lines[len(lines) - tail :] if tail else []),
    ]
    return kept, shown, dropped


class Budget:
    """The failures and failing steps of one reduction, within Limits.total_lines."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.failures: list[ReducedFailure] = []
        self.steps: list[FailedStep] = []
        self.failures_dropped = 0
        self.steps_dropped = 0
        self.lines = 0  # lines returned so far, markers included

    def add_step(
        self,
        job: str | None,
        step: str | None,
        exit_code: int | None,
        parsed: Parsed,
        tail: list[str],
        step_lines: int,
    ) -> None:
        for failure in parsed.failures:
            self._add_failure(failure, job, step)
        if len(self.steps) >= MAX_STEPS:
            self.steps_dropped += 1
            return
        shown: tuple[str, ...] = ()
        if not parsed.failures:  # nothing recognised: the step's last lines are the best evidence
            room = max(0, min(self.limits.lines_per_failure, self.limits.total_lines - self.lines))
            shown = tuple(redact(line) for line in tail[max(0, len(tail) - room) :]) if room else ()
            self.lines += len(shown)
        self.steps.append(
            FailedStep(
                job=job,
                step=step,
                exit_code=exit_code,
                runner=parsed.runner if parsed.runner != "unknown" else None,
                run_error=parsed.run_error,
                failures=len(parsed.failures),
                tail=shown,
                tail_dropped=step_lines - len(shown) if not parsed.failures else 0,
            )
        )

    def _add_failure(self, failure: Failure, job: str | None, step: str | None) -> None:
        room = min(self.limits.lines_per_failure, self.limits.total_lines - self.lines)
        if room < 1:
            self.failures_dropped += 1
            return
        lines, kept, dropped = trim_block(failure.details, room - 1)  # one line for the message
        self.lines += 1 + len(lines)
        self.failures.append(
            ReducedFailure(replace(failure, details="\n".join(lines)), job, step, 1 + kept, dropped)
        )
