"""The agent contracts as seen through contracts.validation: what is accepted, normalized and refused."""

from __future__ import annotations

import copy
import json
import typing
from typing import Any

import pytest

from fixloop.contracts.common import repo_relative_path
from fixloop.contracts.coordinator import LoopConfig
from fixloop.contracts.events import EVENT_MODELS
from fixloop.contracts.fixer import FixerOutput
from fixloop.contracts.reviewer import ReviewerIssue, ReviewerOutput
from fixloop.contracts.validation import (
    KIND_EXAMPLES,
    KINDS,
    KINDS_WITH_STATUS,
    AnyEvent,
    parse_document,
    required_fields,
    validate_document,
    validate_text,
)
from fixloop.contracts.verifier import VerifierOutput
from fixloop.core.agent_names import agent_name
from fixloop.core.errors import FixloopError


def example(kind: str) -> dict[str, Any]:
    return copy.deepcopy(KIND_EXAMPLES[kind])


def issue(**changes: Any) -> dict[str, Any]:
    base = example("reviewer")["issues"][0]
    base.update(changes)
    return {key: value for key, value in base.items() if value is not ...}


def reviewer(*issues: dict[str, Any], **changes: Any) -> dict[str, Any]:
    document = example("reviewer")
    document["issues"] = list(issues)
    document.update(changes)
    return document


def violations(kind: str, document: Any) -> list[dict[str, str]]:
    with pytest.raises(FixloopError) as caught:
        validate_document(kind, document)
    assert caught.value.code in {"SCHEMA_VIOLATION", "MISSING_STATUS"}
    assert caught.value.exit_code == 1
    found: list[dict[str, str]] = caught.value.details["violations"]
    return found


# --- kinds ---------------------------------------------------------------------------------------------


def test_kinds_are_the_cli_kinds() -> None:
    assert list(KINDS) == [
        "reviewer",
        "fixer",
        "verifier",
        "coordinator-input",
        "coordinator-output",
        "review-task",
        "event",
        "failure-analyst",
        "root-cause-analyst",
        "fix-designer",
        "implementer",
        "comment-classifier",
        "reply-writer",
        "task-implementer",
        "ci-analyst",
    ]
    assert {kind for kind in KINDS if kind != "event" and "status" in KINDS[kind].model_fields} == set(
        KINDS_WITH_STATUS
    )


