"""Recording one answer and closing a round when six reviewers report 500 findings each, in round 3 of a
review run whose two earlier rounds closed with their findings: CPU seconds and peak RSS, at commit BEFORE
and in this working tree.

    .venv/bin/python tests/benchmarks/bench_round_scale.py [--findings 500] [--repeats 3] [--before COMMIT]

A child process with the engine version under test on its path builds the run through the calls the hooks
make (workflows.driver.next_action, workflows.intake.record_answer): a review run of 40 changed files, no
verifier; every round's six reviewers answer FINDINGS findings each (a fifth of them the same finding from
every reviewer, so merging has work; each round moves every finding 3 lines down, so identity has to match
across rounds; a tenth are new in each round), rounds 1 and 2 with 40 and 20 more a reviewer (the count
falls, so the loop goes on); the fixer fixes nothing; round 3 is left with five reviewers answered.
The project is kept, then each measured call runs in a fresh process on a fresh copy of it:

- record: `fixloop record` of the sixth reviewer's answer (workflows.intake.record_answer), the same
  function the command calls;
- close: the `fixloop next` that follows (workflows.driver.next_action): merge, identity, registry, tracking.

Per call: median CPU seconds of REPEATS, and the peak RSS of the measuring process (the engine imported, the
call made). BEFORE is checked out in a temporary git worktree, removed afterwards. Prints figures only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "lib"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from before_tree import engine_at  # noqa: E402

from fixloop.core.agent_names import REVIEWER_AGENTS as REVIEWERS  # noqa: E402

BEFORE = "83e1266"
FILES = 40
WORDS = ("null", "await", "handle", "bound", "cast", "lock", "retry", "cache", "index", "parse")

BUILD = r"""
import json, os, sys
from pathlib import Path
project, findings, files, reviewers, words = (
    Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(","), sys.argv[5].split(",")
)
os.environ["CLAUDE_PROJECT_DIR"] = str(project)
os.environ["CLAUDE_PLUGIN_DATA"] = str(project.parent / "data")
from fixloop.contracts.coordinator import LoopConfig
from fixloop.runs import creation
from fixloop.workflows import driver
from fixloop.workflows.intake import record_answer

(project / "src").mkdir(parents=True)
changed = [f"src/module_{k}.py" for k in range(files)]
for name in changed:
    (project / name).write_text("".join(f"value_{n} = {n}\n" for n in range(2100)))
config = {"use_verifier": False, "max_review_iterations": 5, "max_issues_per_answer": findings + 40}
if "max_findings_per_batch" in LoopConfig.model_fields:
    config["max_findings_per_batch"] = 2000  # one fixer call a round, as before batches
if "review_shard_lines" in LoopConfig.model_fields:
    config["review_shard_lines"] = 10_000_000  # one reviewer call per role, as before shards
(project / ".claude").mkdir()
(project / ".claude" / "fixloop.json").write_text(json.dumps(config))

def finding(agent_index, number, round_number):
    key = number if number % 5 == 0 else agent_index * 1_000_000 + number
    if number % 10 == 1:  # new in each round, so the loop has not converged
        key += 100_000 * round_number
    shift = 3 * (round_number - 1)
    return {
        "id": f"R{agent_index}-{number}", "severity": ("critical", "high", "medium", "low")[key % 4],
        "confidence": 80 + key % 20, "file": changed[key % files], "line": 1 + (key * 7) % 2000 + shift,
        "category": ("bug", "error-handling", "style", "types")[key % 4],
        "description": f"Problem {words[key % 10]} {words[(key // 10) % 10]} {words[(key // 100) % 10]} "
        f"in func_{key} variant {key // 1000}",
        "suggestion": "Do the right thing.", "auto_fixable": True,
    }

def reviewer_answer(agent, round_number):
    index = reviewers.index(agent)
    issues = [finding(index, n, round_number) for n in range(findings + 20 * (3 - round_number))]
    return {"status": "success", "agent": agent, "issues": issues, "positive_observations": []}

def write_answer(name, document):
    (project / name).write_text(json.dumps(document))
    return name

def record(agent, document):
    return record_answer(project, run_id, write_answer("answer.json", document), agent, None)["valid"]

