"""What a run cost: the tokens of every agent call, as Claude Code reported them, summed and priced.

Two ledger lines carry tokens (store.ledger):
- `usage` (SubagentStop): all the model turns of one agent instance, read from its transcript; every stop
  of an agent writes one, the last (by agent_id) is the whole;
- `result` (PostToolUse): the Agent tool result's `usage`, which covers the agent's last model turn only.
An agent call counts its agent's transcript usage when that was read whole (`complete`), else its tool
result's, and is then listed under `incomplete`; a `usage` line of no call (the coordinator: the command's
own agent) counts on its own. Calls are attributed to the engine's dispatch they answered (by time), and
through it to a review round. The cost is an estimate from the config's price table: the model's own
entry (its exact id) if there is one, else its family's (haiku, sonnet, opus). Tokens of a model with no
price are never silently free: they are listed under `unpriced`, and the reports name the model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fixloop.store import layout, ledger

TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
FAMILIES = ("haiku", "sonnet", "opus")
PRICE_KEYS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_creation_input_tokens": "cache_write",
    "cache_read_input_tokens": "cache_read",
}


def family(model: object) -> str | None:
    text = str(model or "").lower()
    return next((name for name in FAMILIES if name in text), None)


_ZERO: Mapping[str, Any] = {"usage": {}, "total_tokens": 0, "complete": True}


def _empty() -> dict[str, Any]:
    return {**dict.fromkeys(TOKEN_KEYS, 0), "total_tokens": 0, "cost_usd": 0.0, "calls": 0}


def _add(total: dict[str, Any], usage: Mapping[str, int], tokens: int, cost: float) -> None:
    for key in TOKEN_KEYS:
        total[key] += int(usage.get(key) or 0)
    total["total_tokens"] += tokens
    total["cost_usd"] = round(total["cost_usd"] + cost, 6)
    total["calls"] += 1


UNREPORTED_MODEL = "(model not reported)"


def price_of(model: object, prices: Mapping[str, Mapping[str, float]]) -> Mapping[str, float] | None:
    """The price of `model`: its own entry, else its family's; None when neither is in `prices`."""
    if isinstance(model, str) and model in prices:
        return prices[model]
    return prices.get(family(model) or "")


def cost_of(usage: Mapping[str, int], model: object, prices: Mapping[str, Mapping[str, float]]) -> float:
    """The estimated cost in USD of `usage` on `model` (0.0 when it has no price: see price_of)."""
    price = price_of(model, prices)
    if price is None:
        return 0.0
    return sum(int(usage.get(key) or 0) * float(price[name]) for key, name in PRICE_KEYS.items()) / 1_000_000


def _note_unpriced(unpriced: dict[str, dict[str, Any]], model: object, tokens: int) -> None:
    name = model if isinstance(model, str) and model else UNREPORTED_MODEL
    entry = unpriced.setdefault(name, {"model": name, "calls": 0, "total_tokens": 0})
    entry["calls"] += 1
    entry["total_tokens"] += tokens


def unpriced_note(usage: Mapping[str, Any]) -> str | None:
    """A sentence naming the models whose tokens have no price (so the cost leaves them out), or None."""
    entries = [item for item in usage.get("unpriced") or [] if isinstance(item, Mapping)]
    if not entries:
        return None
    named = "; ".join(
        f"{item.get('model')} ({item.get('calls')} call(s), {item.get('total_tokens')} tokens)"
        for item in entries
    )
    return f"Not priced, so not in the cost: {named}. Give each a price in `prices` in .claude/fixloop.json."


def _dispatch_of(history: list[Mapping[str, Any]], ts: int) -> Mapping[str, Any] | None:
    found = None
    for dispatch in history:
        if int(dispatch.get("at_ms") or 0) <= ts:
            found = dispatch
    return found


