"""Tokens per agent, round and step from the hook ledger, an estimated cost, and the budget rule."""

from __future__ import annotations

from typing import Any

from helpers_review import CR, A, fixer_doc, open_review

from fixloop.contracts.coordinator import DEFAULT_PRICES
from fixloop.runs.usage import family, over_budget, summarize

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
