"""The loop's numbers: one set, shared by the contracts, the loop and `fixloop policy`.

- Agent retries: TIMEOUT, RATE_LIMIT and OUTPUT_TRUNCATED are recoverable, retried at most MAX_RETRIES times.
- Review quality: a verifier score of QUALITY_PASS_SCORE or more passes; below it the review is redone, at
  most MAX_QUALITY_RETRIES times, each time with the error QUALITY_TOO_LOW.
- Confidence: auto_continue at 60 or more, ask_user at 40 or more, else stop.
"""

from __future__ import annotations

# Error codes worth another attempt, and what the caller does before that attempt.
RECOVERABLE_ERRORS: dict[str, str] = {
    "TIMEOUT": "retry_same_input",
    "RATE_LIMIT": "wait_and_retry",
    "OUTPUT_TRUNCATED": "simplify_input",
}
MAX_RETRIES = 2

QUALITY_PASS_SCORE = 50
MAX_QUALITY_RETRIES = 3
QUALITY_ERROR_CODE = "QUALITY_TOO_LOW"

CONFIDENCE_THRESHOLDS: dict[str, int] = {"auto_continue": 60, "ask_user": 40, "stop": 0}
