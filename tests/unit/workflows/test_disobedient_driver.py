"""A property of the engine and its hooks: whatever the coordinator does, the engine ends the run.

The coordinator is simulated turn by turn through the real hook handlers (PreToolUse, SubagentStart,
SubagentStop, PostToolUse of the Agent tool, the coordinator's own SubagentStop), with Claude Code-shaped
payloads and the engine called in this process instead of a subprocess. Hypothesis draws what it does each
turn: obey, make a subset of the calls, repeat one, shuffle them, launch them in the background, or stop
with its own summary; and what each agent answers. For any such sequence the run ends within a bounded
number of turns, with a status never better than what happened, and every recorded finding is in the
report.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers_review import reviewer_doc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from workflows.flow_helpers import invoke, review_project, start, state

from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT
from fixloop.hookside import agent_events, engine, stop
from fixloop.hookside import context as hook_context
from fixloop.review.views import kept_rounds
from fixloop.store import layout
from fixloop.workflows import actions, driver

MAX_TURNS = 60  # coordinator turns; the engine must end every run long before
SESSION = "session-property"
Behaviour = str  # obey | subset | duplicate | shuffle | background | stop


def fire(handler: Any, payload: dict[str, Any]) -> str | None:
    """One hook as Claude Code runs it: find the session's run, then the handler (None: no run)."""
    found = hook_context.find_run(payload)
    return handler(payload, found) if found is not None else None


class Simulation:
    """A Claude Code session whose coordinator behaves as drawn, on a bound review run."""

    def __init__(self, root: Path, run_id: str, draw: Any) -> None:
        self.root = root
        self.run_id = run_id
        self.draw = draw
        self.tool_ids = iter(f"toolu_{n:04d}" for n in range(10_000))
        self.coordinator = "agent-coordinator"

    def common(self, event: str) -> dict[str, Any]:
        return {"session_id": SESSION, "cwd": str(self.root), "transcript_path": "", "hook_event_name": event}

    def answer(self, agent: str, task: str) -> str:
        if agent in REVIEWER_AGENTS:
            if self.draw(st.booleans()):
                return "I looked and it seems fine."
            count = self.draw(st.integers(0, 2))
            issues = [
                {
                    "id": f"X-{n}",
                    "file": "src/app.py",
                    "line": 1 + 20 * n,
                    "severity": "high",
                    "confidence": 90,
                    "category": "bug",
                    "description": f"`name_{agent}_{n}` is used before it is set",
                    "suggestion": "set it first",
                    "auto_fixable": True,
                }
                for n in range(count)
            ]
            return json.dumps(reviewer_doc(agent, issues))
        issues = (
            json.JSONDecoder().raw_decode(task.split("\nIssues:\n", 1)[1])[0] if "\nIssues:\n" in task else []
        )
        if agent == VERIFIER_AGENT:
            document = {
                "status": "success",
                "agent": agent,
                "verification_result": {
                    "accuracy_check": [],
                    "rule_compliance_check": [],
                    "quality_assessment": {
                        "overall_score": 90,
                        "quality_level": "EXCELLENT",
                        "missing_issues": [],
                    },
                },
            }
            return json.dumps(document)
        # The fixer claims every fix and never edits: the engine must not believe it.
        results = [{"issue_id": i["id"], "status": "succeeded", "files": [i["file"]]} for i in issues]
        return json.dumps(
            {"status": "success", "agent": FIXER_AGENT, "results": results, "files_modified": ["src/app.py"]}
        )

    def call(self, agent: str, background: bool) -> str | None:
        """One Agent call with its hooks; the text the coordinator gets back (None: refused)."""
        tool_use_id = next(self.tool_ids)
        tool_input = {
            "subagent_type": f"fixloop:{agent}",
            "description": "step",
            "prompt": "p",
            "run_in_background": background,
        }
        pre = {
            **self.common("PreToolUse"),
            "tool_name": "Agent",
            "tool_input": tool_input,
            "tool_use_id": tool_use_id,
        }
        decided = fire(agent_events.pre_tool_use, pre)
        if decided and '"deny"' in decided:
            return None
        agent_id = f"agent-{uuid.uuid4().hex[:12]}"
        start_payload = {
            **self.common("SubagentStart"),
            "agent_type": f"fixloop:{agent}",
            "agent_id": agent_id,
        }
        started = fire(agent_events.subagent_start, start_payload)
        task = json.loads(started)["hookSpecificOutput"]["additionalContext"] if started else ""
        for attempt in range(4):
            stop_payload = {
                **self.common("SubagentStop"),
                "agent_type": f"fixloop:{agent}",
                "agent_id": agent_id,
                "stop_hook_active": attempt > 0,
                "last_assistant_message": self.answer(agent, task),
            }
            if not fire(stop.subagent_stop, stop_payload):
                break
        response = {"status": "completed", "agentId": agent_id, "content": [{"type": "text", "text": "done"}]}
        post = {**pre, "hook_event_name": "PostToolUse", "tool_response": response}
        output = fire(agent_events.post_tool_use, post)
        if not output:
            return ""
        reply = json.loads(output)["hookSpecificOutput"]
        content = reply.get("updatedToolOutput", {}).get("content") or [
            {"text": reply.get("additionalContext", "")}
        ]
        return str(content[0]["text"])

    def coordinator_stops(self, text: str) -> str | None:
        payload = {
            **self.common("SubagentStop"),
            "agent_type": "fixloop:coordinator",
            "agent_id": self.coordinator,
            "stop_hook_active": False,
            "last_assistant_message": text,
        }
        decided = fire(stop.subagent_stop, payload)
        return str(json.loads(decided)["reason"]) if decided else None

    def run(self) -> int:
        """Drive the run until the coordinator is let go; the number of turns it took."""
        payload = {
            **self.common("SubagentStart"),
            "agent_type": "fixloop:coordinator",
            "agent_id": self.coordinator,
        }
        started = fire(agent_events.subagent_start, payload)
        block = json.loads(started)["hookSpecificOutput"]["additionalContext"] if started else ""
        for turn in range(1, MAX_TURNS + 1):
            calls = parse_calls(block)
            final = block.split("your final message is exactly:\n", 1)[1] if "End now" in block else None
            behaviour: Behaviour = self.draw(
                st.sampled_from(["obey", "obey", "subset", "duplicate", "shuffle", "background", "stop"])
            )
            if final is not None or not calls or behaviour == "stop":
                said = final if final is not None and behaviour != "stop" else "Review complete, all good."
                sent_back = self.coordinator_stops(said)
                if sent_back is None:
                    return turn
                block = sent_back
                continue
            chosen = list(calls)
            if behaviour == "subset":
                chosen = self.draw(
                    st.lists(st.sampled_from(calls), min_size=1, max_size=len(calls), unique=True)
                )
            elif behaviour == "duplicate":
                chosen = [*calls, self.draw(st.sampled_from(calls))]
            elif behaviour == "shuffle":
                chosen = self.draw(st.permutations(calls))
            texts = [self.call(agent, behaviour == "background") for agent in chosen]
            blocks = [t for t in texts if t and "fixloop next" in t]
            block = blocks[-1][blocks[-1].index("fixloop next") :] if blocks else ""
        raise AssertionError(f"the run did not end within {MAX_TURNS} coordinator turns")


