"""The models-free check of the review agents' answers (fixloop.contracts.canonical) either declines or gives
exactly the document the pydantic model gives, and it takes every well-formed canonical answer."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from helpers_imports import modules_loaded_by
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixloop.contracts import common
from fixloop.contracts.canonical import MAX_LINE, REQUIRED_FIELDS, SEVERITIES, canonical_answer
from fixloop.contracts.check import Checked, _checked, check_text, parse_raw
from fixloop.contracts.prompt_text import contract_model
from fixloop.contracts.validation import KIND_EXAMPLES
from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT
from fixloop.core.redact import redact_value

KINDS = ("reviewer", "verifier", "fixer")
Draw = Any  # hypothesis' draw function


def through_the_model(kind: str, raw: str) -> Checked:
    """What answer checking gave before the models-free path: the model's validation, its dump or error."""
    return _checked(kind, parse_raw(kind, raw))


def assert_same_outcome(kind: str, document: Any) -> dict[str, Any] | None:
    """check_text of the document equals the model's outcome, the same bytes once dumped; the canonical
    document (or None when the fast path declined)."""
    raw = json.dumps(document)
    expected = through_the_model(kind, raw)
    fast = canonical_answer(kind, redact_value(json.loads(raw)))
    if fast is not None:
        assert expected.ok, expected.error
        assert json.dumps(fast) == json.dumps(expected.document)
    checked = check_text(kind, raw)
    assert checked == expected
    assert json.dumps(checked.document) == json.dumps(expected.document)
    return fast


# Values: each field's well-formed values, and (near) values a model accepts after normalising or refuses.
WORD = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 _.:-]{0,10}[A-Za-z0-9]|[A-Za-z0-9]", fullmatch=True)
TEXT = st.text(max_size=12)
PATH = st.from_regex(r"(\./)?[a-z]{1,5}(/[a-z_]{1,5}){0,2}\.py", fullmatch=True)
ODD_STRINGS = st.sampled_from(
    [
        "",
        " ",
        " a",
        "a ",
        "\ta",
        "a\n",
        "\u00a0a",
        "a\u3000",
        "\x1ca",
        "a\x1f",
        "\u200ba",
        "\u2028",
        "\u0085a",
    ]
)
ODD_VALUES = st.sampled_from([None, True, False, 0, 1, -1, 1.0, 80.5, "1", "true", [], {}, ["a"], {"a": 1}])
ODD_PATHS = st.sampled_from(
    [
        "/etc/passwd",
        "../x.py",
        "a/../b.py",
        ".git/config",
        "a/.GIT/x",
        "C:/x.py",
        "a\\b.py",
        ".",
        "./",
        "a\nb",
    ]
)
ODD_SEVERITIES = st.sampled_from(["Medium", " low", "HIGH ", "info", "critical\n"])
ODD_AGENTS = st.sampled_from(
    [
        "fixloop:code-reviewer",
        "review-code-reviewer",
        " code-reviewer",
        "Code-Reviewer",
        "fixloop:review-fixer",
        "review-verifier",
        "review-fixer",
        "other-agent",
        "x:code-reviewer",
        "coordinator",
    ]
)
SUPERVISOR_KEYS = (
    "relevantFile",
    "existingCode",
    "suggestionContent",
    "improvedCode",
    "label",
    "suggestionLine",
)
EXTRA_KEYS = st.sampled_from(["extra", "ID", "notes", *SUPERVISOR_KEYS])


def near(draw: Draw, valid: st.SearchStrategy[Any], odd: st.SearchStrategy[Any], odds: bool) -> Any:
    if odds and draw(st.integers(0, 5)) == 0:
        return draw(st.one_of(odd, ODD_STRINGS, ODD_VALUES))
    return draw(valid)


def near_list(
    draw: Draw, valid: st.SearchStrategy[Any], odd: st.SearchStrategy[Any], odds: bool, most: int
) -> list[Any]:
    return [near(draw, valid, odd, odds) for _ in range(draw(st.integers(0, most)))]


