"""Tokens per agent, round and step from the hook ledger, an estimated cost, and the budget rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers_review import CR, A, fixer_doc, open_review

from fixloop.contracts.coordinator import DEFAULT_PRICES
from fixloop.runs.config import load_config
from fixloop.runs.usage import family, over_budget, summarize, unpriced_note

PRICES = {name: price.model_dump() for name, price in DEFAULT_PRICES.items()}
HISTORY = [
    {"id": 1, "phase": 0, "label": "review round 1", "round": 1, "at_ms": 1000},
    {"id": 2, "phase": 0, "label": "fix round 1", "round": 1, "at_ms": 5000},
    {"id": 3, "phase": 0, "label": "review round 2", "round": 2, "at_ms": 9000},
]


def call_and_result(tool: str, agent: str, ts: int, model: str, inp: int, out: int) -> list[dict[str, Any]]:
    usage = {
        "input_tokens": inp,
        "output_tokens": out,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    return [
        {"kind": "call", "ts_ms": ts, "agent": agent, "tool_use_id": tool},
        {"kind": "result", "ts_ms": ts + 10, "agent": agent, "tool_use_id": tool, "usage": usage,
         "total_tokens": inp + out, "model": model},
    ]  # fmt: skip


def test_tokens_add_up_per_agent_round_and_step_with_a_cost() -> None:
    records = [
        *call_and_result("t1", CR, 1100, "claude-sonnet-5-5", 1_000_000, 0),
        *call_and_result("t2", "review-fixer", 5100, "claude-haiku-5-5", 0, 1_000_000),
        *call_and_result("t3", CR, 9100, "claude-sonnet-5-5", 2000, 1000),
        {"kind": "stop", "agent": CR, "ts_ms": 1200},
    ]
    usage = summarize(records, HISTORY, PRICES)
    assert usage["total"]["total_tokens"] == 2_003_000
    assert usage["total"]["calls"] == 3
    assert usage["total"]["cost_usd"] == round(3.0 + 5.0 + (2000 * 3.0 + 1000 * 15.0) / 1_000_000, 6)
    assert usage["by_agent"][CR]["total_tokens"] == 1_003_000
    assert usage["by_agent"]["review-fixer"]["cost_usd"] == 5.0
    assert {key: item["total_tokens"] for key, item in usage["by_round"].items()} == {
        "1": 2_000_000,
        "2": 3000,
    }
    assert sorted(usage["by_step"]) == ["1", "2", "3"]


def test_an_unknown_model_has_tokens_but_no_price() -> None:
    usage = summarize(call_and_result("t", CR, 1100, "some-other-model", 10, 10), HISTORY, PRICES)
    assert (usage["total"]["total_tokens"], usage["total"]["cost_usd"]) == (20, 0.0)
    assert usage["unpriced"] == [{"model": "some-other-model", "calls": 1, "total_tokens": 20}]
    assert unpriced_note(usage) == (
        "Not priced, so not in the cost: some-other-model (1 call(s), 20 tokens). Give each a price in "
        "`prices` in .claude/fixloop.json."
    )
    assert family("claude-opus-4-5") == "opus"
    assert family(None) is None


def test_the_budget_counts_the_costliest_round_ahead() -> None:
    usage = summarize(
        [
            *call_and_result("t1", CR, 1100, "sonnet", 600, 0),
            *call_and_result("t3", CR, 9100, "sonnet", 300, 0),
        ],
        HISTORY,
        PRICES,
    )
    assert over_budget(usage, 1500, None) is None  # 900 spent + 600 for a round = 1500
    assert over_budget(usage, 1499, None) == "900 tokens spent, a round takes about 600, the budget is 1499"
    assert over_budget(usage, None, 0.001) is not None
    assert over_budget(usage, None, None) is None
    assert over_budget(None, 10, 1.0) is None


def test_a_small_budget_ends_the_review_loop_with_budget_exhausted() -> None:
    loop = open_review(use_verifier=False, max_tokens=1000)
    loop.review({CR: [A]})
    assert loop.next()["action"] == "fix"
    loop.record("review-fixer", fixer_doc({"FL-001": "succeeded"}))
    assert loop.next()["action"] == "verify"
    loop.verify(True)
    loop.state["usage"] = summarize(call_and_result("t1", CR, 1100, "sonnet", 800, 0), HISTORY, PRICES)
    stop = loop.next()
    assert (stop["action"], stop["termination_reason"], stop["status"]) == (
        "stop",
        "budget_exhausted",
        "partial",
    )
    (warning,) = [item for item in loop.of_type("WARNING") if item["code"] == "BUDGET_EXHAUSTED"]
    assert warning["message"] == "No round 2: 800 tokens spent, a round takes about 800, the budget is 1000."


# ---- the transcript's usage (every model turn) over the tool result's (the last turn) -------------------


def tokens(inp: int, out: int) -> dict[str, int]:
    return {"input_tokens": inp, "output_tokens": out, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0}  # fmt: skip


def transcript_line(agent: str, agent_id: str | None, inp: int, out: int, **fields: Any) -> dict[str, Any]:
    """A `usage` ledger line as the SubagentStop hook writes it from the agent's transcript."""
    return {"kind": "usage", "ts_ms": 5050, "agent": agent, "agent_id": agent_id, "usage": tokens(inp, out),
            "total_tokens": inp + out, "model": "claude-opus-5-1", "responses": 4, "complete": True,
            **fields}  # fmt: skip