def test_required_top_level_fields() -> None:
    assert required_fields("reviewer") == ["status", "agent"]
    assert required_fields("fixer") == ["status", "agent"]
    assert required_fields("verifier") == ["status", "agent"]
    assert required_fields("coordinator-input") == ["changed_files", "context"]
    assert required_fields("coordinator-output") == ["status"]
    assert required_fields("review-task") == ["task_id", "review_type", "working_directory"]
    assert required_fields("event") == ["ts", "level", "type", "session_id"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_examples_validate_and_normalizing_is_idempotent(kind: str) -> None:
    normalized = validate_document(kind, example(kind))
    assert validate_document(kind, normalized) == normalized
    assert set(normalized) >= set(example(kind))


def test_unknown_kind() -> None:
    with pytest.raises(FixloopError) as caught:
        validate_text("nope", "{}")
    assert caught.value.to_document() == {
        "status": "failed",
        "error": {
            "code": "UNKNOWN_KIND",
            "message": "Unknown document kind 'nope'; use one of: reviewer, fixer, verifier, "
            "coordinator-input, coordinator-output, review-task, event, failure-analyst, root-cause-analyst, "
            "fix-designer, implementer, comment-classifier, reply-writer, task-implementer, ci-analyst.",
            "kind": "nope",
            "allowed": list(KINDS),
        },
    }
    assert caught.value.exit_code == 2


# --- reviewer ------------------------------------------------------------------------------------------


def test_normalized_reviewer_output_has_every_field() -> None:
    document = {"status": "success", "agent": "code-reviewer"}
    assert validate_document("reviewer", document) == {
        "status": "success",
        "agent": "code-reviewer",
        "issues": [],
        "positive_observations": [],
        "error": None,
    }


def test_supervisor_field_names_are_accepted() -> None:
    supervisor_issue = {
        "id": "ISSUE-001",
        "relevantFile": "./src/main.py",
        "existingCode": "eval(data)",
        "suggestionContent": "eval on user input allows code execution.",
        "improvedCode": "json.loads(data)",
        "label": "Security",
        "suggestionLine": "12",
        "severity": "Critical",
        "confidence": 95,
        "suggestion": "Parse the data instead of evaluating it.",
        "auto_fixable": True,
    }
    normalized = validate_document("reviewer", reviewer(supervisor_issue))
    assert normalized["issues"] == [
        {
            "id": "ISSUE-001",
            "severity": "critical",
            "confidence": 95,
            "file": "src/main.py",
            "line": 12,
            "end_line": None,
            "category": "security",
            "rule": None,
            "description": "eval on user input allows code execution.",
            "suggestion": "Parse the data instead of evaluating it.",
            "auto_fixable": True,
            "existing_code": "eval(data)",
            "improved_code": "json.loads(data)",
        }
    ]
    item = ReviewerOutput.model_validate(reviewer(supervisor_issue)).issues[0].to_supervisor_item()
    assert item == {
        "relevantFile": "src/main.py",
        "existingCode": "eval(data)",
        "suggestionContent": "eval on user input allows code execution.",
        "improvedCode": "json.loads(data)",
        "label": "Security",
        "suggestionLine": 12,
    }


def test_to_supervisor_item_fallbacks() -> None:
    parsed = ReviewerIssue.model_validate(issue(category="naming", existing_code=..., improved_code=...))
    assert parsed.to_supervisor_item() == {
        "relevantFile": "src/api/handler.py",
        "existingCode": "",
        "suggestionContent": "The except block swallows the database error and returns an empty list.",
        "improvedCode": "Log the error with context and re-raise it.",
        "label": "Quality",
        "suggestionLine": 42,
    }
    assert ReviewerIssue.model_validate(issue(category="PERFORMANCE")).supervisor_label() == "Performance"


def test_supervisor_name_next_to_its_canonical_name_is_an_unknown_field() -> None:
    found = violations("reviewer", reviewer(issue(label="Security")))
    assert found == [
        {
            "path": "$.issues[0].label",
            "message": "unknown field 'label' — remove it (allowed: id, severity, confidence, file, line, "
            "end_line, category, rule, description, suggestion, auto_fixable, existing_code, improved_code)",
            "type": "extra_forbidden",
        }
    ]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("code-reviewer", "code-reviewer"),
        ("fixloop:code-reviewer", "code-reviewer"),
        ("review-code-reviewer", "code-reviewer"),
        ("fixloop:review-silent-failure-hunter", "silent-failure-hunter"),
        ("  Type-Design-Analyzer ", "type-design-analyzer"),
    ],
)
def test_reviewer_agent_names_are_canonical(given: str, expected: str) -> None:
    assert validate_document("reviewer", reviewer(agent=given))["agent"] == expected


def test_other_agent_names() -> None:
    assert agent_name("fixloop:review-fixer") == "review-fixer"
    assert agent_name("review-fixer") == "review-fixer"
    assert validate_document("fixer", example("fixer") | {"agent": "fixloop:review-fixer"})["agent"] == (
        "review-fixer"
    )
    verifier = example("verifier") | {"agent": "FIXLOOP:Review-Verifier"}
    assert validate_document("verifier", verifier)["agent"] == "review-verifier"
    assert violations("reviewer", reviewer(agent="review-fixer")) == [
        {
            "path": "$.agent",
            "message": "must be one of code-reviewer, silent-failure-hunter, code-simplifier, test-analyzer, "
            "comment-analyzer, type-design-analyzer; got 'review-fixer'",
            "type": "value_error",
        }
    ]
    assert violations("fixer", example("fixer") | {"agent": "code-reviewer"}) == [
        {"path": "$.agent", "message": "must be review-fixer; got 'code-reviewer'", "type": "value_error"}
    ]


@pytest.mark.parametrize(
    ("given", "expected"), [("High", "high"), ("CRITICAL", "critical"), (" low ", "low")]
)
def test_severity_case_is_normalized(given: str, expected: str) -> None:
    assert validate_document("reviewer", reviewer(issue(severity=given)))["issues"][0]["severity"] == expected