def shape(draw: Draw, fields: dict[str, Any], optional: tuple[str, ...], odds: bool) -> dict[str, Any]:
    """The object: optional fields left out at random; with odds, a required one dropped or an extra added."""
    document = {k: v for k, v in fields.items() if k not in optional or draw(st.booleans())}
    if odds and document and draw(st.integers(0, 7)) == 0:
        del document[draw(st.sampled_from(sorted(document)))]
    if odds and draw(st.integers(0, 7)) == 0:
        document[draw(EXTRA_KEYS)] = draw(st.one_of(WORD, ODD_VALUES))
    return document


def agent_error(draw: Draw, odds: bool) -> dict[str, Any]:
    fields = {
        "code": near(draw, WORD, ODD_STRINGS, odds),
        "message": near(draw, WORD, ODD_STRINGS, odds),
        "phase": near(draw, TEXT, ODD_VALUES, odds),
        "recoverable": near(draw, st.booleans(), ODD_VALUES, odds),
        "stack_trace": near(draw, st.none() | TEXT, ODD_VALUES, odds),
    }
    return shape(draw, fields, ("phase", "recoverable", "stack_trace"), odds)


@st.composite
def reviewer_answer(draw: Draw, odds: bool) -> dict[str, Any]:
    issues = []
    for number in range(draw(st.integers(0, 4))):
        line = draw(st.integers(1, MAX_LINE))
        end_line = draw(st.none() | st.integers(line, MAX_LINE))
        fields = {
            "id": near(draw, st.just(f"X-{number}"), st.sampled_from(["X-0", "X-1"]), odds),
            "severity": near(draw, st.sampled_from(sorted(SEVERITIES)), ODD_SEVERITIES, odds),
            "confidence": near(draw, st.integers(0, 100), st.sampled_from([101, -1, 10**20]), odds),
            "file": near(draw, PATH, ODD_PATHS, odds),
            "line": near(
                draw, st.just(line), st.sampled_from([0, MAX_LINE + 1, str(line), f" {line}"]), odds
            ),
            "end_line": near(draw, st.just(end_line), st.sampled_from([0, line - 1, MAX_LINE + 1]), odds),
            "category": near(draw, WORD, ODD_STRINGS, odds),
            "rule": near(draw, st.none() | TEXT, ODD_VALUES, odds),
            "description": near(draw, WORD, ODD_STRINGS, odds),
            "suggestion": near(draw, TEXT, ODD_VALUES, odds),
            "auto_fixable": near(draw, st.booleans(), ODD_VALUES, odds),
            "existing_code": near(draw, st.none() | TEXT, ODD_VALUES, odds),
            "improved_code": near(draw, st.none() | TEXT, ODD_VALUES, odds),
        }
        issues.append(shape(draw, fields, ("end_line", "rule", "existing_code", "improved_code"), odds))
    failed = draw(st.booleans())
    fields = {
        "status": near(draw, st.just("failed" if failed else "success"), st.sampled_from(["Success"]), odds),
        "agent": near(draw, st.sampled_from(REVIEWER_AGENTS), ODD_AGENTS, odds),
        "issues": issues,
        "positive_observations": near_list(draw, TEXT, ODD_VALUES, odds, 3),
        "error": agent_error(draw, odds) if failed else None,
    }
    return shape(draw, fields, ("issues", "positive_observations") + (() if failed else ("error",)), odds)


