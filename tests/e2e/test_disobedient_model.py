"""A coordinator that does not obey, end to end: the engine, not the model, decides how a run ends.

Each scenario runs ``/fixloop:review`` in the real CLI with a scripted model that deviates the way real
models do: it stops early with its own summary, launches agents in the background, leaves a reviewer out,
calls one twice, claims a fix it never made; a reviewer never answers valid JSON; two findings differ only
in the name they are about. Each ends with the run's true status, the engine's own final message as the
command's result, and every finding in the report.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bugfix_model import CASES, BugCase, bugfix_session
from fixloop_model import (
    COORDINATOR,
    GARBAGE,
    NextBlock,
    Scenario,
    happy_path,
    issue,
    obey,
    reviewer,
)
from fixloop_session import MakeRunner, Session, StartAPI, command_session, reply_tool_uses, run_engine_text
from sample_projects import missing_requirements
from scripted_api import Reply, Request

from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT

JSON = dict[str, Any]
SUMMARY = "Review complete. I checked everything and no further action is needed."


def engine_final(session: Session) -> str:
    """The final message the engine gives for the session's ended run (what the user must read)."""
    code, text = run_engine_text(
        session.project, "next", session.run.run_id, "--text", plugin_data=session.plugin_data
    )
    assert code == 0, text
    final = str(session.run.state.get("final_message") or "")
    assert final and final in text
    return final


def check_true_end(session: Session, status: str) -> None:
    """The run ended with `status`; the user read the engine's final message; no finding is lost."""
    state = session.run.state
    assert state["status"] == status and state["ended_at_ms"] is not None and state["open_phases"] == {}
    assert session.result.result_text == engine_final(session)
    (end,) = session.run.of_type("SESSION_END")
    assert end["status"] == status
    reported = {i["id"] for key in ("remaining_issues", "fixed_issues") for i in session.report[key]}
    recorded = {i["id"] for rnd in state["review"]["rounds"] for i in rnd.get("issues") or []}
    assert recorded <= reported


def wants(block: NextBlock, agent: str) -> bool:
    return any(call["subagent_type"] == f"fixloop:{agent}" for call in block.calls)


def warnings(session: Session, code: str) -> list[JSON]:
    return session.run.of_type("WARNING", code=code)


# ------------------------------------------------------------------------------------------------
# 1. The coordinator stops early, with its own summary
# ------------------------------------------------------------------------------------------------


