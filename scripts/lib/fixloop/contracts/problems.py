"""What is wrong with an agent's message, as a value rather than a raised error.

Finding and validating a document returns a Problem for every fault of the agent's content (an empty message,
no JSON, a cut-off document, a contract violation), so callers can branch on the result; the raising entry
points of `fixloop.contracts.validation` turn it into the same `FixloopError` (exit_code 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fixloop.core.errors import FixloopError


@dataclass(frozen=True)
class Problem:
    """The error object of a failed document: `code`, `message`, then the details in their order."""

    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def with_kind(self, kind: str) -> Problem:
        """The same problem, said of a document of `kind` (`kind` first among the details)."""
        return Problem(self.code, self.message, {"kind": kind, **self.details})

    def error(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}

    def exception(self) -> FixloopError:
        return FixloopError(self.code, self.message, exit_code=1, **self.details)