@st.composite
def verifier_answer(draw: Draw, odds: bool) -> dict[str, Any]:
    accuracy = []
    for number in range(draw(st.integers(0, 3))):
        deleted = draw(st.booleans())
        fields = {
            "issue_id": near(draw, st.just(f"X-{number}"), ODD_STRINGS, odds),
            "accuracy_status": near(
                draw,
                st.sampled_from(["CORRECT", "INCORRECT", "PARTIALLY_CORRECT"]),
                st.sampled_from(["correct", "WRONG"]),
                odds,
            ),
            "evidence": near(draw, WORD, ODD_STRINGS, odds),
            "deletion_required": near(draw, st.just(deleted), ODD_VALUES, odds),
            "deletion_reason": near(draw, WORD if deleted else st.none() | TEXT, ODD_STRINGS, odds),
        }
        accuracy.append(shape(draw, fields, () if deleted else ("deletion_reason",), odds))
    compliance = []
    for number in range(draw(st.integers(0, 3))):
        fields = {
            "issue_id": near(draw, st.just(f"X-{number}"), ODD_STRINGS, odds),
            "compliance_status": near(draw, st.sampled_from(["COMPLIANT", "VIOLATED"]), ODD_STRINGS, odds),
            "violated_rules": near_list(draw, TEXT, ODD_VALUES, odds, 2),
            "deletion_required": near(draw, st.booleans(), ODD_VALUES, odds),
            "violation_reason": near(draw, st.none() | TEXT, ODD_VALUES, odds),
        }
        compliance.append(shape(draw, fields, ("violated_rules", "violation_reason"), odds))
    missing = [
        shape(
            draw,
            {
                "description": near(draw, WORD, ODD_STRINGS, odds),
                "evidence": near(draw, TEXT, ODD_VALUES, odds),
                "suggested_severity": near(draw, st.sampled_from(sorted(SEVERITIES)), ODD_SEVERITIES, odds),
            },
            (),
            odds,
        )
        for _ in range(draw(st.integers(0, 2)))
    ]
    quality = {
        "overall_score": near(draw, st.integers(0, 100), st.sampled_from([101, -1, 50.0, "50"]), odds),
        "quality_level": near(
            draw,
            st.sampled_from(["EXCELLENT", "GOOD", "ACCEPTABLE", "POOR"]),
            st.sampled_from(["good", "BAD"]),
            odds,
        ),
        "strengths": near_list(draw, TEXT, ODD_VALUES, odds, 2),
        "weaknesses": near_list(draw, TEXT, ODD_VALUES, odds, 2),
        "missing_issues": missing,
    }
    result = {
        "accuracy_check": accuracy,
        "rule_compliance_check": compliance,
        "quality_assessment": shape(draw, quality, ("strengths", "weaknesses", "missing_issues"), odds),
    }
    failed = draw(st.booleans())
    fields = {
        "status": near(draw, st.just("failed" if failed else "success"), ODD_STRINGS, odds),
        "agent": near(draw, st.sampled_from([VERIFIER_AGENT, "fixloop:review-verifier"]), ODD_AGENTS, odds),
        "task_id": near(draw, st.none() | TEXT, ODD_VALUES, odds),
        "verification_result": None
        if failed
        else shape(draw, result, ("accuracy_check", "rule_compliance_check"), odds),
        "error": agent_error(draw, odds) if failed else None,
    }
    optional = ("task_id", "verification_result") if failed else ("task_id", "error")
    return shape(draw, fields, optional, odds)


@st.composite
def fixer_answer(draw: Draw, odds: bool) -> dict[str, Any]:
    results = []
    for number in range(draw(st.integers(0, 3))):
        status = draw(st.sampled_from(["succeeded", "failed", "skipped"]))
        fields = {
            "issue_id": near(draw, st.just(f"X-{number}"), ODD_STRINGS, odds),
            "status": near(draw, st.just(status), st.sampled_from(["Succeeded", "done"]), odds),
            "reason": near(draw, st.none() | TEXT if status == "succeeded" else WORD, ODD_STRINGS, odds),
            "files": near_list(draw, PATH, ODD_PATHS, odds, 2),
        }
        results.append(shape(draw, fields, ("files",) + (("reason",) if status == "succeeded" else ()), odds))
    status = draw(st.sampled_from(["success", "partial", "failed"]))
    with_error = (status == "failed" and not results) or draw(st.booleans())
    fields = {
        "status": near(draw, st.just(status), st.sampled_from(["Success", "ok"]), odds),
        "agent": near(draw, st.sampled_from([FIXER_AGENT, "fixloop:review-fixer"]), ODD_AGENTS, odds),
        "results": results,
        "files_modified": near_list(draw, PATH, ODD_PATHS, odds, 3),
        "error": agent_error(draw, odds) if with_error else None,
    }
    results_optional = ("results",) if with_error or status != "failed" else ()
    optional = ("files_modified", *results_optional) + (() if with_error else ("error",))
    return shape(draw, fields, optional, odds)


ANSWERS = {"reviewer": reviewer_answer, "verifier": verifier_answer, "fixer": fixer_answer}


