"""The SARIF 2.1.0 review report."""

from __future__ import annotations

from typing import Any

import jsonschema  # type: ignore[import-untyped]
from helpers_review import (
    CR,
    Loop,
    issue,
    make_state,
    two_rounds,
)

from fixloop.report.sarif import sarif

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
    document = sarif(loop.state)
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
    document = sarif(loop.state)
    jsonschema.validate(document, SARIF_SUBSET)
    location = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "docs/my%20file%231.py"
    empty = sarif(make_state())
    jsonschema.validate(empty, SARIF_SUBSET)
    assert empty["runs"][0]["results"] == []
