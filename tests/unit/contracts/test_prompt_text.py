"""contract_text and review_guide_text: the agent-facing contract, generated from the models."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
import types
import typing
from typing import Any, Literal

import pytest
from helpers_imports import LIB
from pydantic import BaseModel, Field

from fixloop.contracts import prompt_text
from fixloop.contracts.bugfix import (
    Alternative,
    ClassifiedFailure,
    Factors,
    FailureAnalystOutput,
    FileChange,
    FixDesignerOutput,
    ImplementerOutput,
    NamedTest,
    RootCause,
    RootCauseAnalystOutput,
)
from fixloop.contracts.ci import CiAnalystOutput, CiFailure
from fixloop.contracts.common import AgentError
from fixloop.contracts.coordinator import LoopConfig
from fixloop.contracts.fixer import FixAttempt, FixerOutput
from fixloop.contracts.plan import TaskImplementerOutput, TaskOutcome
from fixloop.contracts.pr import ClassifierOutput, ReplyWriterOutput, ThreadLabel, ThreadReply
from fixloop.contracts.prompt_text import (
    CONFIDENCE_SCALE,
    CONTRACT_KINDS,
    TEXTS_FILE,
    contract_text,
    rendered_contract_text,
    review_guide_text,
)
from fixloop.contracts.reviewer import ReviewerIssue, ReviewerOutput
from fixloop.contracts.schemagen import load_schema
from fixloop.contracts.verifier import (
    AccuracyCheck,
    MissingIssue,
    QualityAssessment,
    RuleComplianceCheck,
    VerificationResult,
    VerifierOutput,
)
from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT
from fixloop.core.errors import FixloopError

MODELS: dict[str, type[BaseModel]] = {
    "reviewer": ReviewerOutput,
    "fixer": FixerOutput,
    "verifier": VerifierOutput,
    "failure-analyst": FailureAnalystOutput,
    "root-cause-analyst": RootCauseAnalystOutput,
    "fix-designer": FixDesignerOutput,
    "implementer": ImplementerOutput,
    "comment-classifier": ClassifierOutput,
    "reply-writer": ReplyWriterOutput,
    "task-implementer": TaskImplementerOutput,
    "ci-analyst": CiAnalystOutput,
}
CONTRACT_CLASSES: list[type[BaseModel]] = [
    ReviewerOutput,
    ReviewerIssue,
    AgentError,
    FixerOutput,
    FixAttempt,
    VerifierOutput,
    VerificationResult,
    AccuracyCheck,
    RuleComplianceCheck,
    QualityAssessment,
    MissingIssue,
    FailureAnalystOutput,
    ClassifiedFailure,
    RootCauseAnalystOutput,
    RootCause,
    Factors,
    FixDesignerOutput,
    FileChange,
    NamedTest,
    Alternative,
    ImplementerOutput,
    ClassifierOutput,
    ThreadLabel,
    ReplyWriterOutput,
    ThreadReply,
    TaskImplementerOutput,
    TaskOutcome,
    CiAnalystOutput,
    CiFailure,
]
LINE = re.compile(
    r"^(?P<indent> *)- (?P<name>[a-z_]+) \((?P<flag>required|optional); (?P<shape>[^)]*)\)"
    r"(?::\s(?P<meaning>.*))?$"
)
MAX_DESCRIPTION = 150
MAX_CONTRACT_CHARS = 3200
MAX_GUIDE_CHARS = 1000


def parsed(text: str) -> list[tuple[int, str, str, str, str]]:
    """(depth, name, flag, shape, meaning) of every field line, in order."""
    rows = []
    for line in text.splitlines():
        match = LINE.match(line)
        if match:
            depth = len(match["indent"]) // 2
            rows.append((depth, match["name"], match["flag"], match["shape"], match["meaning"] or ""))
    return rows


def nested_model(annotation: Any) -> type[BaseModel] | None:
    while True:
        origin = typing.get_origin(annotation)
        if origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = members[0]
        elif origin is typing.Annotated or origin is list:
            annotation = typing.get_args(annotation)[0]
        else:
            break
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def expected_rows(model: type[BaseModel], depth: int = 0) -> list[tuple[int, str, str, str]]:
    rows = []
    for name, info in model.model_fields.items():
        flag = "required" if info.is_required() else "optional"
        rows.append((depth, name, flag, info.description or ""))
        inner = nested_model(info.annotation)
        if inner is not None:
            rows += expected_rows(inner, depth + 1)
    return rows


def literal_values(annotation: Any) -> list[str]:
    while typing.get_origin(annotation) in (typing.Union, types.UnionType, typing.Annotated):
        annotation = typing.get_args(annotation)[0]
    return [str(v) for v in typing.get_args(annotation)] if typing.get_origin(annotation) is Literal else []


# ---- contract_text ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", CONTRACT_KINDS)
def test_every_field_appears_in_order_with_its_flag_and_meaning(kind: str) -> None:
    rows = [(depth, name, flag, meaning) for depth, name, flag, _, meaning in parsed(contract_text(kind))]
    assert rows == expected_rows(MODELS[kind])


@pytest.mark.parametrize("kind", CONTRACT_KINDS)
def test_every_line_is_a_header_or_a_field(kind: str) -> None:
    header, fields_line, *rest = contract_text(kind).splitlines()
    assert (
        header == f"Your final message is ONLY one JSON object, the {kind} contract: no prose, no code fence."
    )
    assert fields_line.startswith("Fields")
    assert len(parsed("\n".join(rest))) == len(rest)


def test_every_contract_field_has_a_short_description() -> None:
    for model in CONTRACT_CLASSES:
        for name, info in model.model_fields.items():
            assert info.description, f"{model.__name__}.{name} has no description"
            assert len(info.description) <= MAX_DESCRIPTION, f"{model.__name__}.{name}"


def reachable(model: type[BaseModel]) -> list[type[BaseModel]]:
    """The model and every model nested in it, each once."""
    found = [model]
    for info in model.model_fields.values():
        inner = nested_model(info.annotation)
        if inner is not None:
            found += [cls for cls in reachable(inner) if cls not in found]
    return found


@pytest.mark.parametrize("kind", CONTRACT_KINDS)
def test_the_descriptions_are_in_the_generated_schemas(kind: str) -> None:
    schema = load_schema(kind)
    root, *nested = reachable(MODELS[kind])
    places = [(root, schema), *((cls, schema["$defs"][cls.__name__]) for cls in nested)]
    assert {cls for cls, _ in places} <= set(CONTRACT_CLASSES)
    for cls, part in places:
        for name, info in cls.model_fields.items():
            assert part["properties"][name]["description"] == info.description, (cls.__name__, name)


def test_literal_values_and_types_are_shown() -> None:
    shapes = {
        (kind, depth, name): shape
        for kind in CONTRACT_KINDS
        for depth, name, _, shape, _ in parsed(contract_text(kind))
    }
    assert shapes["reviewer", 0, "status"] == '"success" | "failed"'
    assert shapes["reviewer", 1, "severity"] == '"critical" | "high" | "medium" | "low"'
    assert shapes["reviewer", 1, "confidence"] == "integer from 0 to 100"
    assert shapes["reviewer", 1, "line"] == "integer from 1 to 10000000"
    assert shapes["reviewer", 1, "auto_fixable"] == "true | false"
    assert shapes["reviewer", 1, "id"] == "non-empty string"
    assert shapes["reviewer", 0, "issues"] == "array of objects"
    assert shapes["reviewer", 0, "positive_observations"] == "array of strings"
    assert shapes["reviewer", 0, "error"] == "object"
    assert shapes["fixer", 0, "files_modified"] == "array of non-empty strings"
    assert shapes["fixer", 1, "status"] == '"succeeded" | "failed" | "skipped"'
    assert shapes["verifier", 2, "quality_level"] == '"EXCELLENT" | "GOOD" | "ACCEPTABLE" | "POOR"'
    for model in CONTRACT_CLASSES:
        for name, info in model.model_fields.items():
            for value in literal_values(info.annotation):
                assert any(f'"{value}"' in shape for (_, _, n), shape in shapes.items() if n == name), value


def test_the_agent_field_names_the_agents_allowed() -> None:
    shapes = {kind: parsed(contract_text(kind))[1] for kind in CONTRACT_KINDS}
    assert shapes["reviewer"][3] == " | ".join(f'"{name}"' for name in REVIEWER_AGENTS)
    assert shapes["fixer"][3] == f'"{FIXER_AGENT}"'
    assert shapes["verifier"][3] == f'"{VERIFIER_AGENT}"'
    for kind in CONTRACT_KINDS:
        assert load_schema(kind)["properties"]["agent"]["enum"] == shapes[kind][3].replace('"', "").split(
            " | "
        )


def test_a_field_added_to_a_model_appears_without_editing_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    class Budget(BaseModel):
        minutes: int = Field(ge=1, description="Time you spent.")

    class LongerFixAttempt(FixAttempt):
        attempts: int = Field(default=1, ge=1, le=3, description="How often you tried this fix.")

    class LongerFixerOutput(FixerOutput):
        results: list[LongerFixAttempt] = Field(  # type: ignore[assignment]
            default_factory=list, description="One object per issue given."
        )
        budget: Budget = Field(description="What the fix cost.")

    monkeypatch.setitem(prompt_text.CONTRACT_MODELS, "fixer", LongerFixerOutput)
    rows = parsed(rendered_contract_text("fixer"))
    assert (1, "attempts", "optional", "integer from 1 to 3", "How often you tried this fix.") in rows
    assert (0, "budget", "required", "object", "What the fix cost.") in rows
    assert rows[-1] == (1, "minutes", "required", "integer >= 1", "Time you spent.")


@pytest.mark.parametrize("kind", CONTRACT_KINDS)
def test_the_checked_in_text_is_the_models_rendering(kind: str) -> None:
    assert contract_text(kind) == rendered_contract_text(kind)


def test_the_checked_in_texts_are_every_kinds_in_order() -> None:
    assert list(json.loads(TEXTS_FILE.read_text(encoding="utf-8"))) == list(CONTRACT_KINDS)


def test_a_contract_text_is_read_without_loading_pydantic() -> None:
    code = (
        "import sys; from fixloop.contracts.prompt_text import contract_text, review_guide_text; "
        "text = contract_text('verifier') + review_guide_text(); print(len(text), 'pydantic' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": str(LIB)}
    )
    assert done.stdout.split() == [str(len(contract_text("verifier") + review_guide_text())), "False"]


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(FixloopError) as caught:
        contract_text("event")
    assert caught.value.code == "UNKNOWN_KIND"
    assert caught.value.details["allowed"] == [
        "reviewer",
        "fixer",
        "verifier",
        "failure-analyst",
        "root-cause-analyst",
        "fix-designer",
        "implementer",
        "comment-classifier",
        "reply-writer",
        "task-implementer",
        "ci-analyst",
    ]


@pytest.mark.parametrize("kind", CONTRACT_KINDS)
def test_the_contract_is_compact(kind: str) -> None:
    assert len(contract_text(kind)) <= MAX_CONTRACT_CHARS


# ---- review_guide_text ------------------------------------------------------------------------------


def test_one_confidence_scale_from_0_to_100() -> None:
    bands = [(low, high) for low, high, _ in CONFIDENCE_SCALE]
    assert bands[0][0] == 0 and bands[-1][1] == 100
    assert all(high + 1 == low for (_, high), (low, _) in itertools.pairwise(bands))
    guide = review_guide_text()
    shown = re.findall(r"^- (\d+)-(\d+): ", guide, re.M)
    assert [(int(low), int(high)) for low, high in shown] == bands


def test_the_threshold_is_the_prompts_or_the_configurations_default() -> None:
    assert LoopConfig.model_fields["confidence_threshold"].default == 80
    assert "report only issues with confidence >= 80:" in review_guide_text()
    assert "report only issues with confidence >= 65:" in review_guide_text(65)


def test_the_guide_covers_scope_and_read_only_use_of_bash() -> None:
    guide = review_guide_text()
    assert guide.startswith("How to review:\n")
    assert "Review the changed lines and the code they touch" in guide
    assert "use Bash only for read-only git commands" in guide
    assert len(guide) <= MAX_GUIDE_CHARS