def mutate(draw: Draw, document: Any) -> Any:
    """One change somewhere in the document: a value replaced, a field removed or added, an item doubled."""
    if isinstance(document, dict) and document and draw(st.integers(0, 2)) > 0:
        key = draw(st.sampled_from(sorted(document)))
        document[key] = mutate(draw, document[key])
        return document
    if isinstance(document, list) and document and draw(st.booleans()):
        index = draw(st.integers(0, len(document) - 1))
        document[index] = mutate(draw, document[index])
        return document
    choice = draw(st.integers(0, 3))
    if choice == 0 and isinstance(document, dict) and document:
        del document[draw(st.sampled_from(sorted(document)))]
        return document
    if choice == 1 and isinstance(document, dict):
        document[draw(EXTRA_KEYS)] = draw(st.one_of(WORD, ODD_VALUES))
        return document
    if choice == 2 and isinstance(document, list) and document:
        document.append(copy.deepcopy(document[0]))
        return document
    return draw(st.one_of(ODD_STRINGS, ODD_VALUES, ODD_SEVERITIES, ODD_PATHS, ODD_AGENTS, WORD))


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data())
def test_every_well_formed_answer_takes_the_fast_path_with_the_models_document(kind: str, data: Any) -> None:
    document = data.draw(ANSWERS[kind](odds=False))
    assert assert_same_outcome(kind, document) is not None


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data())
def test_a_near_valid_answer_is_declined_or_given_exactly_the_models_document(kind: str, data: Any) -> None:
    assert_same_outcome(kind, data.draw(ANSWERS[kind](odds=True)))


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data())
def test_a_mutated_answer_is_declined_or_given_exactly_the_models_document(kind: str, data: Any) -> None:
    document = data.draw(ANSWERS[kind](odds=False))
    for _ in range(data.draw(st.integers(1, 3))):
        document = mutate(data.draw, document)
    assert_same_outcome(kind, document)


@pytest.mark.parametrize("kind", KINDS)
def test_the_contract_examples_take_the_fast_path(kind: str) -> None:
    assert assert_same_outcome(kind, KIND_EXAMPLES[kind]) is not None


@pytest.mark.parametrize(
    ("kind", "change"),
    [
        ("reviewer", lambda d: d["issues"][0].update(severity="HIGH")),
        ("reviewer", lambda d: d["issues"][0].update(line="12")),
        ("reviewer", lambda d: d["issues"][0].update(relevantFile=d["issues"][0].pop("file"))),
        ("reviewer", lambda d: d["issues"][0].update(id=" CR-001 ")),
        ("reviewer", lambda d: d.update(agent=" Code-Reviewer ")),
        ("reviewer", lambda d: d["issues"][0].update(confidence="85%")),
        ("reviewer", lambda d: d.update(mood="happy")),
        ("verifier", lambda d: d["verification_result"]["quality_assessment"].update(overall_score=101)),
        ("fixer", lambda d: d.update(files_modified=["../outside.py"])),
    ],
)
def test_what_the_model_normalises_or_refuses_goes_to_the_model(kind: str, change: Any) -> None:
    document = copy.deepcopy(KIND_EXAMPLES[kind])
    change(document)
    assert canonical_answer(kind, document) is None
    assert_same_outcome(kind, document)


def test_the_required_fields_and_limits_are_the_models() -> None:
    for kind in KINDS:
        model = contract_model(kind)
        assert REQUIRED_FIELDS[kind] == tuple(n for n, f in model.model_fields.items() if f.is_required())
    assert MAX_LINE == common.MAX_LINE


def test_checking_a_canonical_answer_loads_no_pydantic() -> None:
    for kind in KINDS:
        answer = json.dumps(KIND_EXAMPLES[kind])
        code = f"from fixloop.contracts.check import check_text\nassert check_text({kind!r}, {answer!r}).ok\n"
        assert modules_loaded_by(code, ("pydantic", "pydantic_core")) == []


