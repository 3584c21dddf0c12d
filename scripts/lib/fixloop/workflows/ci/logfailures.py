"""A reduced CI log (fixloop.failures.cilog) -> the failures the run keeps and the analyst is handed.

Each failure gets an id (F1, F2, ...). A failing step in which no parser recognised a failure is a failure
of its own (kind `step`, its last lines as details). Everything is bounded twice: by the reduction's
Limits (200 lines a failure, LIMITS.total_lines in all) and here by MAX_FAILURES and MAX_CHARS, so a log of
any size hands an agent at most about MAX_CHARS characters; what was left out is counted and said.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fixloop.core.redact import redact
from fixloop.failures import FailedStep, Limits, Reduced, ReducedFailure

LIMITS = Limits(lines_per_failure=200, total_lines=1500, tail_lines=400, max_line_chars=500)
MAX_FAILURES = 40
MAX_CHARS = 120_000
MAX_MESSAGE_CHARS = 500
STEP_KIND = "step"  # a failing step whose log showed no failure a parser knows


def _where(job: str | None, step: str | None) -> str:
    return " / ".join(part for part in (job, step) if part) or "the log"


def _from_failure(item: ReducedFailure) -> dict[str, Any]:
    failure = asdict(item.failure)
    return {
        **failure,
        "message": redact(str(failure["message"]))[:MAX_MESSAGE_CHARS],
        "details": redact(str(failure["details"])),
        "job": item.job,
        "step": item.step,
        "lines_dropped": item.lines_dropped,
    }


def _from_step(step: FailedStep) -> dict[str, Any]:
    code = f" with exit code {step.exit_code}" if step.exit_code not in (None, 0) else ""
    return {
        "runner": step.runner,
        "test_id": _where(step.job, step.step),
        "kind": STEP_KIND,
        "message": f"The step failed{code}; no failure was recognised in its log (its last lines follow).",
        "file": None,
        "line": None,
        "details": "\n".join(step.tail),  # the reduction masked secrets in tails already
        "suite": None,
        "job": step.job,
        "step": step.step,
        "lines_dropped": step.tail_dropped,
    }


def shows_failure(reduced: Reduced, only_failed_steps: bool) -> bool:
    """Whether the log says something failed. `gh run view --log-failed` prints only failed steps, so any
    line of it does; a whole log needs a failure, a failing step or a closing failure line."""
    if reduced.failures or reduced.job_failed:
        return True
    if only_failed_steps and reduced.lines_read > 0:
        return True
    return any(step.exit_code not in (None, 0) or step.failures for step in reduced.steps)


def log_failures(reduced: Reduced, only_failed_steps: bool) -> dict[str, Any]:
    """{"failures", "failures_dropped", "lines_read", "lines_kept", "notes", "failed"} of a reduced log."""
    failed = shows_failure(reduced, only_failed_steps)
    found = [_from_failure(item) for item in reduced.failures]
    if failed:
        found += [_from_step(step) for step in reduced.steps if not step.failures and step.tail]
    kept: list[dict[str, Any]] = []
    chars = 0
    capped = 0
    for failure in found:
        size = len(failure["message"]) + len(failure["details"])
        if len(kept) >= MAX_FAILURES or chars + size > MAX_CHARS:
            capped += 1
            continue
        kept.append({"id": f"F{len(kept) + 1}", **failure})
        chars += size
    notes = list(reduced.notes)
    if capped:
        notes.append(
            f"{capped} more failure(s) were left out to keep what an agent reads under {MAX_CHARS} characters"
        )
    return {
        "failures": kept,
        "failures_dropped": reduced.failures_dropped + capped,
        "lines_read": reduced.lines_read,
        "lines_kept": reduced.lines_kept,
        "notes": notes,
        "failed": failed,
    }
