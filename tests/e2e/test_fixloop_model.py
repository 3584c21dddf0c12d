"""The scripted model itself, without the CLI: it recognises each sender by the agent files, reads the
engine's "fixloop next" blocks as the engine renders them, and acts on them as agents/coordinator.md says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fixloop_model import (
    AGENT_FILES,
    COORDINATOR,
    MARKERS,
    NO_STEP,
    FixloopModel,
    PluginDrift,
    Scenario,
    agent_markers,
    identify,
    latest_block,
    load_agents,
    parse_next,
)
from scripted_api import SUBAGENT_MARKER, Request

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.workflows.actions import question_text, render

RUN = "1a2b3c4d"
CALLS = [
    {
        "subagent_type": f"fixloop:{name}",
        "description": "Review round 1",
        "prompt": f'fixloop run {RUN}, step 1: review round 1. Else "/p/fixloop" task {RUN} {name}',
    }
    for name in REVIEWER_AGENTS
]
AGENTS_ACTION = {"action": "agents", "run_id": RUN, "step": 1, "label": "review round 1", "calls": CALLS}
STOP_ACTION = {"action": "stop", "run_id": RUN, "message": f"fixloop review {RUN}: success\nReport: a | b"}
HAND_BACK = (
    "[Subagent hand-back] The text below is the final report of a subagent. The report follows:\n{report}\n"
    "agentId: a123 (use SendMessage to continue)\n<usage>subagent_tokens: 10</usage>"
)


def request(system: str, messages: list[dict[str, Any]]) -> Request:
    body = {"system": [{"type": "text", "text": system}], "messages": messages}
    return Request(seq=0, method="POST", path="/v1/messages", headers={}, body=body, received_at=0.0)


def coordinator_request(*later: dict[str, Any], first_step: str) -> Request:
    return request(
        AGENT_FILES[COORDINATOR].body,
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": f"fixloop run {RUN} started: review, phase 0."}],
            },
            {"role": "system", "content": f"SubagentStart hook additional context: {first_step}"},
            *later,
        ],
    )


def handed_back(report: str) -> dict[str, Any]:
    indented = "\n".join("  " + line for line in report.split("\n"))
    return {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "text", "text": HAND_BACK.format(report=indented)}],
    }


def test_every_agent_is_recognised_by_a_marker_of_its_own_file() -> None:
    for name, marker in MARKERS.items():
        assert [other for other, agent in AGENT_FILES.items() if marker in agent.body] == [name]
    assert set(MARKERS) == set(AGENT_FILES)
    assert (
        identify(request(f"{SUBAGENT_MARKER};\n{AGENT_FILES['code-reviewer'].body}", [])) == "code-reviewer"
    )
    # The forked coordinator carries no subagent marker: its body tells it apart.
    assert identify(request(AGENT_FILES[COORDINATOR].body, [])) == COORDINATOR
    assert identify(request("You are Claude Code.", [])) == "main"
    assert identify(request(f"{SUBAGENT_MARKER}; You explore.", [])) == "unknown"


def test_marker_drift_is_loud(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "a.md").write_text('---\nname: alpha\n---\nAnswer {"status": "success", "agent": "alpha"}\n')
    (agents / "b.md").write_text("---\nname: beta\n---\nAnswer with JSON.\n")
    with pytest.raises(PluginDrift, match=r"b\.md no longer shows"):
        agent_markers(load_agents(tmp_path))
    (agents / "b.md").write_text('---\nname: beta\n---\nLike {"agent": "alpha"} and {"agent": "beta"}.\n')
    with pytest.raises(PluginDrift, match=r"also appears in b\.md"):
        agent_markers(load_agents(tmp_path))


def test_blocks_read_back_exactly_as_the_engine_renders_them() -> None:
    block = parse_next(render(AGENTS_ACTION))
    assert block is not None and block.final is None
    assert list(block.calls) == CALLS
    ended = parse_next(render(STOP_ACTION))
    assert ended is not None and ended.final == STOP_ACTION["message"] and ended.calls == ()
    question = {
        "action": "ask_user",
        "run_id": RUN,
        "question": "Roll back?",
        "options": [{"label": "rollback", "description": "undo"}],
        "default": "rollback",
    }
    asked = parse_next(render(question))
    assert asked is not None and asked.final == question_text(question)


def test_the_coordinator_calls_the_named_agents_in_one_message_in_the_foreground() -> None:
    model = FixloopModel()
    reply = model.coordinator(coordinator_request(first_step=render(AGENTS_ACTION)))
    assert model.problems == []
    assert [block.name for block in reply.blocks] == ["Agent"] * len(CALLS)
    assert [
        {k: b.input[k] for k in ("subagent_type", "description", "prompt")} for b in reply.blocks
    ] == CALLS
    assert {block.input["run_in_background"] for block in reply.blocks} == {False}


def test_the_coordinator_follows_the_block_in_its_last_agent_result_and_ends_with_its_exact_text() -> None:
    later = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Agent", "input": {}}]},
        {
            "role": "user",
            "content": [handed_back(f"code-reviewer: recorded (run {RUN})\n\n{render(STOP_ACTION)}")],
        },
    ]
    req = coordinator_request(*later, first_step=render(AGENTS_ACTION))
    block = latest_block(req.body)
    assert block is not None and block.final == STOP_ACTION["message"]
    model = FixloopModel()
    reply = model.coordinator(req)
    assert model.problems == []
    assert [(b.type, b.text) for b in reply.blocks] == [("text", STOP_ACTION["message"])]


def test_a_coordinator_left_without_a_step_says_so_and_is_a_problem() -> None:
    later = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Agent", "input": {}}]},
        {"role": "user", "content": [handed_back(f"code-reviewer: recorded (run {RUN})")]},
    ]
    model = FixloopModel()
    reply = model.coordinator(coordinator_request(*later, first_step=render(AGENTS_ACTION)))
    assert [b.text for b in reply.blocks] == [NO_STEP]
    assert len(model.problems) == 1 and "no fixloop next block" in model.problems[0]


def test_an_agent_gets_its_answer_from_the_table_by_round_and_attempt() -> None:
    from fixloop_model import GARBAGE, issue, reviewer

    behaviours = Scenario(
        agents={"code-reviewer": reviewer({2: [issue("swallowed-error")]}, invalid=[GARBAGE])}
    )
    model = FixloopModel(behaviours)
    system = f"{SUBAGENT_MARKER};\n{AGENT_FILES['code-reviewer'].body}"
    task = {
        "role": "system",
        "content": f"SubagentStart hook additional context: fixloop run {RUN}: review round 2.",
    }
    first = request(system, [{"role": "user", "content": "go"}, task])
    assert model.answer("code-reviewer", first).blocks[0].text == GARBAGE
    again = request(
        system,
        [
            {"role": "user", "content": "go"},
            task,
            {"role": "assistant", "content": [{"type": "text", "text": GARBAGE}]},
            {"role": "user", "content": "Stop hook feedback:\nfixloop rejected your final answer"},
        ],
    )
    answer = json.loads(model.answer("code-reviewer", again).blocks[0].text)
    assert [(i["id"], i["line"]) for i in answer["issues"]] == [("CR-001", 14)]
    assert model.problems == []
