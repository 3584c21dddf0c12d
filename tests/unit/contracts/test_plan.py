"""The task implementer's contract: what its answer must hold, and the agent file that goes with it."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml

from fixloop.contracts.check import check_document, check_text
from fixloop.contracts.examples import KIND_EXAMPLES
from fixloop.contracts.kinds import KINDS, KINDS_WITH_STATUS
from fixloop.contracts.plan import PLAN_MODELS, TASK_IMPLEMENTER, TaskImplementerOutput
from fixloop.contracts.prompt_text import CONTRACT_KINDS, contract_text
from fixloop.contracts.schemagen import load_schema

ROOT = Path(__file__).resolve().parents[3]
KIND = "task-implementer"


def example(**changes: Any) -> dict[str, Any]:
    document = copy.deepcopy(KIND_EXAMPLES[KIND])
    document.update(changes)
    return document


def problems(document: Any) -> list[str]:
    checked = check_document(KIND, document)
    return [] if checked.ok else [f"{item['path']} {item['message']}" for item in checked.error["violations"]]


def test_the_kind_is_registered_everywhere() -> None:
    assert TASK_IMPLEMENTER == KIND and dict(PLAN_MODELS) == {KIND: TaskImplementerOutput}
    assert KINDS[KIND] is TaskImplementerOutput
    assert KIND in KINDS_WITH_STATUS and KIND in CONTRACT_KINDS
    assert load_schema(KIND)["properties"]["agent"]["enum"] == [KIND]
    assert problems(example()) == []


def test_a_failed_answer_needs_its_error() -> None:
    document = {"status": "failed", "agent": KIND}
    assert problems(document) == ["$ a failed answer needs an error object"]
    assert problems({**document, "error": {"code": "NO_ACCESS", "message": "read-only checkout"}}) == []


def test_a_successful_answer_gives_each_task_once() -> None:
    assert problems(example(tasks=[])) == ["$ a successful answer gives the outcome of each task"]
    done = {"task_id": 4, "status": "done"}
    assert problems(example(tasks=[done, {**done, "files": ["a.py"]}])) == ["$ each task once; repeated: 4"]


def test_task_rules() -> None:
    assert problems(example(tasks=[{"task_id": 5, "status": "failed"}])) == [
        "$.tasks[0] a failed task needs its reason"
    ]
    assert problems(example(tasks=[{"task_id": 5, "status": "failed", "reason": "  "}])) == [
        "$.tasks[0] a failed task needs its reason"
    ]
    assert problems(example(tasks=[{"task_id": 0, "status": "done"}]))[0].startswith("$.tasks[0].task_id")
    assert problems(example(tasks=[{"task_id": "4", "status": "done"}]))[0].startswith("$.tasks[0].task_id")
    assert problems(example(tasks=[{"task_id": 4, "status": "skipped"}]))[0].startswith("$.tasks[0].status")
    assert problems(example(files_modified=["/etc/passwd"]))[0].startswith("$.files_modified[0]")
    assert problems(example(agent="implementer")) == ["$.agent must be task-implementer; got 'implementer'"]


def test_agent_names_and_paths_are_made_canonical() -> None:
    raw = (
        '{"status": "success", "agent": "fixloop:Task-Implementer", "files_modified": ["./src/a.py"], '
        '"tasks": [{"task_id": 1, "status": "done", "files": ["./src/a.py"]}]}'
    )
    checked = check_text(KIND, raw)
    assert checked.document is not None
    assert checked.document["agent"] == KIND
    assert checked.document["tasks"][0]["files"] == checked.document["files_modified"] == ["src/a.py"]


def test_the_contract_text_names_every_field() -> None:
    text = contract_text(KIND)
    assert text.startswith(f"Your final message is ONLY one JSON object, the {KIND} contract")
    for name in TaskImplementerOutput.model_fields:
        assert re.search(rf"^- {name} \((required|optional); ", text, re.M), name
    assert '  - status (required; "done" | "failed"): ' in text


def test_the_agent_file_holds_its_focus_not_its_contract() -> None:
    text = (ROOT / "agents" / f"{KIND}.md").read_text(encoding="utf-8")
    _, frontmatter, body = text.split("---\n", 2)
    meta = yaml.safe_load(frontmatter)
    assert (meta["name"], meta["model"]) == (KIND, "sonnet")
    assert {tool.strip() for tool in meta["tools"].split(",")} == {"Read", "Edit", "Write", "Bash"}
    assert f'`"agent": "{KIND}"`' in body
    lines = [re.sub(r"^\s*- [a-z_]+ \([^)]*\): ?", "", line) for line in contract_text(KIND).splitlines()]
    assert [line for line in lines if len(line) >= 20 and line in body] == []
    assert "ONLY one JSON" not in body and len(body) <= 1300
