"""``/fixloop:review`` end to end: the real pinned Claude Code CLI, the real plugin (the forked coordinator,
the agents, the hooks, the engine) and a scripted model (tests/e2e/fixloop_model.py) that obeys the agent
files.

Each scenario runs one ``claude -p "/fixloop:review"`` in a throwaway copy of the sample project and checks
what every layer left behind: the request log (who asked what), the stream's hook records, the run state,
the JSONL and text logs, the hook ledger and the report the test asks the engine for itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from claude_runner import SAMPLE_REPO, git
from fixloop_model import (
    COMMENT_NEW,
    COORDINATOR,
    EXCEPT_NEW,
    EXCEPT_OLD,
    GARBAGE,
    STOP_FEEDBACK,
    Edit,
    Scenario,
    fixer,
    happy_path,
    issue,
    last_results,
    parse_next,
    reviewer,
    schema_violation,
)
from fixloop_session import (
    CHANGED_FILES,
    MakeRunner,
    Session,
    StartAPI,
    command_session,
    duration_mismatches,
    reply_text,
    reply_tool_uses,
    reply_usage,
    run_engine_text,
)

from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT
from fixloop.store.logtext import render_text

JSON = dict[str, Any]

HAND_BACK = re.compile(
    r"^([a-z-]+): (recorded(?:, (\d+) issues?)?|answer refused: [A-Z_]+) \(run ([0-9a-f]{8})\)$"
)


# ------------------------------------------------------------------------------------------------
# What every scenario checks
# ------------------------------------------------------------------------------------------------


def check_session(session: Session, *, run_status: str) -> None:
    """The layers agree with each other, and the coordinator only ever relayed the engine's steps."""
    run = session.run
    coordinator = session.requests_of(COORDINATOR)
    # No main-thread turn: the command ran as the forked coordinator.
    assert {r["rule"] for r in session.requests} <= {
        COORDINATOR,
        *REVIEWER_AGENTS,
        FIXER_AGENT,
        VERIFIER_AGENT,
    }
    # The coordinator can only call agents: it has no tool to run the engine or write a result itself.
    assert {tuple(t["name"] for t in r["body"]["tools"]) for r in coordinator} == {("Agent",)}
    # Every coordinator turn but the last is one message of Agent calls, in the foreground; the last is the
    # final message. No turn goes to a bare engine step.
    *calls, final = coordinator
    assert all(reply_text(r) == "" and reply_tool_uses(r) for r in calls)
    assert all(
        u["name"] == "Agent" and u["input"]["run_in_background"] is False
        for r in calls
        for u in reply_tool_uses(r)
    )
    assert reply_tool_uses(final) == []
    # ... exactly the engine's dispatches, in order.
    history = run.state["flow"]["history"]
    assert session.dispatched() == [step["agents"] for step in history]
    # The final message is the one the engine gives for the ended run, verbatim, and the command's result.
    code, text = run_engine_text(
        session.project, "next", run.run_id, "--text", plugin_data=session.plugin_data
    )
    ended = parse_next(text.strip())
    assert code == 0 and ended is not None and ended.final is not None, text
    assert reply_text(final) == ended.final == session.result.result_text
    # The coordinator saw one line per agent (plus the next step on the call that completed a step), never an
    # agent's own answer.
    answers = {reply_text(r) for r in session.requests if r["rule"] != COORDINATOR} - {""}
    for request in coordinator:
        shown = json.dumps(request["body"])
        assert [a for a in answers if json.dumps(a)[1:-1] in shown] == []
    for request in coordinator[1:]:
        for result, is_error in last_results(request["body"]):
            assert not is_error, result
            line, _, rest = result.partition("\n\n")
            match = HAND_BACK.match(line)
            assert match and match[4] == run.run_id, result
            assert rest == "" or rest.startswith("fixloop next"), result
        body = json.dumps(request["body"])
        for field in (
            '\\"positive_observations\\"',
            '\\"verification_result\\"',
            '\\"files_modified\\"',
            '\\"issues\\": [',
        ):
            assert field not in body
    # The run state: ended with this status, its one phase closed.
    state = run.state
    assert state["status"] == run_status
    assert state["ended_at_ms"] is not None and state["open_phases"] == {}
    # The JSONL log: a session framed by SESSION_START / SESSION_END; the text log renders the same events.
    types = [e["type"] for e in run.events]
    assert (types[0], types[-1]) == ("SESSION_START", "SESSION_END")
    assert run.of_type("SESSION_END")[0]["status"] == run_status
    assert run.text_log.splitlines() == [render_text(event) for event in run.events]
    # Every agent call the hooks saw has its result; the logged durations match the wall clock.
    results = {e["tool_use_id"] for e in run.of_type("AGENT_RESULT")}
    assert [e["agent"] for e in run.of_type("AGENT_CALL") if e["tool_use_id"] not in results] == []
    assert duration_mismatches(run.events) == []
    # Every hook the stream reported finished cleanly (a SubagentStop block is a decision, not a failure).
    hooks = session.result.hook_responses()
    assert hooks, "the stream has no hook records"
    assert {(h.get("exit_code"), h.get("outcome")) for h in hooks} == {(0, "success")}, hooks
    assert not run.of_type("WARNING", code="HOOK_FAILED")