# Single faults, every one: each leaf of a full answer replaced by each value below, each field removed, each
# unknown field added. Whitespace around a string is tried with every character Python or pydantic strips.
SPACES = [chr(c) for c in range(0x3001) if chr(c).isspace()] + ["\u180e", "\u200b", "\ufeff"]
ODD_POOL: list[Any] = [
    *(f"a{space}" for space in SPACES),
    *(f"{space}a" for space in SPACES),
    *(None, True, False, 0, 1, 4, 5, -1, 100, 101, MAX_LINE, MAX_LINE + 1, 1.0, "1", "5", " 5", ""),
    *("X-0", "X-1", "Medium", "low ", "success", "failed", "partial", "succeeded", "skipped", "INCORRECT"),
    *("VIOLATED", "POOR", "code-reviewer", "Code-Reviewer", "fixloop:review-fixer", "review-verifier"),
    *("src/a.py", "./src/a.py", "/etc/passwd", "../a.py", ".git/x", "C:/a.py", "a\\b.py", ".", "a\nb"),
    *([], {}, ["a"], [1], {"a": 1}),
]
FULL_ERROR = {"code": "E", "message": "m", "phase": "p", "recoverable": True, "stack_trace": "t"}
FULL_ISSUE = {
    "id": "X-0",
    "severity": "low",
    "confidence": 50,
    "file": "./src/a.py",
    "line": 5,
    "end_line": 7,
    "category": "bug",
    "rule": "r",
    "description": "d",
    "suggestion": "s",
    "auto_fixable": False,
    "existing_code": "e",
    "improved_code": "i",
}
FULL_ANSWERS: list[tuple[str, dict[str, Any]]] = [
    (
        "reviewer",
        {
            "status": "success",
            "agent": "code-reviewer",
            "issues": [FULL_ISSUE, {**FULL_ISSUE, "id": "X-1", "end_line": None}],
            "positive_observations": ["ok"],
        },
    ),
    ("reviewer", {"status": "failed", "agent": "test-analyzer", "issues": [], "error": FULL_ERROR}),
    (
        "verifier",
        {
            "status": "success",
            "agent": "review-verifier",
            "task_id": "t",
            "verification_result": {
                "accuracy_check": [
                    {
                        "issue_id": "X-0",
                        "accuracy_status": "CORRECT",
                        "evidence": "e",
                        "deletion_required": False,
                    },
                    {
                        "issue_id": "X-1",
                        "accuracy_status": "INCORRECT",
                        "evidence": "e",
                        "deletion_required": True,
                        "deletion_reason": "r",
                    },
                ],
                "rule_compliance_check": [
                    {
                        "issue_id": "X-0",
                        "compliance_status": "VIOLATED",
                        "violated_rules": ["r"],
                        "deletion_required": True,
                        "violation_reason": "v",
                    }
                ],
                "quality_assessment": {
                    "overall_score": 80,
                    "quality_level": "GOOD",
                    "strengths": ["s"],
                    "weaknesses": ["w"],
                    "missing_issues": [{"description": "d", "evidence": "e", "suggested_severity": "high"}],
                },
            },
        },
    ),
    ("verifier", {"status": "failed", "agent": "review-verifier", "error": FULL_ERROR}),
    (
        "fixer",
        {
            "status": "partial",
            "agent": "review-fixer",
            "results": [
                {"issue_id": "X-0", "status": "succeeded", "files": ["src/a.py"]},
                {"issue_id": "X-1", "status": "skipped", "reason": "r"},
            ],
            "files_modified": ["src/a.py"],
        },
    ),
    ("fixer", {"status": "failed", "agent": "review-fixer", "error": FULL_ERROR}),
]


def single_faults(document: Any) -> Any:
    """Every copy of `document` with one fault, as (description, copy)."""
    if isinstance(document, dict):
        for key in document:
            yield f"without {key}", {k: v for k, v in document.items() if k != key}
            for where, fault in single_faults(document[key]):
                yield f"{key}: {where}", {**document, key: fault}
        for extra in ("extra", *SUPERVISOR_KEYS):
            yield f"with {extra}", {**document, extra: "x"}
    elif isinstance(document, list):
        for index, item in enumerate(document):
            for where, fault in single_faults(item):
                yield f"[{index}]: {where}", [*document[:index], fault, *document[index + 1 :]]
        if document:
            yield "an item doubled", [*document, document[0]]
    for value in ODD_POOL:
        if value != document or type(value) is not type(document):
            yield f"= {value!r}", value


@pytest.mark.parametrize(("kind", "answer"), FULL_ANSWERS)
def test_every_single_fault_of_a_full_answer_is_declined_or_given_exactly_the_models_document(
    kind: str, answer: dict[str, Any]
) -> None:
    assert assert_same_outcome(kind, answer) is not None
    for where, faulty in single_faults(answer):
        try:
            assert_same_outcome(kind, faulty)
        except AssertionError as failure:
            raise AssertionError(f"{kind} answer {where}") from failure
