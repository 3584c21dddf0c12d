"""Reports computed from the run state: coordinator output, simple array, Markdown, SARIF."""

from __future__ import annotations

from typing import Any

import jsonschema  # type: ignore[import-untyped]
from helpers_review import Loop, all_fixed, issue, make_state, reviewer_doc

from fixloop.contracts.coordinator import CoordinatorOutput
from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.report import formats

CR = "code-reviewer"
SFH = "silent-failure-hunter"
PASSED_STEP = {"status": "passed", "duration_ms": 10, "exit_code": 0}
A = issue(
    "A", 10, "Missing null check on `user`", existing_code="user.name", improved_code="user and user.name"
)
B = issue("B", 30, "SQL built by string concatenation", category="security", severity="critical", end_line=32)
LOW = issue("L", 50, "Comment is outdated", category="comments", severity="low", confidence=60)


def success_results(counts: dict[str, int]) -> list[dict[str, Any]]:
    return [
        {"agent": agent, "status": "success", "issues_count": counts.get(agent, 0)}
        for agent in REVIEWER_AGENTS
    ]


def two_rounds() -> Loop:
    """Round 1: A (two agents), B, LOW; fix A, B. Round 2: B persists (moved), LOW remains, C is new."""
    loop = Loop(make_state(use_verifier=False))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({CR: [A, B], SFH: [A, LOW]})
    fix = loop.next()
    loop.record("review-fixer", all_fixed(item["id"] for item in fix["issues"]))
    loop.next()
    loop.verify(True)
    loop.next()
    moved_b = {**B, "line": 33, "end_line": 35}
    c = issue("C", 80, "Broad except hides errors", category="error-handling", auto_fixable=False)
    loop.record(CR, reviewer_doc(CR, [moved_b], positive=["Clear names"]))
    loop.record(SFH, reviewer_doc(SFH, [LOW, c]))
    for agent in REVIEWER_AGENTS[2:]:
        loop.record(agent, reviewer_doc(agent))
    loop.next()  # round 2: 1 fixable (B) < 2 -> fix again
    return loop


def test_coordinator_output_exact() -> None:
    loop = two_rounds()
    loop.record("review-fixer", all_fixed(["FL-002"]))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({SFH: [LOW]})
    assert loop.next()["termination_reason"] == "no_fixable_issues"
    a_ref = {
        "id": "FL-001",
        "file": "src/app.py",
        "description": "Missing null check on `user`",
        "line": 10,
        "severity": "high",
        "category": "bug",
        "confidence": 90,
        "agents": [CR, SFH],
        "auto_fixable": True,
    }
    b_ref = {
        "id": "FL-002",
        "file": "src/app.py",
        "description": "SQL built by string concatenation",
        "line": 33,
        "severity": "critical",
        "category": "security",
        "confidence": 90,
        "agents": [CR],
        "auto_fixable": True,
    }
    c_ref = {
        "id": "FL-004",
        "file": "src/app.py",
        "description": "Broad except hides errors",
        "line": 80,
        "severity": "high",
        "category": "error-handling",
        "confidence": 90,
        "agents": [SFH],
        "auto_fixable": False,
    }
    low_ref = {
        "id": "FL-003",
        "file": "src/app.py",
        "description": "Comment is outdated",
        "line": 50,
        "severity": "low",
        "category": "comments",
        "confidence": 60,
        "agents": [SFH],
        "auto_fixable": True,
    }
    expected = {
        "status": "partial",  # finished, with FL-003 left for a person
        "agent": "review-coordinator",
        "verification": {"tests": PASSED_STEP, "lint": PASSED_STEP, "typecheck": PASSED_STEP},
        "review_iterations": [
            {
                "iteration": 1,
                "agents_results": success_results({CR: 2, SFH: 2}),
                "issues_found": 3,
                "fixable_issues": 2,
                "fix_result": {"attempted": 2, "succeeded": 2, "failed": 0},
                "resolved_issues": [],
                "introduced_issues": [],
                "persisting_issues": [],
                "removed_by_verifier": [],
            },
            {
                "iteration": 2,
                "agents_results": success_results({CR: 1, SFH: 2}),
                "issues_found": 3,
                "fixable_issues": 1,
                "fix_result": {"attempted": 1, "succeeded": 1, "failed": 0},
                "resolved_issues": ["FL-001"],
                "introduced_issues": ["FL-004"],
                "persisting_issues": ["FL-002", "FL-003"],
                "removed_by_verifier": [],
            },
            {
                "iteration": 3,
                "agents_results": success_results({SFH: 1}),
                "issues_found": 1,
                "fixable_issues": 0,
                "resolved_issues": ["FL-002", "FL-004"],
                "introduced_issues": [],
                "persisting_issues": ["FL-003"],
                "removed_by_verifier": [],
            },
        ],
        "summary": {
            "total_iterations": 3,
            "initial_issues": 3,
            "final_issues": 1,
            "fixed_issues": 3,
            "termination_reason": "no_fixable_issues",
        },
        "fixed_issues": [a_ref, b_ref, c_ref],
        "remaining_issues": [low_ref],
        "introduced_issues": [],
        "positive_observations": [],
        "files_modified": ["src/app.py"],
    }
    assert formats.coordinator_output(loop.state) == expected


