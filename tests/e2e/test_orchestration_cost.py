"""What orchestrating ``/fixloop:review`` costs, end to end: the real pinned Claude Code CLI, the real plugin
and the scripted model (tests/e2e/fixloop_model.py).

The structural facts behind the cost figures of tests/benchmarks/bench_orchestration.py:
- the coordinator never reads a reviewer's answer: after a review round its requests hold one line per
  reviewer, while the engine keeps the whole answer;
- no coordinator turn goes to a bare engine step: each of its replies calls agents, or is its final message;
- the report's tokens per agent and per round are the ones Claude Code measured in each agent's transcript,
  i.e. exactly what the scripted API reported for every request of every agent instance (all the turns of a
  multi-turn agent, not only the last one its Agent tool result reports): 100% of the run's tokens;
- a budget too small for another round stops the loop with ``budget_exhausted``;
- each role runs on the model the project configured, as the real CLI sends it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop_model import COORDINATOR, Behaviour, Scenario, Turn, happy_path
from fixloop_session import (
    MakeRunner,
    Session,
    StartAPI,
    agent_id,
    command_session,
    reply_text,
    reply_tool_uses,
    reply_usage,
    run_engine_text,
)

from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT

JSON = dict[str, Any]

MARKER = "ORCH-COST-MARKER-5c1e"  # in every reviewer answer, and nowhere else
# Each role on a family other than the default (sonnet); Claude Code sends the family's current model.
MODELS = {"reviewers": "haiku", "verifier": "opus", "fixer": "opus"}
EXPECTED_FAMILY = {
    COORDINATOR: "haiku",  # agents/coordinator.md
    VERIFIER_AGENT: "opus",
    FIXER_AGENT: "opus",
    **dict.fromkeys(REVIEWER_AGENTS, "haiku"),
}
TOKEN_KEYS = ("input_tokens", "output_tokens")


def marked(behaviour: Behaviour) -> Behaviour:
    """``behaviour`` whose answers also carry MARKER among their positive observations."""

    def behave(turn: Turn) -> Any:
        answer = behaviour(turn)
        if not isinstance(answer, Mapping):
            return answer
        note = f"{MARKER} {turn.agent} round {turn.round}"
        return {**answer, "positive_observations": [note]}

    return behave


def marked_happy_path() -> Scenario:
    """The happy path (two fixes in round 1, a clean round 2), every reviewer's answer marked."""
    scenario = happy_path()
    agents = {name: scenario.behaviour(name) for name in REVIEWER_AGENTS}
    return Scenario(
        agents={
            **scenario.agents,
            **{name: marked(behaviour) for name, behaviour in agents.items() if behaviour is not None},
        }
    )


def summed(records: list[JSON]) -> JSON:
    """The usage the scripted API reported for ``records``, summed, with their count as ``calls``."""
    total = dict.fromkeys(TOKEN_KEYS, 0) | {"calls": len(records)}
    for record in records:
        usage = reply_usage(record)
        for key in TOKEN_KEYS:
            total[key] += usage[key]
    return total


def picked(item: Mapping[str, Any]) -> JSON:
    return {key: item[key] for key in (*TOKEN_KEYS, "calls")}


def calls_by_round(session: Session) -> dict[str, list[list[JSON]]]:
    """The requests of each agent call, by the review round of the dispatch it answered."""
    found: dict[str, list[list[JSON]]] = {}
    seen: dict[str, int] = {}
    for step, agents in zip(session.run.state["flow"]["history"], session.dispatched(), strict=True):
        assert step["agents"] == agents
        for name in agents:
            instance = session.instances(name)[seen.get(name, 0)]
            seen[name] = seen.get(name, 0) + 1
            found.setdefault(str(step["round"]), []).append(instance)
    return found


# ------------------------------------------------------------------------------------------------
# 1. The happy path, per-role models: what the coordinator reads, its turns, the usage in the report
# ------------------------------------------------------------------------------------------------


