"""One step of the loop: what it works on (`StepContext`) and what it returns (`Transition`).

A step takes the run state and returns a `Transition`: the new state, the log events to emit as
(level, type, fields) tuples, and the answer document for the CLI. By default the input state is not
modified (the step works on a copy); `inplace=True` skips that copy for callers that already hold a private
copy (StateStore.update hands one out). Side effects on the project (snapshots and rollbacks) go through an
`Effects` object the caller supplies, so the logic is testable without files.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from fixloop.review.access import config_of, review_of, run_id_of
from fixloop.review.state import RunState, Snapshot
from fixloop.store.edits import RollbackReport

Event = tuple[str, str, dict[str, Any]]
Document = dict[str, Any]  # an answer printed by the CLI (an action, a record answer, a choice)


class Effects(Protocol):
    """What the loop needs done to the project's files."""

    def take_snapshot(self, round_number: int, files: Sequence[str]) -> Snapshot: ...

    def changed_since(self, snapshot: Mapping[str, Any]) -> list[str]: ...

    def rollback(self, snapshot: Mapping[str, Any]) -> RollbackReport: ...

    def touched_since(self, snapshot: Mapping[str, Any]) -> list[str]: ...

    def line_counts(self, files: Sequence[str]) -> dict[str, int]: ...


@dataclass
class Transition:
    state: RunState
    events: list[Event] = field(default_factory=list)
    document: Document = field(default_factory=dict)


def _clone(value: RunState) -> RunState:
    # The state is JSON data; a JSON round trip is several times faster than copy.deepcopy.
    result: RunState = json.loads(json.dumps(value))
    return result


class StepContext:
    """The state a step works on (a copy unless `inplace`), its time, config, effects and events."""

    def __init__(
        self, state: RunState, effects: Effects | None, now_ms: int | None, inplace: bool = False
    ) -> None:
        self.state = state if inplace else _clone(state)
        self.now = now_ms if now_ms is not None else round(time.time() * 1000)
        self.review = review_of(self.state, self.now)
        self.config = config_of(self.state)
        self.effects = effects
        self.events: list[Event] = []

    def emit(self, level: str, type_: str, **fields: Any) -> None:
        self.events.append((level, type_, fields))

    @property
    def run_id(self) -> str:
        return run_id_of(self.state)

    def transition(self, document: Document) -> Transition:
        return Transition(self.state, self.events, document)
