"""Each agent of a review run costs one `fixloop record` and each coordinator step one `fixloop next`: those
processes import what a review run needs, not every workflow's contracts, test-output parsers or GitHub."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers_imports import LIB, in_packages, modules_loaded_by
from helpers_review import issue, reviewer_doc

from fixloop.contracts.validation import KIND_EXAMPLES
from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.runs import creation
from fixloop.workflows.driver import next_action
from fixloop.workflows.intake import record_answer

# Loaded only by another workflow, by an invalid answer, by a test run or by publishing to GitHub.
NOT_ON_A_REVIEW_CALL = (
    "fixloop.contracts.kinds",
    "fixloop.contracts.events",
    "fixloop.contracts.bugfix",
    "fixloop.contracts.pr",
    "fixloop.contracts.plan",
    "fixloop.contracts.ci",
    "fixloop.contracts.violations",
    "fixloop.failures",
    "fixloop.github",
    "fixloop.workflows.testrun",
    "fixloop.workflows.publish",
    "fixloop.workflows.bugfix",
    "fixloop.workflows.pr",
    "fixloop.workflows.plan",
    "fixloop.workflows.ci",
    "fixloop.report",
    "jsonschema",
)


# A well-formed reviewer, verifier or fixer answer is checked without its model (fixloop.contracts.canonical).
MODELS_OF_A_WELL_FORMED_ANSWER = (
    "fixloop.contracts.reviewer",
    "fixloop.contracts.verifier",
    "fixloop.contracts.fixer",
)


# Neither command of a review run loads pydantic on its normal path: the run's config is read by
# contracts.runconfig, the contract texts come from schemas/contract-texts.json, answers are checked by
# contracts.canonical.
PYDANTIC = ("pydantic", "pydantic_core")


# `python -m fixloop ARGS`, writing the names of every module loaded to the file named by argv[1] at exit
# (importlib.import_module's imports included, which -X importtime does not report).
LISTING_MAIN = """
import atexit, runpy, sys
listing = sys.argv.pop(1)
atexit.register(lambda: open(listing, "w").write("\\n".join(sys.modules)))
sys.argv[0] = "fixloop"
runpy.run_module("fixloop", run_name="__main__", alter_sys=True)
"""


def engine(project: Path, *args: str) -> tuple[dict[str, Any], list[str]]:
    """Run `fixloop ARGS` in the project; its JSON answer and every module it loaded."""
    listing = project.parent / "modules.txt"
    env = {**os.environ, "PYTHONPATH": str(LIB), "CLAUDE_PROJECT_DIR": str(project)}
    argv = [sys.executable, "-c", LISTING_MAIN, str(listing), *args]
    done = subprocess.run(argv, capture_output=True, env=env, cwd=project, check=True)
    return json.loads(done.stdout), listing.read_text().split()


def test_record_and_next_of_a_review_run_import_only_the_review_contracts(git_project: Path) -> None:
    run_id = creation.start_run("review", root=git_project, changed_files=["src/app.py"])["state"]["run_id"]
    assert next_action(git_project, run_id)["action"] == "agents"
    for agent in REVIEWER_AGENTS[1:]:
        (git_project / "answer.json").write_text(json.dumps(reviewer_doc(agent, [issue("A-1", 1, "Wrong")])))
        assert record_answer(git_project, run_id, "answer.json", agent, None)["valid"]
    last = REVIEWER_AGENTS[0]
    (git_project / "answer.json").write_text(json.dumps(reviewer_doc(last, [issue("B-1", 1, "Wrong")])))

    recorded, record_modules = engine(git_project, "record", run_id, "answer.json", "--agent", last)
    assert recorded["valid"] is True
    assert in_packages(record_modules, NOT_ON_A_REVIEW_CALL) == []
    assert in_packages(record_modules, MODELS_OF_A_WELL_FORMED_ANSWER) == []
    assert in_packages(record_modules, ("click",)) == []  # the hooks' spelling of record needs no click
    assert in_packages(record_modules, PYDANTIC) == []

    action, next_modules = engine(git_project, "next", run_id)
    assert action["action"] == "agent"
    assert action["calls"][0]["subagent_type"] == "fixloop:review-verifier"
    assert in_packages(next_modules, NOT_ON_A_REVIEW_CALL) == []
    assert in_packages(next_modules, PYDANTIC) == []


def test_checking_a_well_formed_answer_of_each_review_agent_loads_no_pydantic() -> None:
    answers = {
        "reviewer": reviewer_doc(REVIEWER_AGENTS[0], [issue("A-1", 1, "Wrong"), issue("A-2", 2, "Worse")]),
        "verifier": KIND_EXAMPLES["verifier"],
        "fixer": KIND_EXAMPLES["fixer"],
    }
    for kind, answer in answers.items():
        code = (
            "from fixloop.contracts.check import check_text\n"
            f"checked = check_text({kind!r}, {json.dumps(answer)!r})\n"
            "assert checked.ok, checked.error\n"
        )
        loaded = modules_loaded_by(
            code, ("pydantic", "pydantic_core", "fixloop.contracts.common", *MODELS_OF_A_WELL_FORMED_ANSWER)
        )
        assert loaded == [], kind