def test_introduced_and_remaining_after_max_iterations() -> None:
    loop = Loop(make_state(use_verifier=False, max_review_iterations=1))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({CR: [A]})
    assert loop.next()["action"] == "fix"
    loop.record("review-fixer", all_fixed(["FL-001"]))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({CR: [B]})
    stop = loop.next()
    assert stop["termination_reason"] == "max_iterations"
    output = formats.coordinator_output(loop.state)
    assert output["status"] == "partial"
    assert [item["id"] for item in output["remaining_issues"]] == ["FL-002"]
    assert [item["id"] for item in output["introduced_issues"]] == ["FL-002"]
    assert [item["id"] for item in output["fixed_issues"]] == ["FL-001"]


def test_no_changes_shape_exact() -> None:
    loop = Loop(make_state(changed_files=()))
    loop.next()
    skipped = {"status": "skipped", "reason": "no_changes"}
    assert formats.coordinator_output(loop.state) == {
        "status": "success",
        "agent": "review-coordinator",
        "verification": {"tests": skipped, "lint": skipped, "typecheck": skipped},
        "review_iterations": [],
        "summary": {
            "total_iterations": 0,
            "initial_issues": 0,
            "final_issues": 0,
            "fixed_issues": 0,
            "termination_reason": "no_changes",
        },
        "message": "No changed files to review.",
    }


def test_insufficient_coverage_shape_exact() -> None:
    loop = Loop(make_state())
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({}, agents=REVIEWER_AGENTS[:3])
    loop.next()
    failed = [
        {
            "agent": agent,
            "status": "failed",
            "error": {
                "code": "NULL_RESPONSE",
                "message": f"Agent {agent} returned nothing",
                "phase": "execution",
                "recoverable": True,
                "stack_trace": None,
            },
        }
        for agent in REVIEWER_AGENTS[3:]
    ]
    assert formats.coordinator_output(loop.state) == {
        "status": "failed",
        "agent": "review-coordinator",
        "error": {
            "code": "INSUFFICIENT_COVERAGE",
            "message": "Only 3/6 review agents succeeded (at least 4 required)",
            "failed_agents": failed,
            "suggestion": "Check why the failed agents failed, fix the cause and run the review again.",
        },
    }
    assert "INSUFFICIENT_COVERAGE" in formats.markdown(loop.state)


def test_outputs_validate_as_coordinator_output_while_running() -> None:
    loop = two_rounds()
    output = formats.coordinator_output(loop.state)
    CoordinatorOutput.model_validate(output)
    assert output["summary"]["termination_reason"] is None
    assert output["message"] == "The review is still running (last action: fix)."
    unstarted = formats.coordinator_output(make_state())
    assert unstarted["message"] == "The review has not started."


def test_simple_array_exact() -> None:
    loop = two_rounds()
    assert formats.simple_array(loop.state) == [
        {
            "relevantFile": "src/app.py",
            "existingCode": "",
            "suggestionContent": "SQL built by string concatenation",
            "improvedCode": "Fix: SQL built by string concatenation",
            "label": "Security",
            "suggestionLine": 33,
        },
        {
            "relevantFile": "src/app.py",
            "existingCode": "",
            "suggestionContent": "Comment is outdated",
            "improvedCode": "Fix: Comment is outdated",
            "label": "Quality",
            "suggestionLine": 50,
        },
        {
            "relevantFile": "src/app.py",
            "existingCode": "",
            "suggestionContent": "Broad except hides errors",
            "improvedCode": "Fix: Broad except hides errors",
            "label": "Quality",
            "suggestionLine": 80,
        },
    ]


def test_markdown_sections() -> None:
    text = formats.markdown(two_rounds().state)
    assert text.startswith("# fixloop review report — run abcd1234\n")
    for heading in (
        "## Summary",
        "## Iterations",
        "## Fixed issues",
        "## Introduced issues",
        "## Remaining issues",
    ):
        assert heading in text
    assert "| partial | running | 2 | 3 | 1 | 3 |" in text
    assert "| 1 | 6/6 | 3 | 2 | 2/2/0 | 0 | 0 | 0 |" in text
    assert (
        "| FL-001 | high | 90 | `src/app.py:10` | bug | Missing null check on `user` | code-reviewer, "
        in text
    )
    assert "- `src/app.py`" in text
    assert "- Clear names" in text