def fixer_call(agent_id: str | None, with_usage: bool = True) -> list[dict[str, Any]]:
    """The fixer's call of fix round 1; its tool result reports the usage of its last turn (1000 + 50)."""
    call, result = call_and_result("t2", "review-fixer", 5100, "claude-opus-5-1", 1000, 50)
    result["agent_id"] = agent_id
    if not with_usage:  # a background call, finished at its stop: no tool result usage
        for key in ("usage", "total_tokens", "model"):
            del result[key]
    return [call, result]


def by(usage: dict[str, Any], part: str, key: str, field: str = "total_tokens") -> Any:
    return usage[part][key][field]


def test_a_call_counts_every_turn_of_its_agent_from_the_transcript() -> None:
    records = [
        *call_and_result("t1", CR, 1100, "claude-sonnet-5-5", 300, 10),  # no transcript line: its last turn
        *fixer_call("a-fix"),
        transcript_line("review-fixer", "a-fix", 4000, 260),
    ]
    usage = summarize(records, HISTORY, PRICES)
    assert by(usage, "by_agent", "review-fixer") == 4260
    assert by(usage, "by_agent", "review-fixer", "calls") == 1
    assert by(usage, "by_agent", "review-fixer", "cost_usd") == round((4000 * 5.0 + 260 * 25.0) / 1e6, 6)
    assert (by(usage, "by_round", "1"), by(usage, "by_step", "2")) == (4260 + 310, 4260)
    assert usage["total"]["total_tokens"] == 4570 and usage["total"]["calls"] == 2
    assert usage["incomplete"] == [{"agent": CR, "agent_id": None, "counted": "last_turn"}]


def test_the_last_stop_of_an_agent_holds_its_whole_usage() -> None:
    """A fixer sent on after its first answer stops twice: each stop's line sums the transcript so far."""
    records = [
        transcript_line("review-fixer", "a-fix", 3000, 200),
        transcript_line("review-fixer", "a-fix", 4000, 260),
        *fixer_call("a-fix"),
    ]
    usage = summarize(records, HISTORY, PRICES)
    assert (by(usage, "by_agent", "review-fixer"), usage["total"]["calls"]) == (4260, 1)
    assert by(usage, "by_round", "1") == 4260 and usage["incomplete"] == []
    # Read before the PostToolUse hook wrote the call's result: the agent counts already, in no round yet.
    early = summarize(records[:2], HISTORY, PRICES)
    assert (early["total"]["total_tokens"], early["total"]["calls"], early["by_round"]) == (4260, 1, {})


def test_without_a_whole_transcript_the_tool_result_s_last_turn_counts() -> None:
    for lines in ([], [transcript_line("review-fixer", "a-fix", 3000, 200, complete=False)]):
        usage = summarize([*lines, *fixer_call("a-fix")], HISTORY, PRICES)
        assert (by(usage, "by_agent", "review-fixer"), usage["total"]["calls"]) == (1050, 1)
        assert usage["incomplete"] == [{"agent": "review-fixer", "agent_id": "a-fix", "counted": "last_turn"}]


