"""A large change reviewed in shards: every file reaches every reviewer, one shard at a time, and the
round's findings, failures and coverage come out as one review would give them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers_review import Loop, failed_reviewer_doc, issue, make_state, reviewer_doc

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.report.html import html_report
from fixloop.report.markdown import markdown
from fixloop.review.views import status_document
from fixloop.runs.coverage import coverage
from fixloop.workflows.gaps import gap_lines

CR = "code-reviewer"
TA = "test-analyzer"


def change(per_dir: int, dirs: int) -> list[str]:
    return [f"pkg{d}/mod_{n:03d}.py" for d in range(dirs) for n in range(per_dir)]


def listed_files(prompt: str) -> list[str]:
    return [line[2:] for line in prompt.split("\n") if line.startswith("- pkg")]


def start(files: list[str], **config: Any) -> tuple[Loop, dict[str, Any]]:
    loop = Loop(make_state(files, use_verifier=False, **config))
    first = loop.next()
    assert first["action"] == "verify"
    loop.verify(True)
    return loop, loop.next()


def test_a_change_over_the_shard_size_is_reviewed_shard_by_shard_with_every_file_seen() -> None:
    files = change(150, 3)  # 450 files in three directories
    loop, action = start(files, review_shard_files=200)
    seen: list[str] = []
    shards: list[list[int]] = []
    while action["action"] == "review":
        shards.append(action["shard"])
        listed = listed_files(action["prompt"])
        assert len(listed) <= 200
        seen += listed
        number = action["shard"][0]
        for agent in REVIEWER_AGENTS:
            found = (
                [issue(f"{agent}-{number}", 1, f"bug in shard {number}", file=listed[0])]
                if agent == CR
                else []
            )
            loop.record(agent, reviewer_doc(agent, found))
        action = loop.next()
    assert shards == [[1, 3], [2, 3], [3, 3]]
    assert sorted(seen) == sorted(files)
    assert len(seen) == len(files)
    rnd = loop.review_doc["rounds"][0]
    assert [item["status"] for item in rnd["agents_results"]] == ["success"] * 6
    assert sorted(item["description"] for item in rnd["issues"]) == [
        "bug in shard 1",
        "bug in shard 2",
        "bug in shard 3",
    ]
    assert "unreviewed" not in rnd
    planned = [e["summary"] for e in loop.of_type("DATA_COLLECTED") if e["data_type"] == "review_shards"]
    assert planned == [
        {
            "iteration": 1,
            "files": 450,
            "lines": 0,
            "shards": 3,
            "shard_sizes": [150, 150, 150],
            "max_files": 200,
            "max_lines": 20_000,
        }
    ]
    done = [
        e["summary"]["shard"] for e in loop.of_type("DATA_COLLECTED") if e["data_type"] == "review_shard_done"
    ]
    assert done == [1, 2, 3]


def test_a_small_change_is_one_call_per_reviewer_with_no_shards() -> None:
    loop, action = start(change(10, 2), review_shard_files=200)
    assert action["action"] == "review" and action["shard"] is None
    assert len(listed_files(action["prompt"])) == 20
    assert "shards" not in loop.review_doc["rounds"][0]


def test_lines_split_a_change_of_few_but_long_files() -> None:
    files = change(4, 2)
    loop = Loop(make_state(files, use_verifier=False, review_shard_lines=1_000))
    loop.effects.lines = {name: 400 for name in files}
    loop.next()
    loop.verify(True)
    action = loop.next()
    assert action["shard"] == [1, 4]  # two 400-line files fit under 1,000 lines
    assert len(listed_files(action["prompt"])) == 2
    assert "Shard 1 of 4 of a 8-file change" in action["prompt"]


def test_a_reviewer_failing_one_shard_fails_the_round_for_that_shard_only() -> None:
    files = change(150, 3)
    loop, action = start(files, review_shard_files=200)
    shard_files: dict[int, list[str]] = {}
    while action["action"] == "review":
        number = action["shard"][0]
        shard_files[number] = listed_files(action["prompt"])
        for agent in REVIEWER_AGENTS:
            if agent == TA and number == 2:
                loop.record(agent, failed_reviewer_doc(agent))
                continue
            found = (
                [issue("X", 5, f"{agent} finding {number}", file=shard_files[number][0])]
                if agent == TA
                else []
            )
            loop.record(agent, reviewer_doc(agent, found))
        action = loop.next()
    rnd = loop.review_doc["rounds"][0]
    results = {item["agent"]: item for item in rnd["agents_results"]}
    assert results[TA]["status"] == "failed"
    assert results[TA]["error"]["message"] == f"shard(s) 2 of 3: {TA} timed out"
    assert rnd["unreviewed"] == {TA: sorted(shard_files[2])}
    # its findings of the shards it did review still count
    assert sorted(item["description"] for item in rnd["issues"]) == [f"{TA} finding 1", f"{TA} finding 3"]
    assert action["action"] != "failed"


def test_a_shard_too_few_reviewers_answered_fails_the_round_as_insufficient_coverage() -> None:
    loop, action = start(change(150, 3), review_shard_files=200, min_required_agents=4)
    while action["action"] == "review":
        number = action["shard"][0]
        for index, agent in enumerate(REVIEWER_AGENTS):
            if number == 3 and index < 3:
                continue  # three reviewers never answer for shard 3
            loop.record(agent, reviewer_doc(agent))
        action = loop.next()
    assert action["action"] == "failed"
    assert action["error"]["code"] == "INSUFFICIENT_COVERAGE"
    assert action["error"]["message"] == (
        "Too few review agents answered for shard 3 (3/6) of 3 (at least 4 required for every shard)"
    )


def test_the_report_and_the_final_message_say_which_files_a_reviewer_missed() -> None:
    files = change(150, 3)
    loop, action = start(files, review_shard_files=200)
    missed: list[str] = []
    while action["action"] == "review":
        number = action["shard"][0]
        for agent in REVIEWER_AGENTS:
            if agent == TA and number == 3:
                missed = listed_files(action["prompt"])
                loop.record(agent, failed_reviewer_doc(agent))
            else:
                loop.record(agent, reviewer_doc(agent))
        action = loop.next()
    state = loop.state
    assert coverage(state)["by_reviewer"] == {
        "files": 450,
        "shards": 3,
        "reviewers": {
            name: {"reviewed": 300, "not_reviewed": sorted(missed)}
            if name == TA
            else {"reviewed": 450, "not_reviewed": []}
            for name in REVIEWER_AGENTS
        },
    }
    sentences = (
        "Reviewed in 3 shards; 5 of 6 reviewers saw every file. "
        f"{TA} did not review 150 of 450 file(s) (its call failed)."
    )
    assert f"450 of 450 changed file(s) reviewed.\n\n{sentences}\n" in markdown(state)
    page = html_report(state, Path("/nonexistent"))
    assert f"<p>{TA} did not review 150 of 450 file(s) (its call failed).</p>" in page
    assert (
        f"Missing review: {TA} failed in round 1 (TIMEOUT: shard(s) 3 of 3: {TA} timed out; "
        "150 file(s) not reviewed by it)."
    ) in gap_lines(state)


def test_review_status_says_which_shard_the_reviewers_are_on() -> None:
    loop, _first = start(change(150, 3), review_shard_files=200)
    for agent in REVIEWER_AGENTS:
        loop.record(agent, reviewer_doc(agent))
    loop.next()
    loop.record(CR, reviewer_doc(CR))
    status = status_document(loop.state)["round"]
    assert (status["shard"], status["shards"]) == (2, 3)
    assert status["missing"] == [agent for agent in REVIEWER_AGENTS if agent != CR]
