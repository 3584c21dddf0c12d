"""Pydantic models for every JSON document that crosses an agent boundary.

The models load with the module that defines them (`fixloop.contracts.reviewer`, ...); the names below are
imported on first use, so importing one contract module does not build every model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fixloop.contracts.coordinator import CoordinatorInput, CoordinatorOutput
    from fixloop.contracts.fixer import FixerOutput
    from fixloop.contracts.reviewer import ReviewerIssue, ReviewerOutput
    from fixloop.contracts.task import ReviewTask
    from fixloop.contracts.verifier import VerifierOutput

_HOMES = {
    "CoordinatorInput": "coordinator",
    "CoordinatorOutput": "coordinator",
    "FixerOutput": "fixer",
    "ReviewTask": "task",
    "ReviewerIssue": "reviewer",
    "ReviewerOutput": "reviewer",
    "VerifierOutput": "verifier",
}

__all__ = [
    "CoordinatorInput",
    "CoordinatorOutput",
    "FixerOutput",
    "ReviewTask",
    "ReviewerIssue",
    "ReviewerOutput",
    "VerifierOutput",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
