"""``/fixloop:review`` end to end: the real pinned Claude Code CLI, the real plugin (commands, agents,
hooks, engine) and a scripted model (tests/e2e/fixloop_model.py) that follows the agents' instructions.

Each scenario runs one ``claude -p /fixloop:review`` in a throwaway copy of the sample project and checks
what every layer left behind: the request log (who asked what, when), the stream's hook records, the run
state, the JSONL and text logs, and the report the test asks the engine for itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from claude_runner import ClaudeRunner, git
from fixloop_model import (
    AGENT_FILES,
    ALWAYS,
    CHANGED_FILES,
    COMMENT_NEW,
    COORDINATOR,
    EXCEPT_OLD,
    FIXER_AGENT,
    GARBAGE,
    MAIN,
    MARKERS,
    REVIEWER_AGENTS,
    REVIEWER_DELAY,
    VERIFIER_AGENT,
    Edit,
    FixerPlan,
    FixloopModel,
    PluginDrift,
    ReviewerPlan,
    RunRecord,
    ScenarioPlan,
    Session,
    agent_markers,
    duration_mismatches,
    happy_path_plan,
    identify,
    issue,
    iter_user_texts,
    load_agents,
    render_text,
    reply_text,
    reply_tool_uses,
    review_session,
)
from scripted_api import Request, ScriptedAPI

StartAPI = Callable[..., ScriptedAPI]
MakeRunner = Callable[..., ClaudeRunner]
JSON = dict[str, Any]

CHANGED = CHANGED_FILES
TOLERANCE_MS = 250


# ------------------------------------------------------------------------------------------------
# What every scenario checks
# ------------------------------------------------------------------------------------------------


def check_session(session: Session, *, run_status: str) -> None:
    """The layers agree with each other, whatever the scenario."""
    run, report = session.run, session.report
    # The main thread ran the command: coordinator first, then the Markdown report, shown as it is.
    main = session.requests_of(MAIN)
    assert [u["input"]["subagent_type"] for u in reply_tool_uses(main[0])] == [f"fixloop:{COORDINATOR}"]
    assert reply_tool_uses(main[0])[0]["input"]["prompt"] == f"Run {run.run_id}. You own this run."
    assert reply_tool_uses(main[0])[0]["input"]["run_in_background"] is False
    assert f"review report {run.run_id} --format markdown" in reply_tool_uses(main[1])[0]["input"]["command"]
    assert len(main) == 3
    assert session.markdown in (session.result.result_text or "")
    # The coordinator's final message is the report as the engine prints it, verbatim.
    (coordinator,) = session.instances(COORDINATOR)
    assert json.loads(reply_text(coordinator[-1])) == report
    commands = session.engine_commands()
    assert commands[:3] == ["run show", "run phase", "review next"]
    assert commands[-3:] == ["review report", "run phase", "run end"]
    # AskUserQuestion is not offered in -p: the coordinator can only use the configured default.
    assert all(
        "AskUserQuestion" not in (tool.get("name") for tool in r["body"]["tools"]) for r in coordinator
    )
    # The run state: ended with the report's status, phase 0 closed with it.
    state = run.state
    assert state["status"] == run_status
    assert state["ended_at_ms"] is not None
    assert [(p["phase"], p["status"]) for p in state["phase_results"]] == [("phase_0", report["status"])]
    assert state["open_phases"] == {}
    # The JSONL log: a session framed by SESSION_START / SESSION_END, phase 0 inside it.
    types = [e["type"] for e in run.events]
    # ... and then the coordinator's own result: it ends the run, then returns.
    assert types[0] == "SESSION_START" and types[-2:] == ["SESSION_END", "AGENT_RESULT"]
    assert run.events[-1]["agent"] == COORDINATOR
    assert types.count("PHASE_START") == types.count("PHASE_END") == 1
    assert run.of_type("SESSION_END")[0]["status"] == run_status
    # The text log renders the same events, one line each, at the same times.
    lines = run.text_log.splitlines()
    assert len(lines) == len(run.events)
    assert lines == [render_text(event) for event in run.events]
    # Every agent call the hooks saw has its result, the coordinator's too, although it ends the run itself
    # (`run end`) before it returns.
    results = {e["tool_use_id"] for e in run.of_type("AGENT_RESULT")}
    unanswered = [e["agent"] for e in run.of_type("AGENT_CALL") if e["tool_use_id"] not in results]
    assert unanswered == []
    assert run.of_type("AGENT_RESULT")[-1]["agent"] == COORDINATOR
    # The logged durations match the wall clock.
    assert duration_mismatches(run.events, TOLERANCE_MS) == []
    # Every hook the stream reported finished cleanly (a SubagentStop block is a decision, not a failure).
    hooks = session.result.hook_responses()
    assert hooks, "the stream has no hook records"
    assert {(h.get("exit_code"), h.get("outcome")) for h in hooks} == {(0, "success")}, hooks


def reviewer_dispatches(session: Session) -> list[list[JSON]]:
    return [d for d in session.agent_dispatches() if len(d) > 1]


def check_review_dispatch(session: Session, rounds: int) -> None:
    """Each round's six reviewers were launched in ONE assistant message, in the foreground, with the
    engine's prompt for that round."""
    dispatches = reviewer_dispatches(session)
    assert len(dispatches) == rounds
    for number, uses in enumerate(dispatches, 1):
        assert [u["input"]["subagent_type"] for u in uses] == [f"fixloop:{name}" for name in REVIEWER_AGENTS]
        assert {u["input"]["run_in_background"] for u in uses} == {False}
        prompts = {u["input"]["prompt"] for u in uses}
        assert len(prompts) == 1
        assert f"fixloop run {session.run.run_id}: review round {number}." in prompts.pop()


