"""The reviewer group of a run: REVIEW_PARALLEL_START when the reviewers are dispatched, REVIEW_PARALLEL_END
when the last of them returns.

The group lives in hooks-state.json under "review_group": opened by the first reviewer call when none is
open, one member per tool_use_id, closed when its last member returns. A finished group is kept as
"last_review_group". Its iteration is the run's current review round (else one more than the last
group's).
"""

from __future__ import annotations

from fixloop.core import agent_names
from fixloop.store import ledger

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fixloop.hookside.context import RunContext


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def join(context: RunContext, tool_use_id: str, agent: str, ts: int, phase: str | None) -> None:
    """A reviewer was called: add it to the open group, opening one (REVIEW_PARALLEL_START) if needed."""
    opened: dict[str, Any] = {}
    stale: dict[str, Any] = {}
    round_number = context.view.review_round

    def add(state: dict[str, Any]) -> None:
        group = state.get("review_group")
        if isinstance(group, dict) and isinstance(group.get("members"), dict):
            members = group["members"].values()
            again = any(isinstance(m, dict) and m.get("agent") == agent for m in members)
            other_round = round_number is not None and group.get("iteration") != round_number
            if again or other_round:
                # A new dispatch while the last group still waits for a result that never came (its
                # PostToolUse hook did not run): close that group with what it has.
                stale.update(_close(state, group, ts))
                group = None
        if not isinstance(group, dict) or not isinstance(group.get("members"), dict):
            previous = state.get("last_review_group")
            previous_iteration = _int(previous.get("iteration")) if isinstance(previous, dict) else None
            iteration = round_number or (previous_iteration or 0) + 1
            group = {"iteration": iteration, "started_ms": ts, "phase": phase, "members": {}}
            state["review_group"] = group
            opened["iteration"] = iteration
        group["members"][tool_use_id] = {"agent": agent, "call_ms": ts, "done": False}

    ledger.update_hooks_state(context.run_dir, add)
    if stale:
        context.emit("W", "REVIEW_PARALLEL_END", **stale)
    if opened:
        context.emit(
            "I",
            "REVIEW_PARALLEL_START",
            phase=phase,
            iteration=opened["iteration"],
            agents=list(agent_names.REVIEWER_AGENTS),
        )


def leave(
    context: RunContext,
    tool_use_id: str,
    status: str,
    issues: int | None,
    error: str | None,
    duration: int,
    ts: int,
) -> None:
    """A reviewer returned: mark its member done; the last one closes the group (REVIEW_PARALLEL_END)."""
    closed: dict[str, Any] = {}

    def done(state: dict[str, Any]) -> None:
        group = state.get("review_group")
        if not isinstance(group, dict) or not isinstance(group.get("members"), dict):
            return
        members: dict[str, Any] = group["members"]
        member = members.get(tool_use_id)
        if not isinstance(member, dict) or member.get("done"):
            return
        member.update(done=True, status=status, issues=issues, error=error, duration_ms=duration, end_ms=ts)
        if all(isinstance(m, dict) and m.get("done") for m in members.values()):
            closed.update(_close(state, group, ts))

    ledger.update_hooks_state(context.run_dir, done)
    if closed:
        context.emit("I", "REVIEW_PARALLEL_END", **closed)


def _close(state: dict[str, Any], group: dict[str, Any], ts: int) -> dict[str, Any]:
    """The REVIEW_PARALLEL_END fields of `group`, which becomes the last group; a member that never
    returned counts as failed (NO_RESULT)."""
    members: dict[str, Any] = group["members"]
    results: list[dict[str, Any]] = []
    for item in sorted(members.values(), key=lambda m: _int(m.get("call_ms")) or 0):
        done = bool(item.get("done"))
        result: dict[str, Any] = {
            "agent": item.get("agent"),
            "status": item.get("status") if done else "failed",
            "issues": (item.get("issues") or 0) if done else 0,
            "duration_ms": item.get("duration_ms") if done else None,
        }
        error = item.get("error") if done else "NO_RESULT"
        if error:
            result["error"] = error
        results.append(result)
    ends = [_int(m.get("end_ms")) for m in members.values() if m.get("done")]
    last_end = max((end for end in ends if end is not None), default=ts)
    group["closed_ms"] = ts
    state["last_review_group"] = group
    state.pop("review_group", None)
    return {
        "phase": group.get("phase"),
        "iteration": group.get("iteration"),
        "results": results,
        "total_issues": sum(r["issues"] for r in results if r["status"] != "failed"),
        "duration_ms": max(0, last_end - (_int(group.get("started_ms")) or last_end)),
    }
