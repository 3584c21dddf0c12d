"""A large change in the real CLI with the scripted model: no agent's task is cut.

Claude Code delivers SubagentStart context only up to 10,000 characters. A 300-file change gives each
reviewer a task far longer than that. A 30-finding round goes to the verifier and the fixer in batches
(max_findings_per_batch 20: two calls each, 20 findings then 10). Each scripted agent here does what its
context says: when the context names a file to read the whole task from, it reads it with the real Read
tool, in the ranges given, and rebuilds the task from the tool's results. It then checks that the task ends
with its whole contract (the marker: the contract's last line) and that it holds every changed file or
every finding of its batch, and only then answers, from the whole task.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fixloop_model import Act, Behaviour, Scenario, Turn, reviewer, verifier
from fixloop_session import CHANGED_FILES, MakeRunner, StartAPI, command_session, reply_tool_uses
from scripted_api import Block, tool_use
from whole_task import CONTEXT_LIMIT, NOTE, WholeTask

from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT

JSON = dict[str, Any]
PARTS_DIR = "inventory/parts"
EXTRA_FILES = 298  # with the sample's two changed files: a 300-file change
FINDINGS = 30
BATCH = 20  # max_findings_per_batch: the 30 findings go to the verifier and the fixer as 20 + 10


def part_name(number: int) -> str:
    return f"{PARTS_DIR}/part_{number:03d}.py"


def add_parts(project: Path) -> None:
    """298 new files in the change, each one constant."""
    (project / PARTS_DIR).mkdir()
    for number in range(EXTRA_FILES):
        (project / part_name(number)).write_text(f"LIMIT_{number} = 0\n", encoding="utf-8")


def every_file_listed(task: str) -> list[str]:
    if "review round 2" in task:
        return []  # round 2 reviews what the fixer changed
    wanted = [*CHANGED_FILES, *(part_name(n) for n in range(EXTRA_FILES))]
    return [f"{name} not in the task" for name in wanted if f"\n- {name}\n" not in task]


class Batches:
    """Checks each verifier or fixer task: it holds the whole batch its first line announces ("batch k/2",
    20 then 10 findings). Keeps the ids of each batch, in order (an agent's later turns repeat its task)."""

    def __init__(self) -> None:
        self.ids: list[list[str]] = []
        self.tasks: list[str] = []

    def check(self, task: str) -> list[str]:
        if self.tasks and self.tasks[-1] == task:
            return []
        self.tasks.append(task)
        at = task.find("Issues:\n")
        issues = json.JSONDecoder().raw_decode(task[at + len("Issues:\n") :])[0] if at >= 0 else []
        ids = [str(item["id"]) for item in issues]
        self.ids.append(ids)
        number = len(self.ids)
        wanted = BATCH if number == 1 else FINDINGS - BATCH
        problems = [] if len(ids) == wanted else [f"{len(ids)} findings in batch {number}, not {wanted}"]
        if f"round 1, batch {number}/2" not in task.split("\n", 1)[0]:
            problems.append(f"task {number} does not say it is batch {number}/2")
        return problems


def finding(number: int) -> JSON:
    return {
        "file": part_name(number),
        "line": 1,
        "severity": "high",
        "confidence": 90,
        "category": "bug",
        "description": f"LIMIT_{number} must be 1: 0 disables the limit of part {number}",
        "suggestion": f"set LIMIT_{number} = 1",
        "auto_fixable": True,
    }


def fix_every_part(turn: Turn) -> Act:
    """The fixer: Read the 30 files, edit them all in one message, then answer every issue succeeded."""
    workdir = turn.workdir or Path(".")
    issues = turn.issues
    files = [str(workdir / str(item["file"])) for item in issues]
    made = {str(u.input.get("file_path")): u.name for u in turn.tool_uses}
    edits_made = [path for path, name in made.items() if name == "Edit"]
    if not all(path in made for path in files):
        return [tool_use("Read", {"file_path": path}) for path in files]
    if not edits_made:
        blocks: list[Block] = []
        for item, path in zip(issues, files, strict=True):
            number = int(str(item["file"]).rsplit("_", 1)[1].split(".")[0])
            edit = {
                "file_path": path,
                "old_string": f"LIMIT_{number} = 0",
                "new_string": f"LIMIT_{number} = 1",
            }
            blocks.append(tool_use("Edit", edit))
        return blocks
    results = [{"issue_id": item["id"], "status": "succeeded", "files": [item["file"]]} for item in issues]
    return {
        "status": "success",
        "agent": FIXER_AGENT,
        "results": results,
        "files_modified": sorted(str(item["file"]) for item in issues),
    }


def test_a_300_file_change_and_30_findings_reach_every_agent_whole(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    whole = WholeTask()
    agents: dict[str, Behaviour] = {
        name: whole.wrap("reviewer", reviewer(), every_file_listed) for name in REVIEWER_AGENTS
    }
    agents["code-reviewer"] = whole.wrap(
        "reviewer", reviewer({1: [finding(n) for n in range(FINDINGS)]}), every_file_listed
    )
    verified, fixed = Batches(), Batches()
    agents[VERIFIER_AGENT] = whole.wrap("verifier", verifier(), verified.check)
    agents[FIXER_AGENT] = whole.wrap("fixer", fix_every_part, fixed.check)
    session = command_session(
        start_api,
        make_runner,
        shared_plugin_data,
        Scenario(agents=agents),
        # One reviewer call over all 300 files (past the shard size, a task this large would be cut in
        # shards: test_sharded_review.py).
        config={"max_findings_per_batch": BATCH, "review_shard_files": 400},
        before=add_parts,
        timeout=600.0,
    )
    assert whole.problems == []

    # The verifier and the fixer each got the 30 findings in two calls, 20 then 10, in the same order, and
    # the coordinator's prompts name the batch.
    assert len(verified.ids) == 2
    assert len({*verified.ids[0], *verified.ids[1]}) == FINDINGS
    assert fixed.ids == verified.ids
    prompts = [str(u["input"]["prompt"]) for uses in session.dispatches() for u in uses]
    for label in ("verify the findings of round 1", "fix round 1"):
        assert [p.split(": ", 1)[1].split(".")[0] for p in prompts if f"{label}," in p] == [
            f"{label}, batch 1/2",
            f"{label}, batch 2/2",
        ]

    # Every task past the limit reached its agent as head + file + contract and was read whole (WholeTask);
    # the reviewers' tasks of round 1 are past it.
    run_dir = session.project / ".claude" / "fixloop" / "runs" / session.run.run_id
    for name in REVIEWER_AGENTS:
        assert NOTE.search(whole.contexts[name][0]) is not None, name
        assert len(whole.tasks[name][0]) > CONTEXT_LIMIT, name
    for name, batches in ((VERIFIER_AGENT, verified), (FIXER_AGENT, fixed)):  # the file holds the last task
        assert len(batches.tasks) == 2, name
        assert batches.tasks[-1] == (run_dir / "tasks" / f"{name}.md").read_text(encoding="utf-8")
    # Each fixer batch: (the task file,) its files, its edits in one message, its answer.
    contexts = list(dict.fromkeys(whole.contexts[FIXER_AGENT]))
    assert len(contexts) == 2
    from_file = [NOTE.search(context) is not None for context in contexts]
    calls = [
        [sorted({u["name"] for u in reply_tool_uses(r)}) for r in requests]
        for requests in session.instances(FIXER_AGENT)
    ]
    assert calls == [[*([["Read"]] if read else []), ["Read"], ["Edit"], []] for read in from_file]

    # The run fixed all 30 and ended clean.
    report = session.report
    assert report["status"] == "success"
    assert report["summary"]["fixed_issues"] == FINDINGS
    assert report["remaining_issues"] == []
    for number in range(FINDINGS):
        text = (session.project / part_name(number)).read_text(encoding="utf-8")
        assert text == f"LIMIT_{number} = 1\n"
    assert (session.project / part_name(FINDINGS)).read_text(encoding="utf-8") == f"LIMIT_{FINDINGS} = 0\n"
    assert f"review issues fixed: {FINDINGS}." in (session.result.result_text or "")