def parse_calls(block: str) -> list[str]:
    return [
        line.split("subagent_type: fixloop:", 1)[1].split(" ", 1)[0]
        for line in block.splitlines()
        if line.startswith("- subagent_type: fixloop:")
    ]


@pytest.fixture
def in_process_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The hooks call the engine in this process (the same commands, without a subprocess)."""

    def record(context: Any, agent: str, agent_id: str, message: bytes) -> dict[str, Any]:
        _code, answer = invoke(
            "record", context.run_id, "--agent", agent, "--from-hook", agent_id, "-", stdin=message.decode()
        )
        return dict(answer)

    def next_text(context: Any, stopped: bool = False) -> str:
        return actions.render(driver.next_action(Path(context.root), context.run_id, stopped=stopped))

    monkeypatch.setattr(engine, "record", record)
    monkeypatch.setattr(engine, "next_text", next_text)
    yield


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_coordinator_behaviour_ends_the_run_truthfully(
    data: st.DataObject,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    in_process_engine: None,
) -> None:
    root = make_project(tmp_path_factory.mktemp("project"), monkeypatch)
    run_id = start(root, session=SESSION)
    layout.bind_session(root, SESSION, run_id)
    turns = Simulation(root, run_id, data.draw).run()
    assert turns <= MAX_TURNS
    final = state(root, run_id)
    assert final["status"] != "running" and final["ended_at_ms"] is not None
    review = final.get("review") or {}
    rounds = review.get("rounds") or []
    # Never better than what happened: a success needs every reviewer of the last round, no finding left
    # and every step carried out by the coordinator.
    if final["status"] == "success":
        last = [r for r in rounds if r.get("closed")][-1]
        assert all(item["status"] == "success" for item in last["agents_results"])
        assert not final["flow"].get("not_called")
        assert not last["issues"]
    if final["flow"]["outcome"].get("reason") == "COORDINATOR_STOPPED_EARLY":
        assert final["status"] == "failed"
    # A fix the fixer claimed without an edit never counts.
    assert all(
        item["status"] != "succeeded"
        for rnd in rounds
        for item in (rnd.get("fix") or {}).get("results") or []
    )
    # Every finding recorded about the code as it is (the rounds up to the final one: a rolled-back fix's
    # later rounds reviewed code that is gone) is in the report, remaining or fixed.
    code, report = invoke("review", "report", run_id, "--format", "json")
    assert code == 0, report
    reported = {i["id"] for key in ("remaining_issues", "fixed_issues") for i in report.get(key) or []}
    recorded = {i["id"] for rnd in kept_rounds(review) for i in rnd.get("issues") or []} if review else set()
    shape = [
        (
            r["iteration"],
            r.get("closed"),
            r.get("rolled_back"),
            [i["id"] for i in r.get("issues") or []],
            [a["status"] for a in r.get("agents_results") or []],
        )
        for r in rounds
    ]
    assert recorded <= reported, (final["status"], final["flow"]["outcome"], shape, report.get("summary"))


def make_project(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from helpers_runs import git

    git(root, "init", "-q", "-b", "main")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    monkeypatch.chdir(root)
    review_project(root)
    return root.resolve()