def test_a_coordinator_that_stops_early_once_is_sent_back_and_the_run_completes(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    quits: list[str] = []

    def deviate(request: Request, block: NextBlock) -> Reply | None:
        if wants(block, VERIFIER_AGENT) and not quits:
            quits.append(block.text)
            return Reply.text(SUMMARY)
        return None

    scenario = happy_path()
    scenario.deviate = deviate
    session = command_session(start_api, make_runner, shared_plugin_data, scenario)
    check_true_end(session, "success")
    assert session.report["summary"]["fixed_issues"] == 2
    # Sent back once, with the step it left undone; then it carried out the rest.
    assert session.dispatched() == [
        list(REVIEWER_AGENTS),
        [VERIFIER_AGENT],
        [FIXER_AGENT],
        list(REVIEWER_AGENTS),
    ]
    (warning,) = warnings(session, "COORDINATOR_STOPPED_EARLY")
    assert warning["message"].endswith("sent back to it (1 of 2).")
    assert len(session.requests_of(COORDINATOR)) == 6


def test_a_coordinator_that_keeps_stopping_has_its_run_ended_by_the_engine(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    def deviate(request: Request, block: NextBlock) -> Reply | None:
        return Reply.text(SUMMARY) if wants(block, VERIFIER_AGENT) else None

    scenario = happy_path()
    scenario.deviate = deviate
    session = command_session(start_api, make_runner, shared_plugin_data, scenario)
    # Failed, not success: the findings were never verified nor fixed, and the user is told so.
    check_true_end(session, "failed")
    state = session.run.state
    assert state["flow"]["outcome"]["reason"] == "COORDINATOR_STOPPED_EARLY"
    final = str(session.result.result_text)
    assert final.startswith(f"fixloop review {session.run.run_id}: failed (COORDINATOR_STOPPED_EARLY)")
    assert "fixloop:review-verifier never called" in final
    assert "Review: 1 round(s), 2 issue(s) found, 0 fixed, 2 remaining." in final
    assert f"review report {session.run.run_id} --format markdown" in final
    assert len(session.report["remaining_issues"]) == 2
    ends = ["sent back to it (1 of 2).", "sent back to it (2 of 2).", "the engine ends the run."]
    stops = warnings(session, "COORDINATOR_STOPPED_EARLY")
    assert len(stops) == 3 and all(w["message"].endswith(e) for w, e in zip(stops, ends, strict=True))
    assert session.dispatched() == [list(REVIEWER_AGENTS)]


# ------------------------------------------------------------------------------------------------
# 2. Agents launched in the background
# ------------------------------------------------------------------------------------------------


def test_background_launches_run_in_the_foreground_and_the_run_completes(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    def deviate(request: Request, block: NextBlock) -> Reply | None:
        return obey(block, background=True) if block.calls else None

    scenario = happy_path()
    scenario.deviate = deviate
    session = command_session(start_api, make_runner, shared_plugin_data, scenario)
    check_true_end(session, "success")
    assert session.report["summary"]["fixed_issues"] == 2
    asked = [u["input"]["run_in_background"] for uses in session.dispatches() for u in uses]
    assert asked == [True] * 14
    calls = [line for line in session.run.ledger if line["kind"] == "call" and line["agent"] != COORDINATOR]
    assert [line["background"] for line in calls] == [False] * 14
    assert [line for line in session.run.ledger if line["kind"] == "launch"] == []


# ------------------------------------------------------------------------------------------------
# 3. One reviewer left out
# ------------------------------------------------------------------------------------------------

LEFT_OUT = "type-design-analyzer"


def leave_out(agent: str) -> Callable[[Request, NextBlock], Reply | None]:
    """A coordinator that never calls `agent`, and stops when the block names it alone."""

    def deviate(request: Request, block: NextBlock) -> Reply | None:
        calls = [c for c in block.calls if c["subagent_type"] != f"fixloop:{agent}"]
        if len(calls) == len(block.calls):
            return None
        if not calls:
            return Reply.text("All the reviews are in.")
        return obey(NextBlock(block.text, calls=tuple(calls)))

    return deviate


def test_a_reviewer_left_out_is_handed_out_again_then_the_run_goes_on_and_names_it(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    scenario = happy_path()
    scenario.deviate = leave_out(LEFT_OUT)
    session = command_session(start_api, make_runner, shared_plugin_data, scenario)
    # The fixes were made; a reviewer's part is missing, so the run is partial, never success.
    check_true_end(session, "partial")
    assert session.report["summary"]["fixed_issues"] == 2
    history = session.run.state["flow"]["history"]
    five = [a for a in REVIEWER_AGENTS if a != LEFT_OUT]
    assert [step["agents"] for step in history] == [
        list(REVIEWER_AGENTS),
        [LEFT_OUT],
        [LEFT_OUT],
        [LEFT_OUT],
        [VERIFIER_AGENT],
        [FIXER_AGENT],
        list(REVIEWER_AGENTS),
        [LEFT_OUT],
        [LEFT_OUT],
        [LEFT_OUT],
    ]
    assert session.dispatched() == [five, [VERIFIER_AGENT], [FIXER_AGENT], five]
    not_called = warnings(session, "AGENTS_NOT_CALLED")
    assert [w["agents"] for w in not_called] == [[LEFT_OUT], [LEFT_OUT]]
    final = str(session.result.result_text)
    assert f"Missing: {LEFT_OUT}, never called (review round 1, step 1)." in final
    for rnd in session.run.state["review"]["rounds"]:
        failed = [(r["agent"], r["error"]["code"]) for r in rnd["agents_results"] if r["status"] == "failed"]
        assert failed == [(LEFT_OUT, "NULL_RESPONSE")]


# ------------------------------------------------------------------------------------------------
# 4. A fix claimed and never made
# ------------------------------------------------------------------------------------------------


def claims_fixed(turn: Any) -> JSON:
    results = [
        {"issue_id": item["id"], "status": "succeeded", "files": [item["file"]]} for item in turn.issues
    ]
    files = sorted({item["file"] for item in turn.issues})
    return {"status": "success", "agent": FIXER_AGENT, "results": results, "files_modified": files}


def test_a_fix_claimed_without_an_edit_counts_as_failed_and_is_not_sent_again(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    scenario = Scenario(
        agents={
            "silent-failure-hunter": reviewer({1: [issue("swallowed-error")], 2: [issue("swallowed-error")]}),
            FIXER_AGENT: claims_fixed,
        }
    )
    session = command_session(start_api, make_runner, shared_plugin_data, scenario)
    check_true_end(session, "partial")
    rounds = session.run.state["review"]["rounds"]
    assert rounds[0]["fix"]["result"] == {"attempted": 1, "succeeded": 0, "failed": 1}
    assert rounds[0]["fix"]["results"][0]["unverified"] is True
    assert rounds[1]["fixable"] == []  # the same finding is not handed to the fixer again
    assert session.dispatched().count([FIXER_AGENT]) == 1
    (warning,) = warnings(session, "FIX_UNVERIFIED")
    assert warning["issue_ids"] == ["FL-001"]
    ends = session.run.of_type("REVIEW_FIX_ITERATION", direction="end")
    assert [(e["attempted"], e["succeeded"], e["failed"]) for e in ends] == [(1, 0, 1)]
    assert session.report["summary"]["fixed_issues"] == 0
    final = str(session.result.result_text)
    assert "Fix claims not verified in round 1: FL-001" in final


# ------------------------------------------------------------------------------------------------
# 5. A reviewer called twice in one round
# ------------------------------------------------------------------------------------------------


def test_a_reviewer_called_twice_is_refused_once_and_counted_once(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    def deviate(request: Request, block: NextBlock) -> Reply | None:
        if len(block.calls) == len(REVIEWER_AGENTS):
            return obey(NextBlock(block.text, calls=(*block.calls, block.calls[0])))
        return None

    scenario = happy_path()
    scenario.deviate = deviate
    scenario.tolerated_errors = ("was already called in step",)
    session = command_session(start_api, make_runner, shared_plugin_data, scenario)
    check_true_end(session, "success")
    run = session.run
    assert len(run.of_type("REVIEW_PARALLEL_START")) == 2
    for end in run.of_type("REVIEW_PARALLEL_END"):
        assert sorted(r["agent"] for r in end["results"]) == sorted(REVIEWER_AGENTS)
        assert {r["status"] for r in end["results"]} == {"success"}
    refused = warnings(session, "AGENT_CALL_REFUSED")
    assert [w["agent"] for w in refused] == ["code-reviewer", "code-reviewer"]
    for rnd in run.state["review"]["rounds"]:
        assert rnd["records"]["code-reviewer"]["attempts"] == 1
    calls = [e["agent"] for e in run.of_type("AGENT_CALL")]
    assert calls.count("code-reviewer") == 2
    assert len(session.instances("code-reviewer")) == 2


# ------------------------------------------------------------------------------------------------
# 6. A reviewer that never answers valid JSON
# ------------------------------------------------------------------------------------------------


def test_a_reviewer_without_a_valid_answer_is_named_in_the_final_message(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    scenario = Scenario(
        agents={
            "test-analyzer": reviewer(invalid=[GARBAGE] * 3),
            "code-reviewer": reviewer({1: [issue("swallowed-error", auto_fixable=False)]}),
        }
    )
    session = command_session(start_api, make_runner, shared_plugin_data, scenario)
    check_true_end(session, "partial")
    final = str(session.result.result_text)
    assert "Missing review: test-analyzer failed in round 1" in final
    assert len(session.report["remaining_issues"]) == 1


# ------------------------------------------------------------------------------------------------
# 7. Two findings that differ in the name they are about
# ------------------------------------------------------------------------------------------------


def test_findings_about_different_names_stay_distinct(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    found = [
        issue(
            file="inventory/stock.py",
            line=1,
            category="validation",
            auto_fixable=False,
            description="`user_id` is never validated before use",
            suggestion="validate it",
        ),
        issue(
            file="inventory/stock.py",
            line=3,
            category="validation",
            auto_fixable=False,
            description="`email` is never validated before use",
            suggestion="validate it",
        ),
    ]
    scenario = Scenario(agents={"code-reviewer": reviewer({1: found})})
    session = command_session(start_api, make_runner, shared_plugin_data, scenario)
    check_true_end(session, "partial")
    remaining = sorted((i["line"], i["description"]) for i in session.report["remaining_issues"])
    assert remaining == [(1, found[0]["description"]), (3, found[1]["description"])]
    final = str(session.result.result_text)
    assert "`user_id` is never validated" in final and "`email` is never validated" in final
    assert [reply_tool_uses(r) for r in session.requests_of(COORDINATOR)][-1] == []


# ------------------------------------------------------------------------------------------------
# The same in another workflow: fixing a failing backend test
# ------------------------------------------------------------------------------------------------


def test_bugfix_coordinator_that_stops_early_once_is_sent_back_and_the_fix_lands(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    quits: list[str] = []

    def deviate(request: Request, block: NextBlock) -> Reply | None:
        if wants(block, "fix-designer") and not quits:
            quits.append(block.text)
            return Reply.text("The root cause is clear; the fix is simple, so I am done here.")
        return None

    session = bugfix_session(start_api, make_runner, shared_plugin_data, backend_case(), deviate=deviate)
    run = session.run
    assert run.state["status"] == "success" and run.state["open_phases"] == {}
    assert session.dispatched() == [
        ["failure-analyst"],
        ["root-cause-analyst"],
        ["fix-designer"],
        ["implementer"],
        list(REVIEWER_AGENTS),
    ]
    (warning,) = run.of_type("WARNING", code="COORDINATOR_STOPPED_EARLY")
    assert "(fix-designer" in warning["message"] or "design" in warning["message"]
    assert session.result.result_text == run.state["final_message"]


def test_bugfix_review_phase_goes_on_without_a_reviewer_left_out_and_names_it(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    session = bugfix_session(
        start_api, make_runner, shared_plugin_data, backend_case(), deviate=leave_out(LEFT_OUT)
    )
    run = session.run
    # The bug is fixed, but one reviewer's part of the review is missing: partial, never success.
    assert run.state["status"] == "partial" and run.state["open_phases"] == {}
    five = [a for a in REVIEWER_AGENTS if a != LEFT_OUT]
    assert session.dispatched()[-1] == five
    assert [e["agents"] for e in run.of_type("WARNING", code="AGENTS_NOT_CALLED")] == [[LEFT_OUT]]
    final = str(session.result.result_text)
    assert final == run.state["final_message"]
    assert f"Missing: {LEFT_OUT}, never called (review round 1," in final


def backend_case() -> BugCase:
    missing = missing_requirements("backend")
    assert missing == [], missing
    return CASES["backend"]