run_id = creation.start_run("review", root=project, changed_files=changed)["state"]["run_id"]
round_number = 0
while True:
    action = driver.next_action(project, run_id)
    if action["action"] == "ask_user":
        driver.answer(project, run_id, None, True)
        continue
    assert action["action"] in ("agent", "agents"), action
    agents = [call["subagent_type"].split(":", 1)[1] for call in action["calls"]]
    if agents[0] in reviewers:
        round_number += 1
        answers = {agent: reviewer_answer(agent, round_number) for agent in agents}
        if round_number == 3:
            last = agents[-1]
            for agent in agents[:-1]:
                assert record(agent, answers[agent])
            write_answer("last-answer.json", answers[last])
            print(json.dumps({"run_id": run_id, "agent": last}))
            break
        for agent in agents:
            assert record(agent, answers[agent])
    else:
        for agent in agents:
            assert agent == "review-fixer", agents
            nothing = {"status": "success", "agent": agent, "results": [], "files_modified": []}
            recorded = record_answer(project, run_id, write_answer("answer.json", nothing), agent, None)
            assert recorded["valid"], recorded
"""

MEASURE = r"""
import json, os, resource, sys, time
from pathlib import Path
project, run_id, agent, call = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
os.environ["CLAUDE_PROJECT_DIR"] = str(project)
os.environ["CLAUDE_PLUGIN_DATA"] = str(project.parent / "data")
from fixloop.workflows import driver
from fixloop.workflows.intake import record_answer
if call == "close":
    assert record_answer(project, run_id, "last-answer.json", agent, None)["valid"]
before = time.process_time()
if call == "record":
    done = record_answer(project, run_id, "last-answer.json", agent, None)
    assert done["valid"], done
else:
    done = driver.next_action(project, run_id)
    assert done["action"] in ("agent", "agents", "ask_user", "stop"), done
cpu = time.process_time() - before
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
then = done.get("label") or done.get("reason") or done.get("action") or done.get("status")
print(json.dumps({"cpu": cpu, "peak_mb": peak_mb, "then": then}))
"""


def engine(lib: Path, code: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**os.environ, "PYTHONPATH": str(lib)},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"engine {lib} failed:\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1]


def measure(lib: Path, findings: int, repeats: int) -> dict[str, tuple[float, float, str]]:
    """{call: (median CPU seconds, peak RSS MB)} for the engine at `lib`."""
    figures: dict[str, tuple[float, float, str]] = {}
    with tempfile.TemporaryDirectory() as temp:
        work, pristine = Path(temp) / "work", Path(temp) / "pristine"
        project = work / "project"
        built = json.loads(
            engine(lib, BUILD, str(project), str(findings), str(FILES), ",".join(REVIEWERS), ",".join(WORDS))
        )
        shutil.copytree(work, pristine, symlinks=True)
        for call in ("record", "close"):
            runs = []
            for _ in range(repeats):
                shutil.rmtree(work)
                shutil.copytree(pristine, work, symlinks=True)
                runs.append(
                    json.loads(engine(lib, MEASURE, str(project), built["run_id"], built["agent"], call))
                )
            figures[call] = (
                statistics.median(run["cpu"] for run in runs),
                statistics.median(run["peak_mb"] for run in runs),
                runs[0]["then"],
            )
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--findings", type=int, default=500, help="findings per reviewer answer")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", default=BEFORE, help="the commit measured as 'before'")
    args = parser.parse_args()
    with engine_at(args.before) as before_lib:
        before = measure(before_lib, args.findings, args.repeats)
    after = measure(ROOT / "scripts" / "lib", args.findings, args.repeats)
    total = args.findings * len(REVIEWERS)
    print(
        f"round 3 of a review run, 6 reviewers x {args.findings} findings ({total} a round), "
        f"median of {args.repeats}"
    )
    print(f"{'call':<44} {'before s':>9} {'after s':>8} {'before MB':>9} {'after MB':>8}")
    labels = {
        "record": "record one reviewer answer (fixloop record)",
        "close": "close the round (fixloop next)",
    }
    for call, label in labels.items():
        print(
            f"{label:<44} {before[call][0]:>9.3f} {after[call][0]:>8.3f} "
            f"{before[call][1]:>9.0f} {after[call][1]:>8.0f}  then: {before[call][2]} | {after[call][2]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