def test_unknown_severity() -> None:
    assert violations("reviewer", reviewer(issue(severity="urgent"))) == [
        {
            "path": "$.issues[0].severity",
            "message": "must be one of 'critical', 'high', 'medium', 'low'; got 'urgent'",
            "type": "literal_error",
        }
    ]


@pytest.mark.parametrize(
    ("confidence", "shown", "error_type"),
    [
        (85.5, "85.5", "int_type"),
        (85.0, "85.0", "int_type"),
        ("85", "'85'", "int_type"),
        ("85%", "'85%'", "int_type"),
        (True, "true", "int_type"),
        (None, "null", "int_type"),
        (101, "101", "less_than_equal"),
        (-1, "-1", "greater_than_equal"),
    ],
)
def test_confidence_must_be_an_integer_from_0_to_100(confidence: Any, shown: str, error_type: str) -> None:
    assert violations("reviewer", reviewer(issue(confidence=confidence))) == [
        {
            "path": "$.issues[0].confidence",
            "message": f"must be an integer from 0 to 100; got {shown}",
            "type": error_type,
        }
    ]


@pytest.mark.parametrize("confidence", [0, 100])
def test_confidence_bounds_are_inclusive(confidence: int) -> None:
    normalized = validate_document("reviewer", reviewer(issue(confidence=confidence)))
    assert normalized["issues"][0]["confidence"] == confidence


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/etc/passwd", "must be relative to the repository root, not absolute"),
        ("C:\\repo\\a.py", "must be relative to the repository root, not absolute"),
        ("C:/repo/a.py", "must be relative to the repository root, not absolute"),
        ("../outside.py", "must stay inside the repository (no '..' parts)"),
        ("src/../../outside.py", "must stay inside the repository (no '..' parts)"),
        ("src\\..\\..\\outside.py", "must stay inside the repository (no '..' parts)"),
        ("./", "must name a file inside the repository"),
    ],
)
def test_file_paths_must_stay_in_the_repository(path: str, message: str) -> None:
    assert violations("reviewer", reviewer(issue(file=path))) == [
        {"path": "$.issues[0].file", "message": f"{message}; got {_quoted(path)}", "type": "value_error"}
    ]
    fixer = example("fixer")
    fixer["files_modified"] = ["ok.py", path]
    assert violations("fixer", fixer) == [
        {"path": "$.files_modified[1]", "message": f"{message}; got {_quoted(path)}", "type": "value_error"}
    ]


def _quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\") + "'"


@pytest.mark.parametrize(
    ("given", "expected"), [("./src/a.py", "src/a.py"), ("src\\a.py", "src/a.py"), ("a..b/c.py", "a..b/c.py")]
)
def test_relative_paths_are_normalized(given: str, expected: str) -> None:
    assert repo_relative_path(given) == expected
    assert validate_document("reviewer", reviewer(issue(file=given)))["issues"][0]["file"] == expected


def test_line_rules() -> None:
    assert violations("reviewer", reviewer(issue(line=0, end_line=None))) == [
        {
            "path": "$.issues[0].line",
            "message": "must be an integer from 1 to 10000000; got 0",
            "type": "greater_than_equal",
        }
    ]
    assert violations("reviewer", reviewer(issue(line=10, end_line=9))) == [
        {
            "path": "$.issues[0]",
            "message": "end_line (9) must not be before line (10)",
            "type": "value_error",
        }
    ]
    assert violations("reviewer", reviewer(issue(line="12-14"))) == [
        {
            "path": "$.issues[0].line",
            "message": "must be an integer from 1 to 10000000; got '12-14'",
            "type": "int_type",
        }
    ]


