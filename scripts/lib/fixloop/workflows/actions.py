"""The actions `fixloop next` answers: agents to call, a question for the user, the end of the run.

Each is a JSON document (for programs and tests) and renders to the short text the coordinator acts on.
An agent's prompt is short: its whole task is handed to it when it starts (by the SubagentStart hook), and
`fixloop task RUN AGENT` prints it for an agent that did not get it.
"""

from __future__ import annotations

from typing import Any

from fixloop.core.engine_path import ENGINE
from fixloop.core.errors import FixloopError
from fixloop.workflows.context import RunState, flow_of
from fixloop.workflows.outcomes import Ask, Dispatch

PLUGIN = "fixloop"


def subagent_type(agent: str) -> str:
    return f"{PLUGIN}:{agent}"


def new_dispatch(state: RunState, number: int, outcome: Dispatch, now: int) -> dict[str, Any]:
    """Store `outcome` as the run's pending dispatch (its agents' records start empty)."""
    models = (state.get("config") or {}).get("models") or {}
    calls = [
        {
            "agent": call.agent,
            "description": call.description,
            "model": models.get(call.role) if isinstance(models, dict) else None,
        }
        for call in outcome.calls
    ]
    dispatch = open_dispatch(state, number, outcome.label, outcome.round, calls, now)
    flow_of(state)["records"] = {}
    return dispatch


def open_dispatch(
    state: RunState,
    phase: int,
    label: str,
    round_: Any,
    calls: list[dict[str, Any]],
    now: int,
    reissue_of: int | None = None,
    idle: int = 0,
) -> dict[str, Any]:
    """Store a dispatch of `calls` (each an `agent`, its `description` and `model`) as the run's pending one
    under the next step number, each call with its prompt for that step, and enter the step in the run's
    history. A follow-up names the step it `reissue_of`, and how often in a row it went out without a call
    (`idle`)."""
    flow = flow_of(state)
    flow["dispatches"] = int(flow.get("dispatches") or 0) + 1
    step = flow["dispatches"]
    run_id = str(state["run_id"])
    dispatch: dict[str, Any] = {
        "id": step,
        "phase": phase,
        "label": label,
        "at_ms": now,
        "closed": False,
        "calls": [
            {
                "agent": call["agent"],
                "subagent_type": subagent_type(call["agent"]),
                "description": call["description"],
                "prompt": agent_prompt(run_id, step, label, call["agent"]),
                "model": call["model"],
            }
            for call in calls
        ],
    }
    entry: dict[str, Any] = {
        "id": step,
        "phase": phase,
        "label": label,
        "round": round_,
        "at_ms": now,
        "agents": [call["agent"] for call in calls],
    }
    if reissue_of is not None:
        dispatch.update(idle=idle, reissue_of=reissue_of)
        entry["reissue_of"] = reissue_of
    flow["dispatch"] = dispatch
    flow.setdefault("history", []).append(entry)
    return dispatch


def agent_prompt(run_id: str, step: int, label: str, agent: str) -> str:
    return f'fixloop run {run_id}, step {step}: {label}. No task given? Run "{ENGINE}" task {run_id} {agent}'


def agents_action(state: RunState, dispatch: dict[str, Any]) -> dict[str, Any]:
    calls = [
        {key: call[key] for key in ("subagent_type", "description", "prompt")} for call in dispatch["calls"]
    ]
    return {
        "action": "agent" if len(calls) == 1 else "agents",
        "run_id": state["run_id"],
        "step": dispatch["id"],
        "label": dispatch["label"],
        "calls": calls,
    }


def new_question(outcome: Ask, number: int, now: int) -> dict[str, Any]:
    return {
        "phase": number,
        "context": outcome.context,
        "question": outcome.question,
        "options": [{"label": option.label, "description": option.description} for option in outcome.options],
        "default": outcome.default,
        "asked_at_ms": now,
        "logged": outcome.logged,
    }


def ask_action(state: RunState, question: dict[str, Any]) -> dict[str, Any]:
    run_id = state["run_id"]
    return {
        "action": "ask_user",
        "run_id": run_id,
        "context": question["context"],
        "question": question["question"],
        "options": list(question["options"]),
        "default": question["default"],
        "answer": f"/fixloop:answer {run_id} LABEL",
    }


def check_choice(question: dict[str, Any], choice: str | None, default: bool) -> str:
    labels = [option["label"] for option in question["options"]]
    if default:
        if choice is not None and choice != question["default"]:
            raise FixloopError(
                "INVALID_CHOICE",
                f"--default chooses {question['default']!r} here, not {choice!r}.",
                valid_values=labels,
                received=choice,
            )
        return str(question["default"])
    if choice is None:
        raise FixloopError("MISSING_CHOICE", "Give a choice or --default.", valid_values=labels)
    if choice not in labels:
        raise FixloopError(
            "INVALID_CHOICE",
            f"Invalid choice {choice!r} for this question.",
            valid_values=labels,
            received=choice,
        )
    return choice


def stop_action(state: RunState) -> dict[str, Any]:
    from fixloop.workflows.summary import final_message

    outcome = flow_of(state).get("outcome") or {}
    return {
        "action": "stop",
        "run_id": state["run_id"],
        "status": state.get("status"),
        "reason": outcome.get("reason"),
        "error": outcome.get("error"),
        "summary": state.get("summary") or {},
        "message": final_message(state),
    }


# ---- text for the coordinator ----------------------------------------------------------------------


def render(action: dict[str, Any]) -> str:
    """The action as the coordinator reads it: what to do, exactly."""
    run_id = action.get("run_id")
    kind = action.get("action")
    if kind in ("agent", "agents"):
        calls = action["calls"]
        lines = [
            f"fixloop next (run {run_id}, step {action['step']}: {action['label']}): call "
            + ("this agent" if len(calls) == 1 else f"these {len(calls)} agents, all in ONE message")
            + ", with run_in_background false:"
        ]
        for call in calls:
            fields = (f"{key}: {call[key]}" for key in ("subagent_type", "description", "prompt"))
            lines.append("- " + " | ".join(fields))
        return "\n".join(lines)
    if kind == "ask_user":
        return (
            f"fixloop next (run {run_id}): the user must decide. End now; your final message is exactly:\n"
            + question_text(action)
        )
    return f"fixloop next (run {run_id}): the run has ended. End now; your final message is exactly:\n" + str(
        action.get("message") or ""
    )


def question_text(action: dict[str, Any]) -> str:
    lines = [f"fixloop needs your decision (run {action['run_id']}): {action['question']}"]
    for option in action["options"]:
        mark = " (default)" if option["label"] == action["default"] else ""
        lines.append(f"- {option['label']}{mark}: {option['description']}")
    lines.append(f"Answer with: /fixloop:answer {action['run_id']} <label>")
    return "\n".join(lines)