def _last_usage_lines(records: list[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The last transcript `usage` line of each agent instance (by agent_id)."""
    found: dict[str, Mapping[str, Any]] = {}
    for record in records:
        agent_id = record.get("agent_id")
        if record.get("kind") == "usage" and isinstance(agent_id, str) and agent_id:
            found[agent_id] = record
    return found


def _counted(
    record: Mapping[str, Any], transcript: Mapping[str, Any] | None
) -> tuple[Mapping[str, Any] | None, str | None]:
    """The line whose tokens an agent call counts, and what it counts when that is short of the whole
    (None: it is not): "last_turn" (the tool result's usage), "partial_transcript" or "nothing"."""
    if transcript is not None and transcript.get("complete") is not False:
        return transcript, None
    if isinstance(record.get("usage"), dict):
        return record, "last_turn"
    return transcript, "partial_transcript" if transcript is not None else "nothing"


def summarize(
    records: Iterable[Mapping[str, Any]], history: list[Mapping[str, Any]], prices: Mapping[str, Any]
) -> dict[str, Any]:
    """Tokens and estimated cost in all, per agent, per review round and per engine step; `incomplete`
    lists the agent instances whose whole transcript usage was not available, and what counts instead;
    `unpriced` the models that have no price in `prices`, whose tokens add nothing to the cost."""
    records = list(records)
    total = _empty()
    by_agent: dict[str, dict[str, Any]] = {}
    by_round: dict[str, dict[str, Any]] = {}
    by_step: dict[str, dict[str, Any]] = {}
    incomplete: list[dict[str, Any]] = []
    unpriced: dict[str, dict[str, Any]] = {}
    calls = {record.get("tool_use_id"): record for record in records if record.get("kind") == "call"}
    transcripts = _last_usage_lines(records)
    called = {r.get("agent_id") for r in records if r.get("kind") == "result" and r.get("agent_id")}
    counted_ids: set[str] = set()
    for record in records:
        kind, agent_id = record.get("kind"), record.get("agent_id")
        if kind == "result":
            transcript = transcripts.get(agent_id) if isinstance(agent_id, str) else None
            if transcript is not None and agent_id in counted_ids:
                transcript = _ZERO  # a second call of the same instance: its transcript counted once
            source, short = _counted(record, transcript)
            if isinstance(agent_id, str):
                counted_ids.add(agent_id)
        elif kind == "usage" and agent_id not in called:
            if isinstance(agent_id, str) and transcripts.get(agent_id) is not record:
                continue  # an earlier stop of the same agent: its last line is the whole
            source, short = record, (None if record.get("complete") is not False else "partial_transcript")
        else:
            continue
        if short is not None:
            incomplete.append({"agent": record.get("agent"), "agent_id": agent_id, "counted": short})
        if source is None or not isinstance(source.get("usage"), dict):
            continue
        usage = {key: int(source["usage"].get(key) or 0) for key in TOKEN_KEYS}
        tokens = int(source.get("total_tokens") or sum(usage.values()))
        model = source.get("model") or record.get("model")
        cost = cost_of(usage, model, prices)
        if tokens and price_of(model, prices) is None:
            _note_unpriced(unpriced, model, tokens)
        agent = str(record.get("agent") or "?")
        _add(total, usage, tokens, cost)
        _add(by_agent.setdefault(agent, _empty()), usage, tokens, cost)
        call = calls.get(record.get("tool_use_id"))
        dispatch = _dispatch_of(history, int(call.get("ts_ms") or 0)) if call is not None else None
        if dispatch is not None:
            _add(by_step.setdefault(str(dispatch["id"]), _empty()), usage, tokens, cost)
            if dispatch.get("round") is not None:
                _add(by_round.setdefault(str(dispatch["round"]), _empty()), usage, tokens, cost)
    return {
        "total": total,
        "by_agent": by_agent,
        "by_round": by_round,
        "by_step": by_step,
        "incomplete": incomplete,
        "unpriced": sorted(unpriced.values(), key=lambda entry: str(entry["model"])),
        "estimated": True,
    }


def run_usage(root: Path, state: Mapping[str, Any]) -> dict[str, Any]:
    """The tokens and estimated cost of a run's agents so far, from its hook ledger."""
    flow = state.get("flow")
    history = (flow.get("history") if isinstance(flow, dict) else None) or []
    config = state.get("config")
    prices = (config.get("prices") if isinstance(config, dict) else None) or {}
    return summarize(ledger.read(layout.run_dir(root, str(state["run_id"]))), history, prices)


def over_budget(
    usage: Mapping[str, Any] | None, max_tokens: int | None, max_cost: float | None
) -> str | None:
    """Why another review round would pass the budget (spent so far + the costliest round), or None."""
    if not usage or (max_tokens is None and max_cost is None):
        return None
    total = usage.get("total") or {}
    rounds = list((usage.get("by_round") or {}).values())
    next_tokens = max((int(item.get("total_tokens") or 0) for item in rounds), default=0)
    next_cost = max((float(item.get("cost_usd") or 0.0) for item in rounds), default=0.0)
    spent_tokens = int(total.get("total_tokens") or 0)
    spent_cost = float(total.get("cost_usd") or 0.0)
    if max_tokens is not None and spent_tokens + next_tokens > max_tokens:
        return f"{spent_tokens} tokens spent, a round takes about {next_tokens}, the budget is {max_tokens}"
    if max_cost is not None and spent_cost + next_cost > max_cost:
        return f"${spent_cost:.4f} spent, a round costs about ${next_cost:.4f}, the budget is ${max_cost:.4f}"
    return None
