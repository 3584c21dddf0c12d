"""What a phase asks of the engine when it is stepped: agents to call, a question, engine work, or an end.

A phase's `step` returns one of these. The engine (workflows.flow) keeps the books around it: it opens and
closes phases, stores dispatches and questions, runs `Work` outside the state lock, and ends the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    """One agent to call. `task` is the full instruction, handed to the agent when it starts; `role`
    chooses its model from the run's config (`models`)."""

    agent: str
    description: str
    task: str
    role: str


@dataclass(frozen=True)
class Dispatch:
    """Agents to call together, in one message. `label` names the step in logs and prompts."""

    calls: tuple[Call, ...]
    label: str
    round: int | None = None  # the review round it belongs to, for the cost per round


@dataclass(frozen=True)
class Option:
    label: str
    description: str


@dataclass(frozen=True)
class Ask:
    """A decision for the user. Unattended runs take `default` at once (logged as such)."""

    context: str
    question: str
    options: tuple[Option, ...]
    default: str
    logged: bool = False  # the phase logged the question itself (the review loop does)


@dataclass(frozen=True)
class Work:
    """Engine work that may take long (running tests or verification): done outside the state lock, its
    result handed back to the phase (`PhaseContext.work_result(kind)`)."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PhaseDone:
    """The phase ended with `status` (success, partial, skipped); `summary` goes into PHASE_END."""

    status: str
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunDone:
    """The phase ended and so does the run, early (e.g. nothing to fix): the rest of the phases are
    skipped and the run ends with `status`."""

    phase_status: str
    status: str
    reason: str
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PhaseFailed:
    """The phase failed: ERROR `code` is logged, the phase and the run end `status` (failed or
    user_cancelled)."""

    code: str
    message: str
    status: str = "failed"
    details: dict[str, Any] = field(default_factory=dict)
    logged: bool = False  # the phase logged and counted the error itself (the review loop does)


Outcome = Dispatch | Ask | Work | PhaseDone | RunDone | PhaseFailed
