"""Loop decisions as pure functions: agent retries, review quality retries, confidence gates.

The numbers are fixloop.core.thresholds': recoverable errors retried at most MAX_RETRIES (2) times; a
review quality score of 50 or more passes, at most 3 quality retries; confidence auto_continue at 60,
ask_user at 40, else stop. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.core.thresholds import (
    CONFIDENCE_THRESHOLDS,
    MAX_QUALITY_RETRIES,
    MAX_RETRIES,
    QUALITY_ERROR_CODE,
    QUALITY_PASS_SCORE,
    RECOVERABLE_ERRORS,
)

_CODE = re.compile(r"[A-Z][A-Z0-9_]*")


def _check_code(code: object) -> str:
    if not isinstance(code, str) or not _CODE.fullmatch(code.strip().upper()):
        raise FixloopError(
            "INVALID_ARGUMENT",
            f"Invalid error code {code!r}: expected an upper-case identifier such as TIMEOUT.",
            argument="code",
            received=code if isinstance(code, str) else repr(code),
        )
    return code.strip().upper()


def _check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        bounds = f"{low}..{high}" if high is not None else f">= {low}"
        raise FixloopError(
            "INVALID_ARGUMENT" if name != "score" else "INVALID_SCORE",
            f"Invalid {name} {value!r}: expected an integer {bounds}.",
            argument=name,
            received=value if isinstance(value, (int, str)) else repr(value),
            valid_range=[low, high] if high is not None else [low, None],
        )
    return value


def is_recoverable(code: str) -> bool:
    return _check_code(code) in RECOVERABLE_ERRORS


def retry_decision(code: str, attempt: int, previous_errors: Sequence[str] = ()) -> dict[str, Any]:
    """Decide whether the attempt number `attempt` (1 = the first call), which failed with `code`, is retried.

    A recoverable error is retried while fewer than MAX_RETRIES retries have been made (so at most
    1 + MAX_RETRIES attempts in all). `retry_context` goes with the next attempt: attempt_number,
    previous_errors, recovery_actions_taken.
    """
    code = _check_code(code)
    attempt = _check_int("attempt", attempt, 1)
    earlier = [_check_code(item) for item in previous_errors]
    recoverable = code in RECOVERABLE_ERRORS
    retries_used = attempt - 1
    retry = recoverable and retries_used < MAX_RETRIES
    taken = [RECOVERABLE_ERRORS[item] for item in earlier if item in RECOVERABLE_ERRORS]
    if retry:
        taken.append(RECOVERABLE_ERRORS[code])
    if retry:
        reason = "recoverable"
    elif recoverable:
        reason = "max_retries_exceeded"
    else:
        reason = "not_recoverable"
    return {
        "code": code,
        "recoverable": recoverable,
        "retry": retry,
        "reason": reason,
        "attempt": attempt,
        "max_retries": MAX_RETRIES,
        "recovery_action": RECOVERABLE_ERRORS[code] if retry else None,
        "retry_context": {
            "attempt_number": attempt + 1 if retry else attempt,
            "previous_errors": [*earlier, code],
            "recovery_actions_taken": taken,
        },
    }


def quality_decision(score: int, attempt: int = 1, max_retries: int = MAX_QUALITY_RETRIES) -> dict[str, Any]:
    """Review quality gate: a verifier score >= 50 passes; below that the review is redone while retries last.

    `attempt` is the review attempt that was scored (1 = the first review); `max_retries` is capped at
    MAX_QUALITY_RETRIES.
    """
    score = _check_int("score", score, 0, 100)
    attempt = _check_int("attempt", attempt, 1)
    max_retries = _check_int("max_retries", max_retries, 0, MAX_QUALITY_RETRIES)
    passed = score >= QUALITY_PASS_SCORE
    retry = not passed and attempt - 1 < max_retries
    error: dict[str, Any] | None = None
    if not passed:
        error = {
            "code": QUALITY_ERROR_CODE,
            "message": f"Review quality score {score} is below the pass score {QUALITY_PASS_SCORE}.",
            "score": score,
            "threshold": QUALITY_PASS_SCORE,
            "recommended_action": "review_again_with_stricter_requirements" if retry else "stop_retrying",
        }
    return {
        "passed": passed,
        "score": score,
        "threshold": QUALITY_PASS_SCORE,
        "retry": retry,
        "attempt": attempt,
        "max_retries": max_retries,
        "error": error,
    }


def confidence_decision(score: int) -> dict[str, Any]:
    """auto_continue at >= 60, ask_user at >= 40, else stop (logged as CONFIDENCE_DECISION)."""
    score = _check_int("score", score, 0, 100)
    if score >= CONFIDENCE_THRESHOLDS["auto_continue"]:
        decision = "auto_continue"
    elif score >= CONFIDENCE_THRESHOLDS["ask_user"]:
        decision = "ask_user"
    else:
        decision = "stop"
    return {"confidence_score": score, "decision": decision, "threshold": dict(CONFIDENCE_THRESHOLDS)}
