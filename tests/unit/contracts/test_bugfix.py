"""The bugfix agents' contracts: what each answer must hold, and the text the agents are sent."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixloop.contracts.bugfix import (
    ALL_CATEGORIES,
    BUGFIX_AGENTS,
    BUGFIX_MODELS,
    CATEGORIES,
    Category,
    categories_for,
)
from fixloop.contracts.check import check_document, check_text
from fixloop.contracts.examples import KIND_EXAMPLES
from fixloop.contracts.kinds import KINDS, KINDS_WITH_STATUS
from fixloop.contracts.prompt_text import CONTRACT_KINDS, contract_text
from fixloop.contracts.schemagen import load_schema

ROOT = Path(__file__).resolve().parents[3]
FAILED = {"code": "NO_INPUT", "message": "The task named no failure."}


def example(kind: str, **changes: Any) -> dict[str, Any]:
    document = copy.deepcopy(KIND_EXAMPLES[kind])
    document.update(changes)
    return document


def problems(kind: str, document: Any) -> list[str]:
    checked = check_document(kind, document)
    return [] if checked.ok else [f"{item['path']} {item['message']}" for item in checked.error["violations"]]


def test_the_four_kinds_are_registered_everywhere() -> None:
    assert (
        tuple(BUGFIX_MODELS)
        == BUGFIX_AGENTS
        == (
            "failure-analyst",
            "root-cause-analyst",
            "fix-designer",
            "implementer",
        )
    )
    for kind in BUGFIX_AGENTS:
        assert KINDS[kind] is BUGFIX_MODELS[kind]
        assert kind in KINDS_WITH_STATUS and kind in CONTRACT_KINDS
        assert load_schema(kind)["properties"]["agent"]["enum"] == [kind]
        assert check_document(kind, example(kind)).ok


def test_categories_per_stack() -> None:
    assert set(ALL_CATEGORIES) == set(Category.__args__)  # type: ignore[attr-defined]
    assert categories_for("backend") == ("assertion", "exception", "data-or-fixture", "contract", "config")
    assert categories_for("e2e") == CATEGORIES["e2e"]
    assert categories_for("mixed") == categories_for(None) == ALL_CATEGORIES


@pytest.mark.parametrize("kind", BUGFIX_AGENTS)
def test_a_failed_answer_needs_its_error(kind: str) -> None:
    document = {"status": "failed", "agent": kind}
    assert problems(kind, document) == ["$ a failed answer needs an error object"]
    assert problems(kind, {**document, "error": FAILED}) == []


@pytest.mark.parametrize(
    ("kind", "changes", "expected"),
    [
        ("failure-analyst", {"failures": []}, "$ a successful analysis classifies at least one failure"),
        ("root-cause-analyst", {"factors": None}, "$ a successful diagnosis needs root_cause and factors"),
        ("fix-designer", {"test": None}, "$ a successful design needs summary, changes and test"),
        ("implementer", {"stage": None}, "$ a successful answer names its stage"),
        ("implementer", {"stage": "test", "test": None}, "$ stage test needs the test"),
        ("implementer", {"files_modified": []}, "$ stage fix needs files_modified"),
    ],
)
def test_a_successful_answer_is_complete(kind: str, changes: dict[str, Any], expected: str) -> None:
    assert problems(kind, example(kind, **changes)) == [expected]


def test_field_rules() -> None:
    analysis = example("failure-analyst")
    analysis["failures"][0]["category"] = "typo"
    assert problems("failure-analyst", analysis)[0].startswith("$.failures[0].category must be one of")
    diagnosis = example("root-cause-analyst")
    diagnosis["factors"]["clarity"] = 101
    diagnosis["root_cause"]["evidence"] = []
    assert [item.split(" ", 1)[0] for item in problems("root-cause-analyst", diagnosis)] == [
        "$.root_cause.evidence",
        "$.factors.clarity",
    ]
    assert problems("implementer", example("implementer", files_modified=["/etc/passwd"])) != []
    assert problems("fix-designer", example("fix-designer", agent="implementer")) == [
        "$.agent must be fix-designer; got 'implementer'"
    ]


def test_agent_names_are_made_canonical() -> None:
    raw = (
        '{"status": "success", "agent": "fixloop:Implementer", "stage": "test",'
        ' "test": {"file": "./tests/test_a.py", "name": "test_a"}}'
    )
    checked = check_text("implementer", raw)
    assert checked.document is not None
    assert (checked.document["agent"], checked.document["test"]["file"]) == ("implementer", "tests/test_a.py")


@pytest.mark.parametrize("kind", BUGFIX_AGENTS)
def test_the_contract_text_names_every_field(kind: str) -> None:
    text = contract_text(kind)
    assert text.startswith(f"Your final message is ONLY one JSON object, the {kind} contract")
    for name in BUGFIX_MODELS[kind].model_fields:
        assert re.search(rf"^- {name} \((required|optional); ", text, re.M), name
    assert f'- agent (required; "{kind}"): Your agent name.' in text


def descriptions(kind: str) -> list[str]:
    """Every description of the contract's fields that is long enough to count as a copy."""
    lines = [re.sub(r"^\s*- [a-z_]+ \([^)]*\): ?", "", line) for line in contract_text(kind).splitlines()]
    return [line for line in lines if len(line) >= 20]


@pytest.mark.parametrize("kind", BUGFIX_AGENTS)
def test_the_agent_file_holds_its_focus_not_its_contract(kind: str) -> None:
    text = (ROOT / "agents" / f"{kind}.md").read_text(encoding="utf-8")
    _, frontmatter, body = text.split("---\n", 2)
    meta = yaml.safe_load(frontmatter)
    assert (meta["name"], meta["model"]) == (kind, "sonnet")
    assert 20 <= len(meta["description"]) <= 100
    tools = {tool.strip() for tool in meta["tools"].split(",")}
    assert tools == ({"Read", "Edit", "Write", "Bash"} if kind == "implementer" else {"Read", "Bash"})
    assert f'`"agent": "{kind}"`' in body
    assert [line for line in descriptions(kind) if line in body] == []
    assert "ONLY one JSON" not in body and len(body) <= 1300
