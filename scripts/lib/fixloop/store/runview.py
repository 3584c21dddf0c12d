"""What the hooks may know of a run's state: a small, read-only view of it.

The state document (runs/<id>/state.json) is written by the engine; this module is the one place outside
the engine's own writers that reads the parts the hooks need (open phases, review rounds, logging, the
latest dispatch of agents), so the state's layout can change without the hooks noticing. Standard library
only, without typing or dataclasses at run time: hooks build a view on every fixloop subagent call.
"""

from __future__ import annotations

from fixloop.core.agent_names import PLUGIN_PREFIX
from fixloop.store.logwriter import LOG_LEVELS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, NoReturn


class _Frozen:
    """Attributes set once in __init__; any later assignment is an error."""

    __slots__: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def _set(self, **values: object) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, name) for name in self.__slots__))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class LogSettings(_Frozen):
    """Where and how the run logs: `enabled` False (or no paths) means it writes no events."""

    __slots__ = ("enabled", "jsonl_path", "level", "session_id", "text_path")
    enabled: bool
    level: str
    session_id: str
    jsonl_path: str | None
    text_path: str | None

    def __init__(
        self, enabled: bool, level: str, session_id: str, jsonl_path: str | None, text_path: str | None
    ) -> None:
        self._set(
            enabled=enabled, level=level, session_id=session_id, jsonl_path=jsonl_path, text_path=text_path
        )


class DispatchView(_Frozen):
    """The run's latest dispatch of agents (`flow.dispatch`): its number, when it was issued, whether the
    engine closed it, and its calls as (agent, subagent_type, model) tuples (model None: the agent's own)."""

    __slots__ = ("at_ms", "calls", "closed", "id")
    id: int
    at_ms: int
    closed: bool
    calls: tuple[tuple[str, str, str | None], ...]

    def __init__(
        self, id: int, at_ms: int, closed: bool, calls: tuple[tuple[str, str, str | None], ...]
    ) -> None:
        self._set(id=id, at_ms=at_ms, closed=closed, calls=calls)


class RunView(_Frozen):
    """A run as the hooks see it.

    `running`: the run has not ended. `phase`: `phase_N` of the most recently opened phase that is still
    open, or None. `review_round`: the `iteration` of the last review round, None before the first.
    `dispatch`: the latest dispatch of agents, None before the first. `interactive`: a person can answer
    the run's questions. `asking`: the run waits for the user's answer. `final_message`: what the user
    must read at the end (set when the run ended).
    """

    __slots__ = (
        "asking",
        "dispatch",
        "final_message",
        "interactive",
        "log",
        "phase",
        "review_round",
        "run_id",
        "running",
    )
    run_id: str
    running: bool
    phase: str | None
    review_round: int | None
    log: LogSettings
    dispatch: DispatchView | None
    interactive: bool
    asking: bool
    final_message: str | None

    def __init__(
        self,
        run_id: str,
        running: bool,
        phase: str | None,
        review_round: int | None,
        log: LogSettings,
        dispatch: DispatchView | None = None,
        interactive: bool = False,
        asking: bool = False,
        final_message: str | None = None,
    ) -> None:
        self._set(
            run_id=run_id,
            running=running,
            phase=phase,
            review_round=review_round,
            log=log,
            dispatch=dispatch,
            interactive=interactive,
            asking=asking,
            final_message=final_message,
        )


def run_view(state: Mapping[str, Any]) -> RunView:
    """The view of a state document; a missing or malformed part reads as absent, never as an error."""
    run_id = state.get("run_id")
    run_id = run_id if isinstance(run_id, str) else ""
    flow = state.get("flow")
    return RunView(
        run_id=run_id,
        running=state.get("status") == "running" and state.get("ended_at_ms") is None,
        phase=_current_phase(state.get("open_phases")),
        review_round=_review_round(state.get("review")),
        log=_log_settings(state.get("logging"), run_id),
        dispatch=_dispatch(flow),
        interactive=state.get("interactive") is True,
        asking=isinstance(flow, dict) and isinstance(flow.get("question"), dict),
        final_message=_text(state.get("final_message")),
    )


def _current_phase(open_phases: object) -> str | None:
    if not isinstance(open_phases, dict) or not open_phases:
        return None
    best: tuple[int, int] | None = None
    for key, started in open_phases.items():
        try:
            candidate = (int(started), int(key))
        except (TypeError, ValueError):
            continue
        if best is None or candidate > best:
            best = candidate
    return f"phase_{best[1]}" if best is not None else None


def _review_round(review: object) -> int | None:
    rounds = review.get("rounds") if isinstance(review, dict) else None
    if not isinstance(rounds, list) or not rounds or not isinstance(rounds[-1], dict):
        return None
    number = rounds[-1].get("iteration")
    return number if isinstance(number, int) and not isinstance(number, bool) and number >= 1 else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dispatch(flow: object) -> DispatchView | None:
    dispatch = flow.get("dispatch") if isinstance(flow, dict) else None
    if not isinstance(dispatch, dict):
        return None
    number, at_ms, calls = _int(dispatch.get("id")), _int(dispatch.get("at_ms")), dispatch.get("calls")
    if number is None or at_ms is None or not isinstance(calls, list):
        return None
    found: list[tuple[str, str, str | None]] = []
    for call in calls:
        agent = call.get("agent") if isinstance(call, dict) else None
        if not isinstance(agent, str) or not agent:
            continue
        subagent_type = call.get("subagent_type")
        model = call.get("model")
        found.append(
            (
                agent,
                subagent_type if isinstance(subagent_type, str) and subagent_type else PLUGIN_PREFIX + agent,
                model if isinstance(model, str) and model else None,
            )
        )
    return DispatchView(number, at_ms, dispatch.get("closed") is True, tuple(found))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _log_settings(logging: object, run_id: str) -> LogSettings:
    if not isinstance(logging, dict):
        return LogSettings(False, "info", run_id, None, None)
    files = logging.get("log_files")
    files = files if isinstance(files, dict) else {}
    level = logging.get("level")
    return LogSettings(
        enabled=logging.get("enabled") is True,
        level=level if isinstance(level, str) and level in LOG_LEVELS else "info",
        session_id=str(logging.get("session_id") or run_id),
        jsonl_path=_text(files.get("jsonl")),
        text_path=_text(files.get("text")),
    )