def test_the_coordinator_relays_steps_on_one_line_per_agent_and_every_token_is_accounted_for(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    session = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        marked_happy_path(),
        config={"models": MODELS, "max_tokens": 10_000_000},  # a budget large enough changes nothing
    )
    run, report = session.run, session.report
    assert report["status"] == "success"
    assert report["summary"]["termination_reason"] == "no_fixable_issues"
    coordinator = session.requests_of(COORDINATOR)
    assert session.dispatched() == [
        list(REVIEWER_AGENTS),
        [VERIFIER_AGENT],
        [FIXER_AGENT],
        list(REVIEWER_AGENTS),
    ]

    # The reviewers' answers went out with the marker, and the engine kept them whole...
    for name in REVIEWER_AGENTS:
        answers = [reply_text(group[-1]) for group in session.instances(name)]
        assert len(answers) == 2 and all(MARKER in answer for answer in answers), name
    for number in (1, 2):
        kept = run.round(number)["positive_observations"]
        assert sorted(kept) == sorted(f"{MARKER} {name} round {number}" for name in REVIEWER_AGENTS)
    # ... but no coordinator request holds any of them: after each review round the coordinator read one line
    # per reviewer.
    assert all(MARKER not in json.dumps(r["body"], ensure_ascii=False) for r in coordinator)
    reviewing = [i for i, agents in enumerate(session.dispatched()) if agents == list(REVIEWER_AGENTS)]
    assert reviewing == [0, 3]
    for index in reviewing:
        after = json.dumps(coordinator[index + 1]["body"], ensure_ascii=False)
        for name in REVIEWER_AGENTS:
            issues = 1 if index == 0 and name in ("silent-failure-hunter", "comment-analyzer") else 0
            line = f"{name}: recorded, {issues} issue{'' if issues == 1 else 's'} (run {run.run_id})"
            assert line in after, line

    # No coordinator turn on a bare engine step: each reply but the last is Agent calls only (the engine's
    # dispatch), the last is the final message. Turns: one per dispatch plus the end, within the goal of at
    # most 3 per round plus 2 per run.
    *turns, final = coordinator
    assert len(turns) == len(run.state["flow"]["history"]) == 4
    for record in turns:
        uses = reply_tool_uses(record)
        assert reply_text(record) == "" and uses
        assert {u["name"] for u in uses} == {"Agent"}
    assert reply_tool_uses(final) == [] and reply_text(final) == session.result.result_text
    assert len(coordinator) <= 3 * report["summary"]["total_iterations"] + 2
    # The engine steps ran all the same, inside the hooks: phases, verification, the report, the run's end.
    types = [e["type"] for e in run.events]
    for kind in ("PHASE_START", "PHASE_END", "REVIEW_VERIFICATION_END", "REVIEW_COMPLETE", "SESSION_END"):
        assert kind in types, kind
    assert run.state["status"] == "success" and run.state["ended_at_ms"] is not None

    # Each role ran on its configured model: the model field of every request of each agent.
    families: dict[str, set[str]] = {}
    for record in session.requests:
        families.setdefault(record["rule"], set()).add(str(record["body"]["model"]).split("-")[1])
    assert families == {name: {family} for name, family in EXPECTED_FAMILY.items()}
    # The coordinator passed no model: the hooks set the role's model on each call.
    assert all("model" not in u["input"] for uses in session.dispatches() for u in uses)

    # Usage: every agent instance's tokens were read from its transcript at its SubagentStop (one `usage`
    # ledger line per stop, keyed by Claude Code's agent id, read whole), and they are exactly the scripted
    # API's figures for all the requests of that instance: the fixer's Read, Edit, Edit and answer, not only
    # the final turn its Agent tool result reports.
    usage = report["usage"]
    assert usage["incomplete"] == []
    lines = [entry for entry in run.ledger if entry.get("kind") == "usage"]
    assert all(entry["complete"] is True for entry in lines)
    last_line = {entry["agent_id"]: entry for entry in lines}
    # The subagents' requests carry their agent id; the coordinator's (the command's own agent) carry none.
    assert all((agent_id(r) is None) == (r["rule"] == COORDINATOR) for r in session.requests)
    (coordinator_id,) = [key for key, entry in last_line.items() if entry["agent"] == COORDINATOR]
    served: dict[str, list[JSON]] = {}
    for record in session.requests:
        served.setdefault(agent_id(record) or coordinator_id, []).append(record)
    assert sorted(last_line) == sorted(served)
    for instance, records in served.items():
        entry = last_line[instance]
        assert entry["agent"] == records[0]["rule"], instance
        assert {key: entry["usage"][key] for key in TOKEN_KEYS} == {
            key: summed(records)[key] for key in TOKEN_KEYS
        }, entry
        assert entry["responses"] == len(records), entry
    fixer = session.instances(FIXER_AGENT)
    assert [len(group) for group in fixer] == [4]  # Read, Edit, Edit, the answer: a multi-turn agent
    # Per agent: the sum over its instances (one call each; the coordinator's one transcript is one line).
    expected = {
        name: summed([r for g in session.instances(name) for r in g])
        | {"calls": len(session.instances(name))}
        for name in EXPECTED_FAMILY
    }
    expected[COORDINATOR] = summed(coordinator) | {"calls": 1}
    assert {name: picked(item) for name, item in usage["by_agent"].items()} == expected
    # In all: 100% of what the scripted API served in the session.
    assert {key: usage["total"][key] for key in TOKEN_KEYS} == {
        key: summed(session.requests)[key] for key in TOKEN_KEYS
    }
    # The model each call ran on, as Claude Code reported it, went to the ledger (and prices the call).
    for entry in run.ledger:
        if entry.get("kind") == "result":
            assert EXPECTED_FAMILY[entry["agent"]] in str(entry["model"]), entry
    # Per round: round 1 is its reviewers, the verifier and the fixer; round 2 its reviewers.
    by_round = {
        number: summed([r for call in calls for r in call]) | {"calls": len(calls)}
        for number, calls in calls_by_round(session).items()
    }
    assert sorted(by_round) == ["1", "2"]
    assert {number: picked(item) for number, item in usage["by_round"].items()} == by_round
    assert usage["total"]["total_tokens"] == sum(item["total_tokens"] for item in usage["by_agent"].values())
    assert usage["total"]["cost_usd"] > 0

    # The markdown report and the log summary show the same figures.
    code, markdown = run_engine_text(
        session.project,
        "review",
        "report",
        run.run_id,
        "--format",
        "markdown",
        plugin_data=session.plugin_data,
    )
    assert code == 0, markdown
    for name, item in usage["by_agent"].items():
        row = f"| {name} | {item['calls']} | {item['input_tokens']} | {item['output_tokens']} |"
        assert row in markdown, row
    code, summary = run_engine_text(
        session.project, "log", "summary", run.run_id, plugin_data=session.plugin_data
    )
    assert code == 0, summary
    assert str(usage["total"]["total_tokens"]) in summary, summary


