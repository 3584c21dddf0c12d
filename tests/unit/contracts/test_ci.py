"""The CI analyst's contract: what its answer must hold, and the agent file that goes with it."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml

from fixloop.contracts.check import check_document, check_text
from fixloop.contracts.ci import CI_ANALYST, CI_CATEGORIES, CI_MODELS, FIXABLE_CATEGORIES, CiAnalystOutput
from fixloop.contracts.examples import KIND_EXAMPLES
from fixloop.contracts.kinds import KINDS, KINDS_WITH_STATUS
from fixloop.contracts.prompt_text import CONTRACT_KINDS, contract_text
from fixloop.contracts.schemagen import load_schema

ROOT = Path(__file__).resolve().parents[3]
KIND = "ci-analyst"


def example(**changes: Any) -> dict[str, Any]:
    document = copy.deepcopy(KIND_EXAMPLES[KIND])
    document.update(changes)
    return document


def failure(**changes: Any) -> dict[str, Any]:
    return {"failure_id": "F1", "category": "test", "confidence": 90, "summary": "it fails", **changes}


def problems(document: Any) -> list[str]:
    checked = check_document(KIND, document)
    return [] if checked.ok else [f"{item['path']} {item['message']}" for item in checked.error["violations"]]


def test_the_kind_is_registered_everywhere() -> None:
    assert CI_ANALYST == KIND and dict(CI_MODELS) == {KIND: CiAnalystOutput}
    assert KINDS[KIND] is CiAnalystOutput
    assert KIND in KINDS_WITH_STATUS and KIND in CONTRACT_KINDS
    schema = load_schema(KIND)
    assert schema["properties"]["agent"]["enum"] == [KIND]
    assert schema["$defs"]["CiFailure"]["properties"]["category"]["enum"] == list(CI_CATEGORIES)
    assert problems(example()) == []


def test_the_categories() -> None:
    assert CI_CATEGORIES == ("test", "build", "lint", "type", "flaky", "infrastructure")
    assert FIXABLE_CATEGORIES == ("test", "build", "lint", "type")
    assert problems(example(failures=[failure(category="network")]))[0].startswith("$.failures[0].category")


def test_a_failed_answer_needs_its_error() -> None:
    document = {"status": "failed", "agent": KIND}
    assert problems(document) == ["$ a failed answer needs an error object"]
    assert problems({**document, "error": {"code": "NO_ACCESS", "message": "no checkout"}}) == []


def test_a_successful_answer_classifies_each_failure_once() -> None:
    assert problems(example(failures=[])) == ["$ a successful analysis classifies at least one failure"]
    assert problems(example(failures=[failure(), failure(category="lint")])) == [
        "$ each failure once; repeated: F1"
    ]


def test_failure_rules() -> None:
    assert problems(example(failures=[failure(failure_id="1")]))[0].startswith("$.failures[0].failure_id")
    assert problems(example(failures=[failure(failure_id="F0")]))[0].startswith("$.failures[0].failure_id")
    assert problems(example(failures=[failure(confidence=101)]))[0].startswith("$.failures[0].confidence")
    assert problems(example(failures=[failure(confidence="90")]))[0].startswith("$.failures[0].confidence")
    assert problems(example(failures=[failure(summary=" ")]))[0].startswith("$.failures[0].summary")
    assert problems(example(failures=[failure(file="/etc/passwd")]))[0].startswith("$.failures[0].file")
    assert problems(example(failures=[failure(test={"file": "t.py"})]))[0].startswith(
        "$.failures[0].test.name"
    )
    assert problems(example(agent="failure-analyst")) == ["$.agent must be ci-analyst; got 'failure-analyst'"]


def test_agent_names_and_paths_are_made_canonical() -> None:
    raw = (
        '{"status": "success", "agent": "fixloop:CI-Analyst", "failures": [{"failure_id": " F2 ", '
        '"category": "type", "confidence": 70, "summary": "x", "file": "./src/a.ts"}]}'
    )
    checked = check_text(KIND, raw)
    assert checked.document is not None
    assert checked.document["agent"] == KIND
    assert (checked.document["failures"][0]["failure_id"], checked.document["failures"][0]["file"]) == (
        "F2",
        "src/a.ts",
    )


def test_the_contract_text_names_every_field() -> None:
    text = contract_text(KIND)
    assert text.startswith(f"Your final message is ONLY one JSON object, the {KIND} contract")
    for name in CiAnalystOutput.model_fields:
        assert re.search(rf"^- {name} \((required|optional); ", text, re.M), name
    assert (
        '  - category (required; "test" | "build" | "lint" | "type" | "flaky" | "infrastructure"): ' in text
    )
    assert "  - confidence (required; integer from 0 to 100): " in text


def test_the_agent_file_holds_its_focus_not_its_contract() -> None:
    text = (ROOT / "agents" / f"{KIND}.md").read_text(encoding="utf-8")
    _, frontmatter, body = text.split("---\n", 2)
    meta = yaml.safe_load(frontmatter)
    assert (meta["name"], meta["model"]) == (KIND, "sonnet")
    assert 20 <= len(meta["description"]) <= 100
    assert {tool.strip() for tool in meta["tools"].split(",")} == {"Read", "Bash"}
    assert f'`"agent": "{KIND}"`' in body
    lines = [re.sub(r"^\s*- [a-z_]+ \([^)]*\): ?", "", line) for line in contract_text(KIND).splitlines()]
    assert [line for line in lines if len(line) >= 20 and line in body] == []
    assert "ONLY one JSON" not in body and len(body) <= 1300