def test_every_violation_is_listed() -> None:
    broken = reviewer(
        issue(confidence="85%", auto_fixable=..., foo=1),
        issue(id="SFH-002", file="/abs.py", severity="meh"),
        bar=2,
    )
    assert violations("reviewer", broken) == [
        {
            "path": "$.issues[0].confidence",
            "message": "must be an integer from 0 to 100; got '85%'",
            "type": "int_type",
        },
        {
            "path": "$.issues[0].auto_fixable",
            "message": "missing required field 'auto_fixable' (true or false)",
            "type": "missing",
        },
        {
            "path": "$.issues[0].foo",
            "message": "unknown field 'foo' — remove it (allowed: id, severity, confidence, file, line, "
            "end_line, category, rule, description, suggestion, auto_fixable, existing_code, improved_code)",
            "type": "extra_forbidden",
        },
        {
            "path": "$.issues[1].severity",
            "message": "must be one of 'critical', 'high', 'medium', 'low'; got 'meh'",
            "type": "literal_error",
        },
        {
            "path": "$.issues[1].file",
            "message": "must be relative to the repository root, not absolute; got '/abs.py'",
            "type": "value_error",
        },
        {
            "path": "$.bar",
            "message": "unknown field 'bar' — remove it "
            "(allowed: status, agent, issues, positive_observations, error)",
            "type": "extra_forbidden",
        },
    ]


def test_duplicate_issue_ids() -> None:
    assert violations("reviewer", reviewer(issue(), issue())) == [
        {"path": "$", "message": "issue ids must be unique; repeated: SFH-001", "type": "value_error"}
    ]


def test_empty_strings_are_refused() -> None:
    assert violations("reviewer", reviewer(issue(description="   "))) == [
        {
            "path": "$.issues[0].description",
            "message": "must not be empty; got '   '",
            "type": "string_too_short",
        }
    ]


# --- status / error pairing ----------------------------------------------------------------------------

FAILED_ERROR = {
    "code": "TIMEOUT",
    "message": "gave up after 10 minutes",
    "phase": "review",
    "recoverable": True,
}


def test_failed_reviewer_needs_an_error() -> None:
    assert violations("reviewer", {"status": "failed", "agent": "code-reviewer"}) == [
        {
            "path": "$",
            "message": "a failed result needs an error object (code, message, phase, recoverable)",
            "type": "value_error",
        }
    ]
    normalized = validate_document(
        "reviewer", {"status": "failed", "agent": "code-reviewer", "error": FAILED_ERROR}
    )
    assert normalized["error"] == FAILED_ERROR | {"stack_trace": None}


def test_successful_reviewer_must_not_carry_an_error() -> None:
    assert violations("reviewer", reviewer(error=FAILED_ERROR)) == [
        {"path": "$", "message": "a successful result must not carry an error object", "type": "value_error"}
    ]


def test_failed_verifier_and_coordinator_need_an_error() -> None:
    assert violations("verifier", {"status": "failed", "agent": "review-verifier"}) == [
        {"path": "$", "message": "a failed verification needs an error object", "type": "value_error"}
    ]
    assert violations("verifier", {"status": "success", "agent": "review-verifier"}) == [
        {"path": "$", "message": "a successful verification needs verification_result", "type": "value_error"}
    ]
    assert violations("coordinator-output", {"status": "failed"}) == [
        {"path": "$", "message": "a failed coordinator result needs an error object", "type": "value_error"}
    ]
    failed = {"status": "failed", "error": {"code": "INSUFFICIENT_COVERAGE", "message": "2/6"}}
    assert validate_document("coordinator-output", failed)["error"] == failed["error"]


def test_failed_fixer_needs_an_error_or_results() -> None:
    assert violations("fixer", {"status": "failed", "agent": "review-fixer"}) == [
        {
            "path": "$",
            "message": "a failed fix with no per-issue results needs an error object",
            "type": "value_error",
        }
    ]
    attempt = {"issue_id": "A", "status": "failed", "reason": "tests still fail"}
    assert validate_document("fixer", {"status": "failed", "agent": "review-fixer", "results": [attempt]})


def test_unfixed_attempts_need_a_reason_and_counts() -> None:
    fixer = example("fixer")
    fixer["results"].append({"issue_id": "X", "status": "failed"})
    assert violations("fixer", fixer) == [
        {"path": "$.results[2]", "message": "a failed fix needs a reason", "type": "value_error"}
    ]
    fixer["results"][2]["reason"] = "the test still fails"
    assert FixerOutput.model_validate(fixer).counts() == {"attempted": 2, "succeeded": 1, "failed": 1}


# --- verifier ------------------------------------------------------------------------------------------


