"""A 2,000-file change in the real CLI with the scripted model, on the default settings: the review goes in
shards of related files, each of the six reviewers reviews every shard (one call per shard), and the report
says that every file reached every reviewer.

Each scripted reviewer reads its whole task (whole_task.WholeTask: from the task file when the context
names one), notes the files the task lists, and reports a finding only on a file of its own task, so a
finding reaches the report only through the shard that holds its file.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from fixloop_model import Act, Behaviour, NextBlock, Scenario, Turn, failure_document, obey
from fixloop_session import CHANGED_FILES, MakeRunner, StartAPI, command_session
from scripted_api import Reply, Request
from whole_task import WholeTask

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.runs.shards import plan_shards

DIRECTORIES = 20
PER_DIRECTORY = 100
NEW_FILES = DIRECTORIES * PER_DIRECTORY - len(CHANGED_FILES)  # with the sample's two: a 2,000-file change
SHARD_FILES = 200  # review_shard_files' default
LISTED = re.compile(r"^- (\S+)$", re.MULTILINE)
SHARD = re.compile(r"shard (\d+) of (\d+)")
# (reviewer, file) of each finding: in the third directory and in the last one, far apart in the change.
FINDINGS = {
    "code-reviewer": "src/pkg02/part_017.py",
    "silent-failure-hunter": "src/pkg19/part_042.py",
}


def new_files() -> list[str]:
    names = [f"src/pkg{d:02d}/part_{n:03d}.py" for d in range(DIRECTORIES) for n in range(PER_DIRECTORY)]
    return names[:NEW_FILES]


def add_files(project: Path) -> None:
    for name in new_files():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {len(name)}\n", encoding="utf-8")


class Seen:
    """The files each reviewer's tasks listed, per shard its task names."""

    def __init__(self) -> None:
        self.files: dict[str, set[str]] = {name: set() for name in REVIEWER_AGENTS}
        self.shards: dict[str, list[tuple[int, int]]] = {name: [] for name in REVIEWER_AGENTS}

    def reviewer(self, agent: str) -> Behaviour:
        def behave(turn: Turn) -> Act:
            listed = LISTED.findall(turn.task)
            self.files[agent].update(listed)
            shard = SHARD.search(turn.task)
            if shard is not None and (int(shard[1]), int(shard[2])) not in self.shards[agent]:
                self.shards[agent].append((int(shard[1]), int(shard[2])))
            issues = [
                {
                    "id": f"{agent[:2].upper()}-001",
                    "file": FINDINGS[agent],
                    "line": 1,
                    "severity": "medium",
                    "confidence": 90,
                    "category": "bug",
                    "description": f"VALUE in {FINDINGS[agent]} is never read",
                    "suggestion": "use it or remove it",
                    "auto_fixable": False,
                }
                for _ in (1,)
                if agent in FINDINGS and FINDINGS[agent] in listed
            ]
            return {"status": "success", "agent": agent, "issues": issues, "positive_observations": []}

        return behave