def block_decisions(session: Session, agent: str) -> list[JSON]:
    """The SubagentStop hooks' block decisions (their stdout) about ``fixloop:agent``, in order. The
    stream does not name the agent of a SubagentStop hook; the reason does."""
    decisions = [
        json.loads(str(h["stdout"]))
        for h in session.result.hook_responses("SubagentStop")
        if str(h.get("stdout", "")).strip()
    ]
    return [d for d in decisions if f"output contract of fixloop:{agent}." in str(d.get("reason"))]


def subagent_starts(session: Session) -> list[str]:
    """The fixloop agents whose SubagentStart hook the stream reported (per round: reviewers sorted)."""
    names = [
        str(h.get("hook_name")).removeprefix("SubagentStart:fixloop:")
        for h in session.result.hook_starts("SubagentStart")
    ]
    ordered: list[str] = []
    batch: list[str] = []
    for name in names:  # each round's reviewers start in whatever order: sort within the batch
        if name in REVIEWER_AGENTS:
            batch.append(name)
            continue
        ordered += [*sorted(batch), name]
        batch = []
    return ordered + sorted(batch)


def ledger_stops(run: RunRecord, agent: str) -> list[JSON]:
    return [line for line in run.ledger if line.get("kind") == "stop" and line.get("agent") == agent]


def round_of_state(run: RunRecord, number: int) -> JSON:
    rounds = run.review["rounds"]
    found = [r for r in rounds if r["iteration"] == number]
    assert len(found) == 1, [r["iteration"] for r in rounds]
    return dict(found[0])