# A subset of the SARIF 2.1.0 schema: what GitHub code scanning requires and checks on upload.
SARIF_SUBSET: dict[str, Any] = {
    "type": "object",
    "required": ["version", "runs", "$schema"],
    "properties": {
        "version": {"const": "2.1.0"},
        "$schema": {"type": "string", "pattern": "sarif-2\\.1\\.0"},
        "runs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string", "minLength": 1},
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id"],
                                            "properties": {
                                                "id": {
                                                    "type": "string",
                                                    "pattern": "^fixloop/[a-z0-9-]+/[a-z0-9-]+$",
                                                },
                                                "shortDescription": {
                                                    "type": "object",
                                                    "required": ["text"],
                                                },
                                                "defaultConfiguration": {
                                                    "type": "object",
                                                    "properties": {
                                                        "level": {
                                                            "enum": ["none", "note", "warning", "error"]
                                                        }
                                                    },
                                                },
                                                "properties": {
                                                    "type": "object",
                                                    "properties": {
                                                        "tags": {
                                                            "type": "array",
                                                            "items": {"type": "string"},
                                                        },
                                                        "security-severity": {
                                                            "type": "string",
                                                            "pattern": "^[0-9]+(\\.[0-9]+)?$",
                                                        },
                                                    },
                                                },
                                            },
                                        },
                                    },
                                },
                            }
                        },
                    },
                    "automationDetails": {"type": "object", "properties": {"id": {"type": "string"}}},
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["message", "locations", "ruleId"],
                            "properties": {
                                "ruleId": {"type": "string"},
                                "ruleIndex": {"type": "integer", "minimum": 0},
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": {
                                    "type": "object",
                                    "required": ["text"],
                                    "properties": {"text": {"type": "string", "minLength": 1}},
                                },
                                "locations": {
                                    "type": "array",
                                    "minItems": 1,
                                    "items": {
                                        "type": "object",
                                        "required": ["physicalLocation"],
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "required": ["artifactLocation", "region"],
                                                "properties": {
                                                    "artifactLocation": {
                                                        "type": "object",
                                                        "required": ["uri"],
                                                        "properties": {
                                                            "uri": {
                                                                "type": "string",
                                                                "pattern": "^[^/:][^:]*$",
                                                            },
                                                            "uriBaseId": {"const": "%SRCROOT%"},
                                                        },
                                                    },
                                                    "region": {
                                                        "type": "object",
                                                        "required": ["startLine"],
                                                        "properties": {
                                                            "startLine": {"type": "integer", "minimum": 1},
                                                            "endLine": {"type": "integer", "minimum": 1},
                                                        },
                                                    },
                                                },
                                            }
                                        },
                                    },
                                },
                                "partialFingerprints": {
                                    "type": "object",
                                    "additionalProperties": {"type": "string"},
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def test_sarif_structure() -> None:
    loop = two_rounds()
    document = formats.sarif(loop.state)
    jsonschema.validate(document, SARIF_SUBSET)
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"] == "fixloop"
    assert [rule["id"] for rule in rules] == [
        "fixloop/code-reviewer/security",
        "fixloop/silent-failure-hunter/comments",
        "fixloop/silent-failure-hunter/error-handling",
    ]
    assert rules[0]["properties"]["security-severity"] == "9.5"
    assert "security" in rules[0]["properties"]["tags"]
    results = run["results"]
    assert [(item["ruleId"], item["level"]) for item in results] == [
        ("fixloop/code-reviewer/security", "error"),
        ("fixloop/silent-failure-hunter/comments", "note"),
        ("fixloop/silent-failure-hunter/error-handling", "error"),
    ]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["endLine"] >= region["startLine"]
    first = results[0]
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "src/app.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 33, "endLine": 35},
    }
    issues = {item["id"]: item for item in loop.review_doc["rounds"][-1]["issues"]}
    assert first["partialFingerprints"] == {"fixloopIssue/v1": issues["FL-002"]["fingerprint"]}
    assert (
        first["message"]["text"]
        == "SQL built by string concatenation\n\nSuggestion: Fix: SQL built by string concatenation"
    )


def test_sarif_uri_is_percent_encoded_and_empty_run_is_valid() -> None:
    loop = Loop(make_state(use_verifier=False))
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({CR: [issue("S", 3, "Bad name", file="docs/my file#1.py", auto_fixable=False)]})
    loop.next()
    document = formats.sarif(loop.state)
    jsonschema.validate(document, SARIF_SUBSET)
    location = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "docs/my%20file%231.py"
    empty = formats.sarif(make_state())
    jsonschema.validate(empty, SARIF_SUBSET)
    assert empty["runs"][0]["results"] == []