def test_verifier_deletions() -> None:
    document = example("verifier")
    result = document["verification_result"]
    result["accuracy_check"] = [
        {"issue_id": "A", "accuracy_status": "CORRECT", "evidence": "seen", "deletion_required": False},
        {
            "issue_id": "B",
            "accuracy_status": "INCORRECT",
            "evidence": "the variable is used",
            "deletion_required": False,
        },
        {
            "issue_id": "C",
            "accuracy_status": "PARTIALLY_CORRECT",
            "evidence": "half",
            "deletion_required": True,
            "deletion_reason": "duplicate of A",
        },
    ]
    result["rule_compliance_check"] = [
        {
            "issue_id": "D",
            "compliance_status": "VIOLATED",
            "violated_rules": ["no style nits", "no speculation"],
            "deletion_required": True,
        },
        {
            "issue_id": "C",
            "compliance_status": "VIOLATED",
            "deletion_required": True,
            "violation_reason": "style only",
        },
        {"issue_id": "A", "compliance_status": "VIOLATED", "deletion_required": False},
    ]
    result["quality_assessment"]["missing_issues"] = [
        {"description": "SQL injection", "evidence": "db.py:3", "suggested_severity": "High"}
    ]
    parsed = VerifierOutput.model_validate(document)
    assert parsed.issues_to_delete() == {
        "B": "the variable is used",
        "C": "duplicate of A",
        "D": "no style nits; no speculation",
    }
    normalized = validate_document("verifier", document)
    assert normalized["verification_result"]["quality_assessment"]["missing_issues"][0][
        "suggested_severity"
    ] == ("high")


def test_verifier_deletion_needs_a_reason_and_score_is_strict() -> None:
    document = example("verifier")
    document["verification_result"]["accuracy_check"][0]["deletion_required"] = True
    document["verification_result"]["quality_assessment"]["overall_score"] = "82"
    assert violations("verifier", document) == [
        {
            "path": "$.verification_result.accuracy_check[0]",
            "message": "deletion_required needs a deletion_reason",
            "type": "value_error",
        },
        {
            "path": "$.verification_result.quality_assessment.overall_score",
            "message": "must be an integer from 0 to 100; got '82'",
            "type": "int_type",
        },
    ]


# --- coordinator ---------------------------------------------------------------------------------------

NO_CHANGES = {
    "status": "success",
    "agent": "review-coordinator",
    "verification": {
        "tests": {"status": "skipped", "reason": "no_changes"},
        "lint": {"status": "skipped", "reason": "no_changes"},
        "typecheck": {"status": "skipped", "reason": "no_changes"},
    },
    "review_iterations": [],
    "summary": {
        "total_iterations": 0,
        "initial_issues": 0,
        "final_issues": 0,
        "fixed_issues": 0,
        "termination_reason": "no_changes",
    },
    "message": "没有变更的文件需要审查",
}


def test_coordinator_no_changes_shape_validates() -> None:
    skipped = {
        "status": "skipped",
        "duration_ms": None,
        "reason": "no_changes",
        "exit_code": None,
        "command": None,
        "output_tail": None,
    }
    assert validate_text("coordinator-output", json.dumps(NO_CHANGES, ensure_ascii=False)) == {
        "run_id": None,
        "status": "success",
        "agent": "review-coordinator",
        "verification": {"tests": skipped, "lint": skipped, "typecheck": skipped},
        "review_iterations": [],
        "summary": NO_CHANGES["summary"],
        "fixed_issues": None,
        "remaining_issues": None,
        "introduced_issues": None,
        "positive_observations": None,
        "files_modified": None,
        "message": "没有变更的文件需要审查",
        "error": None,
        "usage": None,
    }


def test_finished_coordinator_needs_a_summary() -> None:
    assert violations("coordinator-output", {"status": "success"}) == [
        {"path": "$", "message": "a finished review needs a summary", "type": "value_error"}
    ]