def block_reasons(session: Session, agent: str) -> list[str]:
    """The SubagentStop hooks' block reasons about ``fixloop:agent``, in order."""
    reasons = [
        str(json.loads(str(h["stdout"]))["reason"])
        for h in session.result.hook_responses("SubagentStop")
        if str(h.get("stdout", "")).strip()
    ]
    return [r for r in reasons if f"output contract of fixloop:{agent}." in r]


def ledger_stops(session: Session, agent: str) -> list[JSON]:
    return [line for line in session.run.ledger if line.get("kind") == "stop" and line.get("agent") == agent]


def feedback_texts(record: JSON) -> list[str]:
    found = []
    for message in record["body"]["messages"]:
        content = message.get("content")
        blocks = (
            [content]
            if isinstance(content, str)
            else [b.get("text", "") for b in content if b.get("type") == "text"]
        )
        found += [text for text in blocks if message["role"] == "user" and STOP_FEEDBACK in text]
    return found


# ------------------------------------------------------------------------------------------------
# 1. The happy path, with per-role models
# ------------------------------------------------------------------------------------------------

MODELS = {"reviewers": "opus", "verifier": "haiku", "fixer": "sonnet"}


def test_happy_path_fixes_two_issues_and_stops_clean(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    session = command_session(
        start_api, make_runner, shared_plugin_data, happy_path(together=True), config={"models": MODELS}
    )
    check_session(session, run_status="success")
    run, report = session.run, session.report

    # The loop: review, verify the findings, fix, review again; the coordinator answered each in one turn.
    assert session.dispatched() == [
        list(REVIEWER_AGENTS),
        [VERIFIER_AGENT],
        [FIXER_AGENT],
        list(REVIEWER_AGENTS),
    ]
    assert len(session.requests_of(COORDINATOR)) == 5
    assert [step["label"] for step in run.state["flow"]["history"]] == [
        "review round 1",
        "verify the findings of round 1",
        "fix round 1",
        "review round 2",
    ]

    # Concurrency: in each round every reviewer's first request reached the model while the others were held
    # (each waited until all six were under way; had they run one by one, the first would have waited in
    # vain and said so in model.problems, which command_session asserts empty).
    assert {number: sorted(names) for number, names in session.model.arrived.items()} == {
        1: sorted(REVIEWER_AGENTS),
        2: sorted(REVIEWER_AGENTS),
    }

    # Each role ran on the model the project configured; the coordinator on its own (haiku).
    families: dict[str, set[str]] = {}
    for record in session.requests:
        families.setdefault(record["rule"], set()).add(str(record["body"]["model"]).split("-")[1])
    assert families == {
        COORDINATOR: {"haiku"},
        VERIFIER_AGENT: {"haiku"},
        FIXER_AGENT: {"sonnet"},
        **{name: {"opus"} for name in REVIEWER_AGENTS},
    }

    # Each agent got its task from the SubagentStart hook, not in its prompt; the prompt is one short line.
    prompts = {str(u["input"]["prompt"]) for uses in session.dispatches() for u in uses}
    assert all(len(p) < 250 and "Working directory" not in p for p in prompts)

    # The fixer really edited the file: Read, then two Edits, then its answer.
    (fixer_requests,) = session.instances(FIXER_AGENT)
    assert [[u["name"] for u in reply_tool_uses(r)] for r in fixer_requests] == [
        ["Read"],
        ["Edit"],
        ["Edit"],
        [],
    ]
    stock = (session.project / "inventory" / "stock.py").read_text(encoding="utf-8")
    assert "except FileNotFoundError:" in stock and COMMENT_NEW in stock and "except Exception" not in stock
    assert (session.project / "inventory" / "report.py").read_bytes() == (
        SAMPLE_REPO / "inventory" / "report.py"
    ).read_bytes()

    # The report names the fixed issues and the edited file.
    assert report["status"] == "success"
    assert report["summary"] == {
        "total_iterations": 2,
        "initial_issues": 2,
        "final_issues": 0,
        "fixed_issues": 2,
        "termination_reason": "no_fixable_issues",
    }
    fixed = {(i["file"], i["line"], tuple(i["agents"])) for i in report["fixed_issues"]}
    assert fixed == {
        ("inventory/stock.py", 14, ("silent-failure-hunter",)),
        ("inventory/stock.py", 27, ("comment-analyzer",)),
    }
    assert report["files_modified"] == ["inventory/stock.py"]
    assert report["remaining_issues"] == [] and report["introduced_issues"] == []
    assert {step["status"] for step in report["verification"].values()} == {"passed"}
    assert "review issues fixed: 2." in (session.result.result_text or "")

    # Per-agent usage in the report: the scripted API's own figures for every request of each agent's run
    # (read from the agent's transcript at SubagentStop, so a fixer's Read and Edit turns count too).
    expected: dict[str, JSON] = {}
    for name in (*REVIEWER_AGENTS, VERIFIER_AGENT, FIXER_AGENT):
        for instance in session.instances(name):
            total = expected.setdefault(name, {"input_tokens": 0, "output_tokens": 0, "calls": 0})
            for request in instance:
                usage = reply_usage(request)
                total["input_tokens"] += usage["input_tokens"]
                total["output_tokens"] += usage["output_tokens"]
            total["calls"] += 1
    # (The coordinator's own tokens come from its transcript, not from a PostToolUse payload.)
    by_agent = {name: item for name, item in report["usage"]["by_agent"].items() if name != COORDINATOR}
    assert {
        name: {k: item[k] for k in ("input_tokens", "output_tokens", "calls")}
        for name, item in by_agent.items()
    } == expected
    assert sum(item["calls"] for item in by_agent.values()) == 14

    # The logs: every subagent call has its AGENT_CALL / AGENT_RESULT, both review groups are logged.
    assert sorted(e["agent"] for e in run.of_type("AGENT_CALL")) == sorted(
        [VERIFIER_AGENT, FIXER_AGENT, *REVIEWER_AGENTS, *REVIEWER_AGENTS]
    )
    assert {e["status"] for e in run.of_type("AGENT_RESULT")} == {"success"}
    groups = run.of_type("REVIEW_PARALLEL_END")
    assert [g["iteration"] for g in groups] == [1, 2]
    assert all({r["agent"] for r in g["results"]} == set(REVIEWER_AGENTS) for g in groups)
    (complete,) = run.of_type("REVIEW_COMPLETE")
    assert (complete["termination_reason"], complete["fixed_issues"]) == ("no_fixable_issues", 2)


# ------------------------------------------------------------------------------------------------
# 2. Invalid reviewer answers: the SubagentStop hook holds reviewers to their contract, boundedly
# ------------------------------------------------------------------------------------------------


def test_invalid_reviewer_json_is_blocked_then_recorded_or_failed(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    scenario = Scenario(
        agents={
            "code-reviewer": reviewer(invalid=[schema_violation("code-reviewer")]),
            "test-analyzer": reviewer(invalid=[GARBAGE] * 3),
        }
    )
    session = command_session(start_api, make_runner, shared_plugin_data, scenario)
    # Nothing to fix, but a reviewer failed (its share of the code went unreviewed): partial.
    check_session(session, run_status="partial")
    run, report = session.run, session.report
    assert session.dispatched() == [list(REVIEWER_AGENTS)]

    # code-reviewer: blocked once with the violation, then answered correctly.
    (attempts,) = session.instances("code-reviewer")
    assert len(attempts) == 2
    assert '"confidence": "very high"' in reply_text(attempts[0])
    (feedback,) = feedback_texts(attempts[1])
    # Up to 2.1.330 the feedback starts "Stop hook feedback:\n"; later CLIs wrap it in a system reminder
    # with a preamble. Either way the words and the whole reason reach the agent.
    assert STOP_FEEDBACK in feedback
    (reason,) = block_reasons(session, "code-reviewer")
    assert reason in feedback
    assert "$.issues[0].confidence" in reason and "(attempt 1 of 3)" in reason
    assert json.loads(reply_text(attempts[1]))["issues"] == []
    stops = ledger_stops(session, "code-reviewer")
    assert [(s["attempt"], s["stop_hook_active"]) for s in stops] == [(1, False), (2, True)]

    # test-analyzer: blocked twice, then let go and recorded as a contract violation: 3 requests, no more.
    (attempts,) = session.instances("test-analyzer")
    assert [reply_text(r) for r in attempts] == [GARBAGE] * 3
    assert [len(feedback_texts(r)) for r in attempts] == [0, 1, 2]
    reasons = block_reasons(session, "test-analyzer")
    assert len(reasons) == 2 and all("JSON_PARSE_ERROR" in r for r in reasons)
    assert "(attempt 2 of 3)" in reasons[1]
    stops = ledger_stops(session, "test-analyzer")
    assert [(s["attempt"], s["stop_hook_active"]) for s in stops] == [(1, False), (2, True), (3, True)]
    assert len({s["agent_id"] for s in stops}) == 1

    # The other reviewers answered once each.
    for name in set(REVIEWER_AGENTS) - {"code-reviewer", "test-analyzer"}:
        assert [len(g) for g in session.instances(name)] == [1]

    # What the coordinator was handed back: one line each, the refusal included.
    lines = {line.split(":")[0]: line for line in hand_back_lines(session)}
    assert lines["code-reviewer"] == f"code-reviewer: recorded, 0 issues (run {run.run_id})"
    assert lines["test-analyzer"] == f"test-analyzer: answer refused: JSON_PARSE_ERROR (run {run.run_id})"

    # The state: code-reviewer valid after 2 attempts; test-analyzer exhausted after 3 invalid ones.
    records = run.round(1)["records"]
    assert (records["code-reviewer"]["valid"], records["code-reviewer"]["attempts"]) == (True, 2)
    assert records["code-reviewer"]["provenance"] == "hook"
    analyzer = records["test-analyzer"]
    assert (analyzer["valid"], analyzer["attempts"], analyzer["exhausted"]) == (False, 3, True)
    assert analyzer["error"]["code"] == "JSON_PARSE_ERROR"

    # The logs: one CONTRACT_VIOLATION, for test-analyzer; its call failed, code-reviewer's succeeded.
    (violation,) = run.of_type("CONTRACT_VIOLATION")
    assert (violation["agent"], violation["attempts"], violation["error_code"]) == (
        "test-analyzer",
        3,
        "JSON_PARSE_ERROR",
    )
    statuses = {e["agent"]: e["status"] for e in run.of_type("AGENT_RESULT")}
    assert [name for name, status in statuses.items() if status != "success"] == ["test-analyzer"]
    assert statuses["test-analyzer"] == "failed"

    # The report counts it as failed; five of six is coverage enough, and nothing was found.
    (iteration,) = report["review_iterations"]
    outcome = {r["agent"]: r for r in iteration["agents_results"]}
    assert outcome["test-analyzer"]["status"] == "failed"
    assert outcome["test-analyzer"]["error"]["code"] == "JSON_PARSE_ERROR"
    assert outcome["code-reviewer"] == {"agent": "code-reviewer", "status": "success", "issues_count": 0}
    assert report["summary"]["termination_reason"] == "no_fixable_issues"
    assert session.requests_of(FIXER_AGENT) == session.requests_of(VERIFIER_AGENT) == []


def hand_back_lines(session: Session) -> list[str]:
    """The one-line hand-backs the coordinator received, in order."""
    return [
        text.split("\n", 1)[0]
        for request in session.requests_of(COORDINATOR)[1:]
        for text, _ in last_results(request["body"])
    ]


# ------------------------------------------------------------------------------------------------
# 3. Too few reviewers: the run fails without a fix
# ------------------------------------------------------------------------------------------------


def test_too_few_reviewers_fail_the_run_without_a_fix(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    scenario = Scenario(
        agents={
            "silent-failure-hunter": reviewer({1: [issue("swallowed-error")]}),  # would be fixed otherwise
            "code-simplifier": reviewer(fail_rounds={1}),
            "type-design-analyzer": reviewer(fail_rounds={1}),
            "comment-analyzer": reviewer(invalid=[GARBAGE] * 3),
        }
    )
    session = command_session(start_api, make_runner, shared_plugin_data, scenario)
    check_session(session, run_status="failed")
    run, report = session.run, session.report

    failed = ["code-simplifier", "comment-analyzer", "type-design-analyzer"]
    assert report["status"] == "failed"
    error = report["error"]
    assert error["code"] == "INSUFFICIENT_COVERAGE"
    assert error["message"] == "Only 3/6 review agents succeeded (at least 4 required)"
    codes = {item["agent"]: item["error"]["code"] for item in error["failed_agents"]}
    assert codes == {
        "code-simplifier": "TOOL_ERROR",
        "type-design-analyzer": "TOOL_ERROR",
        "comment-analyzer": "JSON_PARSE_ERROR",
    }
    assert run.state["flow"]["outcome"]["error"]["code"] == "INSUFFICIENT_COVERAGE"

    # No verifier, no fixer: one dispatch, and the final message says why.
    assert session.dispatched() == [list(REVIEWER_AGENTS)]
    assert session.requests_of(FIXER_AGENT) == session.requests_of(VERIFIER_AGENT) == []
    assert {e["agent"] for e in run.of_type("AGENT_CALL")} == set(REVIEWER_AGENTS)
    assert len(run.of_type("REVIEW_VERIFICATION_END")) == 1  # only the gate ran
    shown = session.result.result_text or ""
    assert shown.startswith(f"fixloop review {run.run_id}: failed (INSUFFICIENT_COVERAGE)")
    assert "Error INSUFFICIENT_COVERAGE: Only 3/6 review agents succeeded" in shown

    # The logs: one AGENT_FAILURE per failed reviewer, then the coverage ERROR.
    assert sorted(e["agent"] for e in run.of_type("AGENT_FAILURE")) == failed
    assert [e["code"] for e in run.of_type("ERROR")] == ["INSUFFICIENT_COVERAGE"]
    assert sorted(e["agent"] for e in run.of_type("AGENT_RESULT", status="failed")) == failed
    (violation,) = run.of_type("CONTRACT_VIOLATION")
    assert violation["agent"] == "comment-analyzer"
    assert [len(g) for g in session.instances("comment-analyzer")] == [3]
    assert len(block_reasons(session, "comment-analyzer")) == 2


# ------------------------------------------------------------------------------------------------
# 4. Regressions: the fixes bring more fixable issues than they remove
# ------------------------------------------------------------------------------------------------

UNBOUND_DATA = "load_stock reads `data` after an OSError was swallowed: UnboundLocalError on a missing file"
SILENT_PASS = "load_stock swallows every OSError with `pass`: a broken stock file goes unnoticed"


def test_regressions_stop_the_loop_with_issues_increased(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    persisting = issue("misleading-comment")
    silent_pass = issue(
        file="inventory/stock.py",
        line=14,
        category="silent-failure",
        description=SILENT_PASS,
        suggestion="let it raise",
    )
    unbound = issue(
        file="inventory/stock.py",
        line=16,
        category="logic-error",
        description=UNBOUND_DATA,
        suggestion="raise",
        severity="critical",
    )
    scenario = Scenario(
        agents={
            "silent-failure-hunter": reviewer({1: [issue("swallowed-error")], 2: [silent_pass]}),
            "comment-analyzer": reviewer({1: [persisting], 2: [persisting]}),
            "code-reviewer": reviewer({2: [unbound]}),
            # The fixer "fixes" the swallowed error by swallowing it differently, and skips the comment.
            FIXER_AGENT: fixer(
                {1: [Edit("inventory/stock.py", EXCEPT_OLD, "    except OSError:\n        pass\n")]},
                skip=("KeyError",),
            ),
        }
    )
    session = command_session(
        start_api, make_runner, shared_plugin_data, scenario, config={"on_verification_failure": "manual"}
    )
    check_session(session, run_status="partial")
    run, report = session.run, session.report
    # Round 2's findings are verified too before the loop compares the rounds.
    assert session.dispatched() == [
        list(REVIEWER_AGENTS),
        [VERIFIER_AGENT],
        [FIXER_AGENT],
        list(REVIEWER_AGENTS),
        [VERIFIER_AGENT],
    ]

    assert report["status"] == "partial"
    assert report["summary"]["termination_reason"] == "issues_increased"
    first, second = report["review_iterations"]
    assert (first["fixable_issues"], second["fixable_issues"]) == (2, 3)
    ids = {str(item["description"]): str(item["id"]) for item in report["remaining_issues"]}
    new_ids = sorted([ids[UNBOUND_DATA], ids[SILENT_PASS]])
    assert sorted(i["id"] for i in report["introduced_issues"]) == new_ids
    assert second["introduced_issues"] == new_ids
    assert second["persisting_issues"] == [ids[persisting["description"]]]
    assert len(second["resolved_issues"]) == 1
    assert first["fix_result"] == {"attempted": 1, "succeeded": 1, "failed": 0}
    # The fix was kept: the file still has the fixer's change.
    assert report["files_modified"] == ["inventory/stock.py"]
    assert "    except OSError:\n        pass\n" in (session.project / "inventory/stock.py").read_text()

    # Headless: nobody to ask, so the engine took the question's default itself, and logged it.
    assert run.state["interactive"] is False
    interactions = [e for e in run.of_type("USER_INTERACTION") if e.get("context") == "review_diverged"]
    assert interactions and "from 2 to 3" in interactions[0]["question"]
    assert (interactions[-1]["user_response"], interactions[-1]["default"]) == ("manual", True)
    (convergence,) = run.of_type("REVIEW_CONVERGENCE")
    assert (convergence["decision"], convergence["previous_count"], convergence["current_count"]) == (
        "diverged",
        2,
        3,
    )
    # One fix only: the loop stopped before a second one.
    assert len(session.instances(FIXER_AGENT)) == 1


# ------------------------------------------------------------------------------------------------
# 5. Verification fails after a fix, headless: the fixer's change is rolled back, the user's kept
# ------------------------------------------------------------------------------------------------

TOTAL_LOOP = (
    "    total = 0\n"
    "    for quantity in stock.values():\n"
    "        if quantity > 0:\n"
    "            total += quantity\n"
    "    return total\n"
)
USER_NOTE = "\nLocal note by the user, not committed yet.\n"


def test_failed_verification_rolls_back_the_fixers_change_and_keeps_the_users(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    before: dict[str, bytes] = {}

    def user_edits(project: Path) -> None:
        """The user's own uncommitted work: the change under review, and a note in a committed file."""
        with (project / "README.md").open("a", encoding="utf-8") as handle:
            handle.write(USER_NOTE)
        for name in (*CHANGED_FILES, "README.md"):
            before[name] = (project / name).read_bytes()

    scenario = Scenario(
        agents={
            "silent-failure-hunter": reviewer({1: [issue("swallowed-error")]}),
            "code-simplifier": reviewer({1: [issue("duplicated-total")]}),
            FIXER_AGENT: fixer(
                {
                    1: [
                        Edit("inventory/stock.py", EXCEPT_OLD, EXCEPT_NEW),
                        # A "simplification" that counts negative quantities: the sample's tests fail.
                        Edit("inventory/report.py", TOTAL_LOOP, "    return sum(stock.values())\n"),
                    ]
                }
            ),
        }
    )
    session = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        scenario,
        config={"on_verification_failure": "rollback"},
        before=user_edits,
    )
    check_session(session, run_status="partial")
    run, report = session.run, session.report
    assert session.dispatched() == [list(REVIEWER_AGENTS), [VERIFIER_AGENT], [FIXER_AGENT]]

    # The fixer changed both files (Read, Read, Edit, Edit); verification then failed on the tests.
    (fixer_requests,) = session.instances(FIXER_AGENT)
    assert [[u["name"] for u in reply_tool_uses(r)] for r in fixer_requests] == [
        ["Read", "Read"],
        ["Edit"],
        ["Edit"],
        [],
    ]
    assert [e["tests"] for e in run.of_type("REVIEW_VERIFICATION_END")] == ["passed", "failed"]
    assert run.round(1)["verification_passed"] is False

    # Headless: the configured default (rollback) was taken, and logged as a default.
    interactions = [
        e for e in run.of_type("USER_INTERACTION") if e.get("context") == "review_verification_failed"
    ]
    assert (interactions[-1]["user_response"], interactions[-1]["default"]) == ("rollback", True)

    # The user-visible contract: every file is byte for byte what the user had before the run: the fixer's
    # edits are undone, the user's own uncommitted work (the change under review, the note) is kept.
    after = {name: (session.project / name).read_bytes() for name in before}
    assert after == before
    assert after["README.md"].endswith(USER_NOTE.encode())
    status = git(session.project, "status", "--porcelain", "--untracked-files=all")
    assert sorted(line[3:] for line in status.splitlines()) == ["README.md", *CHANGED_FILES]

    # The run stopped with verification_failed; nothing modified is left to report.
    assert report["status"] == "partial"
    assert report["summary"]["termination_reason"] == "verification_failed"
    assert report["files_modified"] == []
    assert report["verification"]["tests"]["status"] == "failed"
    assert "verification_failed" in (session.result.result_text or "")


# ------------------------------------------------------------------------------------------------
# 6. A token budget: the loop stops before a round would pass it
# ------------------------------------------------------------------------------------------------


def test_a_too_small_token_budget_stops_the_loop_with_budget_exhausted(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    session = command_session(
        start_api, make_runner, shared_plugin_data, happy_path(), config={"max_tokens": 1000}
    )
    check_session(session, run_status="partial")
    run, report = session.run, session.report
    # Round 1 was reviewed, verified and fixed; a second round would pass the budget, so none started.
    assert session.dispatched() == [list(REVIEWER_AGENTS), [VERIFIER_AGENT], [FIXER_AGENT]]
    assert report["summary"]["termination_reason"] == "budget_exhausted"
    assert report["status"] == "partial"
    (warning,) = run.of_type("WARNING", code="BUDGET_EXHAUSTED")
    # What the agents had spent at the check; the coordinator's own tokens are read from its transcript once
    # it stops, after the check.
    usage = report["usage"]
    spent = usage["total"]["total_tokens"] - usage["by_agent"][COORDINATOR]["total_tokens"]
    assert spent == usage["by_round"]["1"]["total_tokens"]
    assert warning["message"].startswith(f"No round 2: {spent} tokens spent")
    assert warning["message"].endswith("the budget is 1000.")
    assert spent > 1000
    assert "budget_exhausted" in (session.result.result_text or "")
    # The fix of round 1 is kept.
    assert report["files_modified"] == ["inventory/stock.py"]