def test_a_2000_file_change_is_reviewed_in_shards_with_every_file_seen_by_every_reviewer(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    whole, seen = WholeTask(), Seen()
    agents = {name: whole.wrap("reviewer", seen.reviewer(name), lambda _task: []) for name in REVIEWER_AGENTS}
    session = command_session(
        start_api, make_runner, shared_plugin_data, Scenario(agents=agents), before=add_files, timeout=900.0
    )
    assert whole.problems == []
    change = sorted([*CHANGED_FILES, *new_files()])
    assert len(change) == 2000
    shards = plan_shards(change, SHARD_FILES, 20_000, {name: 1 for name in change})
    total = len(shards)
    assert total == math.ceil(2000 / SHARD_FILES) + 1  # directories kept whole: 102, 9 x 200, 98

    # Every reviewer saw every file, shard by shard, one call per shard.
    for name in REVIEWER_AGENTS:
        assert sorted(seen.files[name]) == change, name
        assert seen.shards[name] == [(n, total) for n in range(1, total + 1)], name
        assert len(session.instances(name)) == total, name
    steps = session.dispatches()
    assert len(steps) == total
    assert all(
        sorted(u["input"]["subagent_type"] for u in uses)
        == sorted(f"fixloop:{name}" for name in REVIEWER_AGENTS)
        for uses in steps
    )

    # The engine planned the shards and logged each one done with all six reviewers.
    (planned,) = [e for e in session.run.of_type("DATA_COLLECTED") if e.get("data_type") == "review_shards"]
    assert planned["summary"]["files"] == 2000
    assert planned["summary"]["shard_sizes"] == [len(members) for members in shards]
    done = [
        e["summary"]
        for e in session.run.of_type("DATA_COLLECTED")
        if e.get("data_type") == "review_shard_done"
    ]
    assert [(item["shard"], item["agents_succeeded"]) for item in done] == [
        (n, 6) for n in range(1, total + 1)
    ]

    # The findings of two different shards are both in the report; the coverage says what each reviewer saw.
    report = session.report
    assert sorted(issue["file"] for issue in report["remaining_issues"]) == sorted(FINDINGS.values())
    coverage = report["coverage"]
    assert coverage["reviewed_files"] == 2000
    assert coverage["by_reviewer"] == {
        "files": 2000,
        "shards": total,
        "reviewers": {name: {"reviewed": 2000, "not_reviewed": []} for name in REVIEWER_AGENTS},
    }


def test_a_reviewer_failing_one_shard_leaves_only_that_shard_unreviewed_and_says_so(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    seen = Seen()
    agents: dict[str, Behaviour] = {name: seen.reviewer(name) for name in REVIEWER_AGENTS}
    good = agents["test-analyzer"]

    def fails_shard_2(turn: Turn) -> Act:
        shard = SHARD.search(turn.task)
        if shard is not None and shard[1] == "2":
            return failure_document("test-analyzer")
        return good(turn)

    agents["test-analyzer"] = fails_shard_2
    session = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        Scenario(agents=agents),
        config={"review_shard_files": 100},
        before=add_files,
        timeout=900.0,
    )
    change = sorted([*CHANGED_FILES, *new_files()])
    shards = plan_shards(change, 100, 20_000, {name: 1 for name in change})
    report = session.report
    by_reviewer = report["coverage"]["by_reviewer"]
    assert by_reviewer["shards"] == len(shards)
    assert by_reviewer["reviewers"]["test-analyzer"] == {
        "reviewed": 2000 - len(shards[1]),
        "not_reviewed": sorted(shards[1]),
    }
    assert all(
        item == {"reviewed": 2000, "not_reviewed": []}
        for name, item in by_reviewer["reviewers"].items()
        if name != "test-analyzer"
    )
    # The other reviewers' findings still count; the run says what is missing instead of passing.
    assert sorted(issue["file"] for issue in report["remaining_issues"]) == sorted(FINDINGS.values())
    assert report["status"] == "partial"
    final = session.result.result_text or ""
    assert f"shard(s) 2 of {len(shards)}" in final
    assert f"{len(shards[1])} file(s) not reviewed by it" in final


SUMMARY = "Review complete: every shard looks fine."


def test_a_coordinator_that_skips_repeats_and_stops_between_shards_still_has_every_file_reviewed(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    """Shard 2: one reviewer left out and another called twice; shard 3: the coordinator stops early once
    with its own summary. The engine hands the left-out call out again, refuses the repeat, sends the
    coordinator back, and every reviewer still sees every file once."""
    seen = Seen()
    stops: list[str] = []
    left_out = "code-simplifier"

    def deviate(request: Request, block: NextBlock) -> Reply | None:
        head = block.text.split("\n", 1)[0]
        if "shard 2/3" in head and len(block.calls) == len(REVIEWER_AGENTS):
            calls = [c for c in block.calls if c["subagent_type"] != f"fixloop:{left_out}"]
            return obey(NextBlock(block.text, calls=(*calls, calls[0])))
        if "shard 3/3" in head and not stops:
            stops.append(head)
            return Reply.text(SUMMARY)
        return None

    whole = WholeTask()
    agents = {name: whole.wrap("reviewer", seen.reviewer(name), lambda _task: []) for name in REVIEWER_AGENTS}
    scenario = Scenario(agents=agents)
    scenario.deviate = deviate
    scenario.tolerated_errors = ("was already called in step",)
    session = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        scenario,
        config={"review_shard_files": 700},
        before=add_files,
        timeout=900.0,
    )
    assert whole.problems == []
    change = sorted([*CHANGED_FILES, *new_files()])
    assert len(plan_shards(change, 700, 20_000, {name: 1 for name in change})) == 3
    for name in REVIEWER_AGENTS:
        assert sorted(seen.files[name]) == change, name
    state = session.run.state
    assert [step["agents"] for step in state["flow"]["history"]] == [
        list(REVIEWER_AGENTS),
        list(REVIEWER_AGENTS),
        [left_out],
        list(REVIEWER_AGENTS),
    ]
    refused = session.run.of_type("WARNING", code="AGENT_CALL_REFUSED")
    assert [w["agent"] for w in refused] == [REVIEWER_AGENTS[0]]
    assert len(session.run.of_type("WARNING", code="COORDINATOR_STOPPED_EARLY")) == 1
    by_reviewer = session.report["coverage"]["by_reviewer"]
    assert by_reviewer["shards"] == 3
    assert by_reviewer["reviewers"] == {
        name: {"reviewed": 2000, "not_reviewed": []} for name in REVIEWER_AGENTS
    }
    # The run ended as the engine says (its findings are not auto-fixable: partial), and the user read the
    # engine's final message, not the coordinator's summary.
    assert state["status"] == "partial" and state["ended_at_ms"] is not None
    assert sorted(issue["file"] for issue in session.report["remaining_issues"]) == sorted(FINDINGS.values())
    final = str(session.result.result_text)
    assert final == state["final_message"]
    assert SUMMARY not in final