def test_a_background_call_counts_its_transcript_even_a_partial_one() -> None:
    whole = summarize(
        [*fixer_call("a-fix", with_usage=False), transcript_line("review-fixer", "a-fix", 4000, 260)],
        HISTORY,
        PRICES,
    )
    assert (by(whole, "by_round", "1"), whole["incomplete"]) == (4260, [])
    partial = summarize(
        [*fixer_call("a-fix", False), transcript_line("review-fixer", "a-fix", 3000, 200, complete=False)],
        HISTORY,
        PRICES,
    )
    assert by(partial, "by_agent", "review-fixer") == 3200
    assert partial["incomplete"] == [
        {"agent": "review-fixer", "agent_id": "a-fix", "counted": "partial_transcript"}
    ]
    nothing = summarize(fixer_call("a-fix", False), HISTORY, PRICES)
    assert (nothing["total"]["calls"], nothing["by_agent"]) == (0, {})
    assert nothing["incomplete"] == [{"agent": "review-fixer", "agent_id": "a-fix", "counted": "nothing"}]


def test_the_coordinator_and_lines_of_no_call_count_on_their_own() -> None:
    older = transcript_line("failure-analyst", None, 100, 1)
    del older["complete"]  # a line written before there was `complete`
    records = [
        transcript_line("coordinator", "a-coord", 30000, 20),
        older,
        transcript_line("failure-analyst", None, 100, 1),
        *fixer_call("a-fix"),
        transcript_line("review-fixer", "a-fix", 4000, 260),
    ]
    usage = summarize(records, HISTORY, PRICES)
    assert {name: (item["total_tokens"], item["calls"]) for name, item in usage["by_agent"].items()} == {
        "coordinator": (30020, 1),
        "failure-analyst": (202, 2),
        "review-fixer": (4260, 1),
    }
    assert by(usage, "by_round", "1") == 4260  # the coordinator's own turns belong to no round
    partial = summarize([transcript_line("coordinator", "a-coord", 30, 2, complete=False)], HISTORY, PRICES)
    assert by(partial, "by_agent", "coordinator") == 32
    assert partial["incomplete"] == [
        {"agent": "coordinator", "agent_id": "a-coord", "counted": "partial_transcript"}
    ]


def test_a_second_call_of_the_same_agent_instance_counts_its_transcript_once() -> None:
    first = fixer_call("a-fix")
    second = [{**line, "tool_use_id": "t9", "ts_ms": 9100 + n} for n, line in enumerate(fixer_call("a-fix"))]
    usage = summarize([*first, *second, transcript_line("review-fixer", "a-fix", 4000, 260)], HISTORY, PRICES)
    assert (usage["total"]["total_tokens"], usage["total"]["calls"]) == (4260, 2)


def test_a_price_table_missing_a_family_names_it_instead_of_counting_it_free() -> None:
    """A run whose table lacks a family (a state written before prices were merged): named, not $0."""
    records = [
        *call_and_result("t1", CR, 1100, "claude-sonnet-5-5", 1_000_000, 0),
        *call_and_result("t2", "review-fixer", 5100, "claude-opus-5-5", 1000, 0),
        *call_and_result("t3", CR, 9100, "claude-opus-5-5", 2000, 0),
    ]
    usage = summarize(records, HISTORY, {"sonnet": PRICES["sonnet"]})
    assert usage["total"]["cost_usd"] == 3.0
    assert usage["unpriced"] == [{"model": "claude-opus-5-5", "calls": 2, "total_tokens": 3000}]
    assert summarize(records, HISTORY, PRICES)["unpriced"] == []


def test_a_model_s_own_price_wins_over_its_family() -> None:
    own = {"input": 10.0, "output": 0.0, "cache_write": 0.0, "cache_read": 0.0}
    records = call_and_result("t", CR, 1100, "claude-sonnet-5-5", 1_000_000, 0)
    usage = summarize(records, HISTORY, {**PRICES, "claude-sonnet-5-5": own})
    assert (usage["total"]["cost_usd"], usage["unpriced"]) == (10.0, [])


def test_a_budget_counts_every_model_once_one_is_priced_by_hand(tmp_path: Path) -> None:
    """The case of issue 21: the project prices opus only; sonnet's tokens still count toward max_cost."""
    opus = {"input": 4.0, "output": 20.0, "cache_write": 5.0, "cache_read": 0.4}
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "fixloop.json").write_text(
        json.dumps({"prices": {"opus": opus}, "max_cost": 5.0})
    )
    config = load_config(tmp_path).config
    records = call_and_result("t1", CR, 1100, "claude-sonnet-5-5", 1_000_000, 0)
    usage = summarize(records, HISTORY, config.model_dump(mode="json")["prices"])
    assert (usage["total"]["cost_usd"], usage["unpriced"]) == (3.0, [])
    assert over_budget(usage, None, config.max_cost) == (
        "$3.0000 spent, a round costs about $3.0000, the budget is $5.0000"
    )