def ids_by_description(report_issues: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    return {str(item["description"]): str(item["id"]) for item in report_issues}


# ------------------------------------------------------------------------------------------------
# 1. The happy path
# ------------------------------------------------------------------------------------------------


def test_happy_path_fixes_two_issues_and_stops_clean(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    session = review_session(start_api, make_runner, shared_plugin_data, happy_path_plan())
    check_session(session, run_status="success")
    run, report = session.run, session.report

    # The loop: gate, review, verify findings, fix, verify, review again, stop.
    nexts = session.engine_answers("review next")
    assert [doc["action"] for doc in nexts] == [
        "verify",
        "review",
        "verify_findings",
        "fix",
        "verify",
        "review",
        "stop",
    ]
    assert nexts[-1]["termination_reason"] == "no_fixable_issues"
    assert session.engine_commands() == [
        "run show",
        "run phase",
        *["review next", "verify"],
        *["review next"] * 3,  # review, verify_findings, fix: each answered by Agent calls
        *["review next", "verify"],
        *["review next"] * 2,  # review, stop
        "review report",
        "run phase",
        "run end",
    ]
    check_review_dispatch(session, rounds=2)
    assert [len(d) for d in session.agent_dispatches()] == [6, 1, 1, 6]
    assert [d[0]["input"]["subagent_type"] for d in session.agent_dispatches() if len(d) == 1] == [
        f"fixloop:{VERIFIER_AGENT}",
        f"fixloop:{FIXER_AGENT}",
    ]

    # Concurrency: in each round every reviewer's first request reached the model before any reviewer's
    # final answer was sent (each final answer was held REVIEWER_DELAY seconds).
    for number in (1, 2):
        groups = [session.instances(name)[number - 1] for name in REVIEWER_AGENTS]
        first_arrivals = [float(g[0]["received_at"]) for g in groups]
        answers_sent = [float(g[-1]["received_at"]) + float(g[-1]["delay"]) for g in groups]
        assert all(float(g[-1]["delay"]) == REVIEWER_DELAY for g in groups)
        assert max(first_arrivals) < min(answers_sent), (number, first_arrivals, answers_sent)
    # ... and the CLI started all six (SubagentStart hooks) before the first one stopped (SubagentStop).
    names = [str(h.get("hook_name")) for h in session.result.hook_starts()]
    for number in (1, 2):
        starts = [
            i
            for i, name in enumerate(names)
            if name in {f"SubagentStart:fixloop:{n}" for n in REVIEWER_AGENTS}
        ]
        begin = starts[6 * (number - 1)]
        first_stop = names.index("SubagentStop", begin)
        assert sorted(names[begin:first_stop]) == sorted(
            f"SubagentStart:fixloop:{n}" for n in REVIEWER_AGENTS
        )

    # The fixer really edited the file, with Read, then Edit.
    (fixer,) = session.instances(FIXER_AGENT)
    assert [[u["name"] for u in reply_tool_uses(r)] for r in fixer] == [["Read"], ["Edit"], ["Edit"], []]
    stock = (session.project / "inventory" / "stock.py").read_text(encoding="utf-8")
    assert "except FileNotFoundError:" in stock and COMMENT_NEW in stock and "except Exception" not in stock
    assert (session.project / "inventory" / "report.py").read_text(encoding="utf-8") == (
        Path(__file__).parent / "sample_repo" / "inventory" / "report.py"
    ).read_text(encoding="utf-8")

    # The report names the fixed issues and the edited file.
    assert report["status"] == "success"
    assert report["summary"] == {
        "total_iterations": 2,
        "initial_issues": 2,
        "final_issues": 0,
        "fixed_issues": 2,
        "termination_reason": "no_fixable_issues",
    }
    fixed = {(i["file"], i["line"], i["agents"][0]) for i in report["fixed_issues"]}
    assert fixed == {
        ("inventory/stock.py", 14, "silent-failure-hunter"),
        ("inventory/stock.py", 27, "comment-analyzer"),
    }
    assert report["files_modified"] == ["inventory/stock.py"]
    assert report["remaining_issues"] == [] and report["introduced_issues"] == []
    assert {step["status"] for step in report["verification"].values()} == {"passed"}
    first, second = report["review_iterations"]
    assert first["fix_result"] == {"attempted": 2, "succeeded": 2, "failed": 0}
    assert sorted(second["resolved_issues"]) == sorted(i["id"] for i in report["fixed_issues"])
    assert "inventory/stock.py" in session.markdown

    # The state: both verifications passed, the fix's files measured against its snapshot.
    gate = run.review["gate"]
    assert gate["passed"] is True
    round_one = round_of_state(run, 1)
    assert round_one["verification_passed"] is True
    assert round_one["fix"]["files_changed"] == ["inventory/stock.py"]
    assert round_one["verifier"]["done"] is True and round_one["verifier"]["score"] == 85
    assert run.review["outcome"]["termination_reason"] == "no_fixable_issues"

    # The logs: every subagent call has its AGENT_CALL / AGENT_RESULT; durations agree with the clock.
    agents = [e["agent"] for e in run.of_type("AGENT_CALL")]
    assert sorted(agents) == sorted(
        [COORDINATOR, VERIFIER_AGENT, FIXER_AGENT, *REVIEWER_AGENTS, *REVIEWER_AGENTS]
    )
    assert {e["status"] for e in run.of_type("AGENT_RESULT")} == {"success"}
    parallel = run.of_type("REVIEW_PARALLEL_END")
    assert [g["iteration"] for g in parallel] == [1, 2]
    for group in parallel:
        assert REVIEWER_DELAY * 1000 <= group["duration_ms"] <= session.wall_ms
        assert {r["agent"] for r in group["results"]} == set(REVIEWER_AGENTS)
    complete = run.of_type("REVIEW_COMPLETE")[0]
    assert (complete["termination_reason"], complete["fixed_issues"]) == ("no_fixable_issues", 2)
    assert complete["total_duration_ms"] <= session.wall_ms
    assert run.of_type("SESSION_END")[0]["total_duration_ms"] <= session.wall_ms


# ------------------------------------------------------------------------------------------------
# 2. Invalid reviewer answers: the SubagentStop hook holds reviewers to their contract, boundedly
# ------------------------------------------------------------------------------------------------


def test_invalid_reviewer_json_is_blocked_then_recorded_or_failed(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    plan = ScenarioPlan(
        reviewers={
            "code-reviewer": ReviewerPlan(invalid_attempts=1),  # a schema violation, then a good answer
            "test-analyzer": ReviewerPlan(invalid_attempts=ALWAYS, invalid_answer=GARBAGE),
        }
    )
    session = review_session(start_api, make_runner, shared_plugin_data, plan)
    check_session(session, run_status="success")
    run, report = session.run, session.report
    check_review_dispatch(session, rounds=1)

    # code-reviewer: blocked once with the violation, then answered correctly.
    (reviewer,) = session.instances("code-reviewer")
    assert len(reviewer) == 2
    assert '"confidence": "very high"' in reply_text(reviewer[0])
    feedback = [t for t in iter_user_texts(reviewer[1]) if "Stop hook feedback" in t]
    assert len(feedback) == 1
    assert feedback[0].startswith("Stop hook feedback:\n")
    assert "$.issues[0].confidence" in feedback[0]
    assert "SCHEMA_VIOLATION" in feedback[0]
    assert json.loads(reply_text(reviewer[1]))["issues"] == []
    (decision,) = block_decisions(session, "code-reviewer")
    assert decision["decision"] == "block"
    assert decision["reason"] in feedback[0]
    assert "- $.issues[0].confidence: must be an integer from 0 to 100" in decision["reason"]
    stops = ledger_stops(run, "code-reviewer")
    assert [(s["attempt"], s["stop_hook_active"]) for s in stops] == [(1, False), (2, True)]

    # test-analyzer: blocked twice, then let go and recorded as a contract violation: 3 requests, no more.
    (analyzer,) = session.instances("test-analyzer")
    assert len(analyzer) == 3
    assert [reply_text(r) for r in analyzer] == [GARBAGE] * 3
    assert [sum("Stop hook feedback" in t for t in iter_user_texts(r)) for r in analyzer] == [0, 1, 2]
    decisions = block_decisions(session, "test-analyzer")
    assert [d["decision"] for d in decisions] == ["block", "block"]
    assert all("JSON_PARSE_ERROR" in d["reason"] for d in decisions)
    assert "(attempt 2 of 3)" in decisions[1]["reason"]
    stops = ledger_stops(run, "test-analyzer")
    assert [(s["attempt"], s["stop_hook_active"]) for s in stops] == [(1, False), (2, True), (3, True)]
    assert len({s["agent_id"] for s in stops}) == 1

    # The other reviewers answered once each.
    for name in REVIEWER_AGENTS:
        if name not in ("code-reviewer", "test-analyzer"):
            assert [len(g) for g in session.instances(name)] == [1]

    # The state: code-reviewer valid after 2 attempts; test-analyzer exhausted after 3 invalid ones.
    records = round_of_state(run, 1)["records"]
    code_reviewer = records["code-reviewer"]
    assert (code_reviewer["valid"], code_reviewer["attempts"], code_reviewer["invalid_attempts"]) == (
        True,
        2,
        1,
    )
    assert code_reviewer["provenance"] == "hook"
    analyzer_record = records["test-analyzer"]
    assert (analyzer_record["valid"], analyzer_record["attempts"], analyzer_record["exhausted"]) == (
        False,
        3,
        True,
    )
    assert analyzer_record["error"]["code"] == "JSON_PARSE_ERROR"

    # The logs: one CONTRACT_VIOLATION, for test-analyzer; its call failed, code-reviewer's succeeded.
    (violation,) = run.of_type("CONTRACT_VIOLATION")
    assert (violation["agent"], violation["attempts"], violation["iteration"]) == ("test-analyzer", 3, 1)
    assert violation["error_code"] == "JSON_PARSE_ERROR"
    (failure,) = run.of_type("AGENT_FAILURE")
    assert (failure["agent"], failure["error_code"]) == ("test-analyzer", "JSON_PARSE_ERROR")
    statuses = {e["agent"]: e["status"] for e in run.of_type("AGENT_RESULT")}
    assert statuses["test-analyzer"] == "failed"
    assert statuses["code-reviewer"] == "success"
    assert [e["agent"] for e in run.of_type("AGENT_RESULT", status="failed")] == ["test-analyzer"]
    (group,) = run.of_type("REVIEW_PARALLEL_END")
    assert {r["agent"]: r["status"] for r in group["results"]}["test-analyzer"] == "failed"
    assert "CONTRACT_VIOLATION" in run.text_log

    # The report counts it as failed; five of six is coverage enough, and nothing was found.
    (iteration,) = report["review_iterations"]
    outcome = {r["agent"]: r for r in iteration["agents_results"]}
    assert outcome["test-analyzer"]["status"] == "failed"
    assert outcome["test-analyzer"]["error"]["code"] == "JSON_PARSE_ERROR"
    assert outcome["code-reviewer"] == {"agent": "code-reviewer", "status": "success", "issues_count": 0}
    assert sum(r["status"] == "success" for r in iteration["agents_results"]) == 5
    assert report["summary"]["termination_reason"] == "no_fixable_issues"
    assert session.requests_of(FIXER_AGENT) == [] and session.requests_of(VERIFIER_AGENT) == []


# ------------------------------------------------------------------------------------------------
# 3. Too few reviewers: the loop fails without fixing anything
# ------------------------------------------------------------------------------------------------


def test_too_few_reviewers_fail_the_run_without_a_fix(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    plan = ScenarioPlan(
        reviewers={
            # Findings that would be fixed if coverage were enough.
            "silent-failure-hunter": ReviewerPlan(issues={1: [issue("swallowed-error")]}),
            "code-simplifier": ReviewerPlan(fail_rounds={1}),
            "type-design-analyzer": ReviewerPlan(fail_rounds={1}),
            "comment-analyzer": ReviewerPlan(invalid_attempts=ALWAYS, invalid_answer=GARBAGE),
        }
    )
    session = review_session(start_api, make_runner, shared_plugin_data, plan)
    check_session(session, run_status="failed")
    run, report = session.run, session.report
    check_review_dispatch(session, rounds=1)

    failed = ["code-simplifier", "comment-analyzer", "type-design-analyzer"]
    assert report["status"] == "failed"
    error = report["error"]
    assert error["code"] == "INSUFFICIENT_COVERAGE"
    assert error["message"] == "Only 3/6 review agents succeeded (at least 4 required)"
    assert sorted(item["agent"] for item in error["failed_agents"]) == failed
    codes = {item["agent"]: item["error"]["code"] for item in error["failed_agents"]}
    assert codes == {
        "code-simplifier": "TOOL_ERROR",
        "type-design-analyzer": "TOOL_ERROR",
        "comment-analyzer": "JSON_PARSE_ERROR",
    }
    assert run.review["outcome"]["status"] == "failed"
    assert run.review["outcome"]["error"]["code"] == "INSUFFICIENT_COVERAGE"
    assert run.state["error_count"] == 1

    # No fixer, no verifier: not in the request log, not in the coordinator's calls, not in the logs.
    assert session.requests_of(FIXER_AGENT) == [] and session.requests_of(VERIFIER_AGENT) == []
    assert [len(d) for d in session.agent_dispatches()] == [6]
    assert all(FIXER_AGENT not in json.dumps(reply_tool_uses(r)) for r in session.requests)
    assert {e["agent"] for e in run.of_type("AGENT_CALL")} == {COORDINATOR, *REVIEWER_AGENTS}
    assert session.engine_commands().count("verify") == 1  # only the gate ran
    assert len(run.of_type("REVIEW_VERIFICATION_END")) == 1

    # The logs: one AGENT_FAILURE per failed reviewer, then the coverage ERROR.
    assert sorted(e["agent"] for e in run.of_type("AGENT_FAILURE")) == failed
    (error_event,) = run.of_type("ERROR")
    assert error_event["code"] == "INSUFFICIENT_COVERAGE"
    # The three reviewers failed, and so did the coordinator, whose report is the failure.
    assert sorted(e["agent"] for e in run.of_type("AGENT_RESULT", status="failed")) == sorted(
        [*failed, COORDINATOR]
    )
    (violation,) = run.of_type("CONTRACT_VIOLATION")
    assert violation["agent"] == "comment-analyzer"
    assert [len(g) for g in session.instances("comment-analyzer")] == [3]
    assert [d["decision"] for d in block_decisions(session, "comment-analyzer")] == ["block", "block"]
    assert subagent_starts(session) == [COORDINATOR, *sorted(REVIEWER_AGENTS)]
    assert [len(g) for g in session.instances("code-simplifier")] == [1]

    # The coordinator ended on `failed` and handed back the failed report; the main thread showed the
    # error first, then the Markdown report.
    (coordinator,) = session.instances(COORDINATOR)
    assert json.loads(reply_text(coordinator[-1]))["error"]["code"] == "INSUFFICIENT_COVERAGE"
    shown = session.result.result_text or ""
    assert shown.startswith("fixloop failed: INSUFFICIENT_COVERAGE: Only 3/6 review agents succeeded")
    assert run.of_type("SESSION_END")[0]["status"] == "failed"


# ------------------------------------------------------------------------------------------------
# 4. Regressions: the fixes bring more fixable issues than they remove
# ------------------------------------------------------------------------------------------------

UNBOUND_DATA = "load_stock reads `data` after an OSError was swallowed: UnboundLocalError on a missing file"
SILENT_PASS = "load_stock swallows every OSError with `pass`: a broken stock file goes unnoticed"


def test_regressions_stop_the_loop_with_issues_increased(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    persisting = issue("misleading-comment")
    plan = ScenarioPlan(
        reviewers={
            "silent-failure-hunter": ReviewerPlan(
                issues={
                    1: [issue("swallowed-error")],
                    2: [
                        issue(
                            file="inventory/stock.py",
                            line=14,
                            category="silent-failure",
                            description=SILENT_PASS,
                            suggestion="let the OSError propagate",
                        )
                    ],
                }
            ),
            "comment-analyzer": ReviewerPlan(issues={1: [persisting], 2: [persisting]}),
            "code-reviewer": ReviewerPlan(
                issues={
                    2: [
                        issue(
                            file="inventory/stock.py",
                            line=16,
                            category="logic-error",
                            description=UNBOUND_DATA,
                            suggestion="return or raise in the except branch",
                            severity="critical",
                        )
                    ]
                }
            ),
        },
        # The fixer "fixes" the swallowed error by swallowing it differently, and skips the comment.
        fixer=FixerPlan(
            edits={1: [Edit("inventory/stock.py", EXCEPT_OLD, "    except OSError:\n        pass\n")]},
            skip=("KeyError",),
        ),
    )
    session = review_session(
        start_api, make_runner, shared_plugin_data, plan, config={"on_verification_failure": "manual"}
    )
    check_session(session, run_status="partial")
    run, report = session.run, session.report
    check_review_dispatch(session, rounds=2)

    assert report["status"] == "partial"
    assert report["summary"]["termination_reason"] == "issues_increased"
    first, second = report["review_iterations"]
    assert (first["fixable_issues"], second["fixable_issues"]) == (2, 3)
    by_description = ids_by_description(report["remaining_issues"])
    new_ids = sorted([by_description[UNBOUND_DATA], by_description[SILENT_PASS]])
    assert sorted(i["id"] for i in report["introduced_issues"]) == new_ids
    assert {i["description"] for i in report["introduced_issues"]} == {UNBOUND_DATA, SILENT_PASS}
    assert second["introduced_issues"] == new_ids
    persisting_id = by_description[persisting["description"]]
    assert second["persisting_issues"] == [persisting_id]
    assert len(second["resolved_issues"]) == 1
    assert persisting_id not in new_ids
    assert first["fix_result"] == {"attempted": 1, "succeeded": 1, "failed": 0}
    # The fixes were kept (manual): the file still has the fixer's change.
    assert report["files_modified"] == ["inventory/stock.py"]
    assert "    except OSError:\n        pass\n" in (session.project / "inventory/stock.py").read_text()

    # The engine asked (review_diverged); the coordinator could only take the default, logged as such.
    interactions = run.of_type("USER_INTERACTION")
    assert [e["context"] for e in interactions] == ["review_diverged", "review_diverged"]
    assert "from 2 to 3" in interactions[0]["question"]
    assert (interactions[1]["user_response"], interactions[1]["default"]) == ("manual", True)
    assert session.engine_commands().count("review choose") == 1
    (convergence,) = run.of_type("REVIEW_CONVERGENCE")
    assert (convergence["decision"], convergence["previous_count"], convergence["current_count"]) == (
        "diverged",
        2,
        3,
    )
    assert convergence["introduced_issues"] == new_ids
    assert run.review["interactions"][0]["choice"] == "manual"
    assert run.review["outcome"]["termination_reason"] == "issues_increased"
    # One fix only: the loop stopped before a second one.
    assert len(session.instances(FIXER_AGENT)) == 1
    assert subagent_starts(session).count(FIXER_AGENT) == 1
    assert [e["direction"] for e in run.of_type("REVIEW_FIX_ITERATION")] == ["start", "end"]


# ------------------------------------------------------------------------------------------------
# 5. Verification fails after a fix, non-interactively: the configured rollback restores the fix's files
# ------------------------------------------------------------------------------------------------

TOTAL_LOOP = (
    "    total = 0\n"
    "    for quantity in stock.values():\n"
    "        if quantity > 0:\n"
    "            total += quantity\n"
    "    return total\n"
)
USER_NOTE = "\nLocal note by the user, not committed yet.\n"


def test_failed_verification_rolls_back_exactly_the_fixers_files(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    before: dict[str, bytes] = {}

    def user_edits(project: Path) -> None:
        with (project / "README.md").open("a", encoding="utf-8") as handle:
            handle.write(USER_NOTE)
        for name in (*CHANGED, "README.md"):
            before[name] = (project / name).read_bytes()

    plan = ScenarioPlan(
        reviewers={
            "silent-failure-hunter": ReviewerPlan(issues={1: [issue("swallowed-error")]}),
            "code-simplifier": ReviewerPlan(issues={1: [issue("duplicated-total")]}),
        },
        fixer=FixerPlan(
            edits={
                1: [
                    Edit(
                        "inventory/stock.py", EXCEPT_OLD, "    except FileNotFoundError:\n        return {}\n"
                    ),
                    # A "simplification" that counts negative quantities: the sample's tests fail.
                    Edit("inventory/report.py", TOTAL_LOOP, "    return sum(stock.values())\n"),
                ]
            }
        ),
    )
    session = review_session(
        start_api,
        make_runner,
        shared_plugin_data,
        plan,
        config={"on_verification_failure": "rollback"},
        before=user_edits,
    )
    check_session(session, run_status="partial")
    run, report = session.run, session.report

    # One review, one verification of the findings, one fix; no contract trouble.
    assert sorted(subagent_starts(session)) == sorted(
        [COORDINATOR, *REVIEWER_AGENTS, VERIFIER_AGENT, FIXER_AGENT]
    )
    assert [h.get("stdout") for h in session.result.hook_responses("SubagentStop")] == [""] * 9
    # The fixer changed both files; verification then failed on the tests.
    (fixer,) = session.instances(FIXER_AGENT)
    assert [[u["name"] for u in reply_tool_uses(r)] for r in fixer] == [
        ["Read", "Read"],
        ["Edit"],
        ["Edit"],
        [],
    ]
    round_one = round_of_state(run, 1)
    assert round_one["fix"]["files_changed"] == ["inventory/report.py", "inventory/stock.py"]
    assert round_one["verification"]["tests"]["status"] == "failed"
    assert round_one["verification_passed"] is False
    verifications = run.of_type("REVIEW_VERIFICATION_END")
    assert [e["tests"] for e in verifications] == ["passed", "failed"]
    assert session.engine_commands().count("verify") == 2

    # Non-interactive: ask_user answered with the configured default, logged as a default.
    assert session.engine_commands().count("review choose") == 1
    interactions = run.of_type("USER_INTERACTION")
    assert [e["context"] for e in interactions] == ["review_verification_failed"] * 2
    assert (interactions[1]["user_response"], interactions[1]["default"]) == ("rollback", True)
    choice = run.review["interactions"][0]
    assert (choice["choice"], choice["default"]) == ("rollback", True)

    # The rollback restored exactly the fixer's files, byte for byte; the user's edit is untouched.
    assert round_one["rolled_back"] is True
    assert round_one["rollback_files"] == ["inventory/report.py", "inventory/stock.py"]
    after = {name: (session.project / name).read_bytes() for name in before}
    assert after == before
    assert after["README.md"].endswith(USER_NOTE.encode())
    status = git(session.project, "status", "--porcelain", "--untracked-files=all")
    assert sorted(line[3:] for line in status.splitlines()) == ["README.md", *CHANGED]
    (chosen,) = session.engine_answers("review choose")
    assert (chosen["choice"], chosen["default"]) == ("rollback", True)
    assert chosen["restored_files"] == ["inventory/report.py", "inventory/stock.py"]

    # The run stopped with verification_failed; nothing modified is left to report.
    assert report["status"] == "partial"
    assert report["summary"]["termination_reason"] == "verification_failed"
    assert report["files_modified"] == []
    assert report["verification"]["tests"]["status"] == "failed"
    assert len(report["review_iterations"]) == 1
    assert len(reviewer_dispatches(session)) == 1


def test_scripted_actor_markers_come_from_the_agent_files() -> None:
    """The model recognises each actor by its contract's "agent" field in that agent's own body."""
    for actor, marker in MARKERS.items():
        assert [name for name, agent in AGENT_FILES.items() if marker in agent.body] == [actor]
    assert set(MARKERS) == {COORDINATOR, FIXER_AGENT, VERIFIER_AGENT, *REVIEWER_AGENTS}


def test_marker_drift_is_loud(tmp_path: Path) -> None:
    """An agent file that loses its contract's "agent" field, or a marker shared by two agents, stops the
    module from loading instead of letting the scripted model mistake one actor for another."""
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "a.md").write_text('---\nname: alpha\n---\nAnswer {"status": "success", "agent": "alpha"}\n')
    (agents / "b.md").write_text("---\nname: beta\n---\nAnswer with JSON.\n")
    loaded = load_agents(tmp_path)
    assert agent_markers(loaded, ["alpha"]) == {"alpha": '"agent": "alpha"'}
    with pytest.raises(PluginDrift, match=r"b\.md no longer shows"):
        agent_markers(loaded, ["beta"])
    (agents / "b.md").write_text('---\nname: beta\n---\nLike {"agent": "alpha"} and {"agent": "beta"}.\n')
    with pytest.raises(PluginDrift, match=r"also appears in b\.md"):
        agent_markers(load_agents(tmp_path), ["alpha"])


def test_coordinator_dispatches_a_review_as_one_message_of_six_foreground_calls() -> None:
    """Without the CLI: a coordinator request whose last tool result is a `review next` review action."""
    engine = "/plugin/scripts/fixloop"
    body = AGENT_FILES[COORDINATOR].body.replace("${CLAUDE_PLUGIN_ROOT}", "/plugin")
    action = {
        "action": "review",
        "round": 1,
        "agents": [f"fixloop:{name}" for name in REVIEWER_AGENTS],
        "prompt": "fixloop run 1a2b3c4d: review round 1.",
    }
    request = Request(
        seq=0,
        method="POST",
        path="/v1/messages",
        headers={},
        body={
            "system": [{"type": "text", "text": "cc_is_subagent=true;"}, {"type": "text", "text": body}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Run 1a2b3c4d."}]},
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "Bash",
                            "input": {"command": f'"{engine}" review next 1a2b3c4d'},
                        }
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": json.dumps(action)}],
                },
            ],
        },
        received_at=0.0,
    )
    assert identify(request) == COORDINATOR
    model = FixloopModel()
    reply = model.coordinator(request)
    assert model.problems == []
    assert [block.name for block in reply.blocks] == ["Agent"] * 6
    assert [block.input["subagent_type"] for block in reply.blocks] == action["agents"]
    assert {block.input["run_in_background"] for block in reply.blocks} == {False}
    assert {block.input["prompt"] for block in reply.blocks} == {action["prompt"]}