# ------------------------------------------------------------------------------------------------
# 2. A cost budget too small for a second round
# ------------------------------------------------------------------------------------------------


def test_a_too_small_cost_budget_stops_the_loop_with_budget_exhausted(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    session = command_session(
        start_api, make_runner, shared_plugin_data, happy_path(), config={"max_cost": 0.0001}
    )
    run, report = session.run, session.report
    # Round 1 always runs (nothing is spent yet); a second one would pass the budget, so none started.
    assert session.dispatched() == [list(REVIEWER_AGENTS), [VERIFIER_AGENT], [FIXER_AGENT]]
    assert report["status"] == "partial"
    assert report["summary"]["termination_reason"] == "budget_exhausted"
    assert run.state["status"] == "partial"
    (warning,) = run.of_type("WARNING", code="BUDGET_EXHAUSTED")
    spent = report["usage"]["by_round"]["1"]["cost_usd"]
    assert warning["message"].startswith(f"No round 2: ${spent:.4f} spent")
    assert warning["message"].endswith("the budget is $0.0001.")
    assert "budget_exhausted" in (session.result.result_text or "")
    # The coordinator ended right after the fixer's line: the check cost it no turn.
    coordinator = session.requests_of(COORDINATOR)
    assert len(coordinator) == 4 and reply_tool_uses(coordinator[-1]) == []
    assert report["files_modified"] == ["inventory/stock.py"]
