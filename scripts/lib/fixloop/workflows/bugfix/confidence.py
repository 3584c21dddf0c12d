"""The diagnosis's confidence, computed by the engine from the root-cause analyst's scores and what the
engine measured itself.

- reproducibility is measured, never asked: 100 when phase 0 reproduced a failing test, 40 when the user
  named a failure (a test, a file, an error) the engine could not reproduce, 20 for a description only;
- specificity is capped at 40 when the root cause names no file, or one the project does not have;
- the score is the mean of the four factors, rounded half up; the decision is
  `fixloop.review.policy.confidence_decision`'s (auto_continue >= 60, ask_user >= 40, else stop).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.review.policy import confidence_decision
from fixloop.store import layout

FACTORS = ("clarity", "specificity", "context", "reproducibility")
REPRODUCED = 100
NAMED_NOT_REPRODUCED = 40
DESCRIPTION_ONLY = 20
SPECIFICITY_CAP = 40
# A description names a failure when it quotes a test, a source file, an error type or a failing assertion.
_NAMES_A_FAILURE = re.compile(
    r"::|\btest_\w+|\w+\.(?:py|[cm]?[jt]sx?|spec|test|go|rs|rb|java|kt)\b|\b\w*(?:Error|Exception)\b"
    r"|\bFAILED\b|\bexpected\b.*\b(?:received|got|but)\b|\btraceback\b",
    re.IGNORECASE,
)


def names_a_failure(description: str) -> bool:
    return bool(_NAMES_A_FAILURE.search(description))


def reproducibility(collected: Mapping[str, Any]) -> tuple[int, str]:
    """The measured score and why."""
    if collected.get("reproduced"):
        return REPRODUCED, "reproduced"
    if names_a_failure(str(collected.get("description") or "")):
        return NAMED_NOT_REPRODUCED, "named_not_reproduced"
    return DESCRIPTION_ONLY, "description_only"


def file_exists(root: Path, file: object) -> bool:
    if not isinstance(file, str) or not file.strip():
        return False
    try:
        return layout.resolve_inside(root, file).is_file()
    except FixloopError:
        return False


def assess(root: Path, collected: Mapping[str, Any], answer: Mapping[str, Any]) -> dict[str, Any]:
    """The confidence of a root-cause answer: score, factors, decision and how each factor was set."""
    reported = dict(answer.get("factors") or {})
    factors = {name: int(reported.get(name) or 0) for name in FACTORS[:3]}
    factors["reproducibility"], how = reproducibility(collected)
    adjustments: dict[str, Any] = {"reproducibility": how}
    root_file = (answer.get("root_cause") or {}).get("file")
    if not file_exists(root, root_file) and factors["specificity"] > SPECIFICITY_CAP:
        factors["specificity"] = SPECIFICITY_CAP
        adjustments["specificity"] = "file_not_found" if root_file else "no_file"
    score = (sum(factors.values()) * 2 + len(FACTORS)) // (2 * len(FACTORS))  # the mean, half up
    decided = confidence_decision(score)
    return {
        "confidence_score": score,
        "decision": decided["decision"],
        "threshold": decided["threshold"],
        "factors": factors,
        "measured": ["reproducibility"],
        "reported": reported,
        "adjustments": adjustments,
    }