def test_coordinator_input_defaults_and_limits() -> None:
    normalized = validate_document(
        "coordinator-input", {"changed_files": [], "context": {"workflow": "pr-review"}}
    )
    assert normalized == {
        "changed_files": [],
        "config": LoopConfig().model_dump(mode="json"),
        "context": {"workflow": "pr-review", "stack": "mixed"},
        "logging": None,
    }
    bad = example("coordinator-input")
    bad["config"]["min_required_agents"] = 7
    bad["logging"]["session_id"] = "A1B2C3D4"
    assert violations("coordinator-input", bad) == [
        {
            "path": "$.config.min_required_agents",
            "message": "must be an integer from 1 to 6; got 7",
            "type": "less_than_equal",
        },
        {
            "path": "$.logging.session_id",
            "message": "must be a string matching ^[0-9a-f]{8}$; got 'A1B2C3D4'",
            "type": "string_pattern_mismatch",
        },
    ]


# --- review task ---------------------------------------------------------------------------------------


def test_review_task() -> None:
    normalized = validate_document(
        "review-task", {"task_id": "t1", "review_type": "file", "working_directory": "/repo"}
    )
    assert normalized == {
        "task_id": "t1",
        "review_type": "file",
        "working_directory": "/repo",
        "task_desc": None,
        "priority_focus": [],
        "extra_requirements": [],
        "retry_context": {"attempt_number": 1, "previous_errors": [], "recovery_actions_taken": []},
    }
    task = example("review-task") | {"working_directory": "repo"}
    task["retry_context"]["attempt_number"] = 0
    assert violations("review-task", task) == [
        {
            "path": "$.working_directory",
            "message": "must be an absolute path; got 'repo'",
            "type": "value_error",
        },
        {
            "path": "$.retry_context.attempt_number",
            "message": "must be an integer >= 1; got 0",
            "type": "greater_than_equal",
        },
    ]


# --- events --------------------------------------------------------------------------------------------


def test_event_union_covers_every_event_model() -> None:
    union = typing.get_args(AnyEvent)[0]
    assert set(typing.get_args(union)) == set(EVENT_MODELS.values())


def test_event_extra_fields_are_kept() -> None:
    event = {
        "ts": "2024-12-06T14:30:52.123Z",
        "level": "E",
        "type": "AGENT_FAILURE",
        "session_id": "a1b2c3d4",
        "iteration": 1,
        "agent": "code-reviewer",
        "error_code": "NULL_RESPONSE",
        "message": "empty",
        "recoverable": True,
    }
    assert validate_document("event", event) == event
    parsed = parse_document("event", event)
    assert type(parsed.root).__name__ == "AgentFailure"  # type: ignore[attr-defined]


def test_event_violations_name_fields_of_the_chosen_event() -> None:
    event = {
        "ts": "2024-12-06 14:30",
        "level": "I",
        "type": "SESSION_END",
        "session_id": "a1b2c3d4",
        "status": "x",
    }
    assert violations("event", event) == [
        {
            "path": "$.ts",
            "message": "must be a string matching ^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$; "
            "got '2024-12-06 14:30'",
            "type": "string_pattern_mismatch",
        },
        {
            "path": "$.total_duration_ms",
            "message": "missing required field 'total_duration_ms' (an integer >= 0)",
            "type": "missing",
        },
    ]


def test_unknown_or_missing_event_type() -> None:
    tags = ", ".join(repr(tag) for tag in EVENT_MODELS)
    assert violations("event", {"type": "NOPE"}) == [
        {"path": "$.type", "message": f"must be one of {tags}; got 'NOPE'", "type": "union_tag_invalid"}
    ]
    assert violations("event", {"level": "I"}) == [
        {"path": "$.type", "message": f"missing required field 'type' (one of {tags})", "type": "missing"}
    ]


@pytest.mark.parametrize("event_type", list(EVENT_MODELS))
def test_every_event_type_is_recognized(event_type: str) -> None:
    event = {"ts": "2024-12-06T14:30:52.123Z", "level": "I", "type": event_type, "session_id": "a1b2c3d4"}
    try:
        normalized = validate_document("event", event)
    except FixloopError as error:
        # only the event's own required fields may be missing: the type itself was recognized
        assert all(v["type"] == "missing" for v in error.details["violations"])
        assert not any(
            v["path"] in ("$.type", "$.ts", "$.level", "$.session_id") for v in error.details["violations"]
        )
    else:
        assert normalized["type"] == event_type
