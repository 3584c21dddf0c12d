"""Problems found in a plan's text, and the PLAN_INVALID error that carries all of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fixloop.core.errors import FixloopError


@dataclass(frozen=True)
class Problem:
    """Something that makes a plan unusable; `line` is 1-based, None when no one line is at fault."""

    line: int | None
    message: str

    def __str__(self) -> str:
        return self.message if self.line is None else f"line {self.line}: {self.message}"


def plan_invalid(problems: Sequence[Problem], source: str | None = None) -> FixloopError:
    """PLAN_INVALID naming every problem, in line order; details hold `line` (the first) and `problems`."""
    ordered = sorted(problems, key=lambda problem: (problem.line is None, problem.line or 0))
    listed = [{"line": problem.line, "message": problem.message} for problem in ordered]
    message = "; ".join(str(problem) for problem in ordered)
    if source is None:
        return FixloopError("PLAN_INVALID", message, line=ordered[0].line, problems=listed)
    return FixloopError("PLAN_INVALID", message, line=ordered[0].line, problems=listed, source=source)
