"""One realistic document per kind: shown in the generated schemas ("examples") and used by the tests."""

from __future__ import annotations

from typing import Any

KIND_EXAMPLES: dict[str, dict[str, Any]] = {
    "reviewer": {
        "status": "success",
        "agent": "silent-failure-hunter",
        "issues": [
            {
                "id": "SFH-001",
                "severity": "high",
                "confidence": 90,
                "file": "src/api/handler.py",
                "line": 42,
                "end_line": 47,
                "category": "error-handling",
                "description": "The except block swallows the database error and returns an empty list.",
                "suggestion": "Log the error with context and re-raise it.",
                "auto_fixable": True,
                "existing_code": "except Exception:\n    return []",
                "improved_code": "except DatabaseError:\n    log.exception('query failed')\n    raise",
            }
        ],
        "positive_observations": ["Input validation is thorough."],
    },
    "fixer": {
        "status": "partial",
        "agent": "review-fixer",
        "results": [
            {"issue_id": "SFH-001", "status": "succeeded", "files": ["src/api/handler.py"]},
            {"issue_id": "CR-002", "status": "skipped", "reason": "needs a design decision"},
        ],
        "files_modified": ["src/api/handler.py"],
    },
    "verifier": {
        "status": "success",
        "agent": "review-verifier",
        "task_id": "review-a1b2c3d4-r1",
        "verification_result": {
            "accuracy_check": [
                {
                    "issue_id": "SFH-001",
                    "accuracy_status": "CORRECT",
                    "evidence": "handler.py:42 catches Exception and returns [].",
                    "deletion_required": False,
                }
            ],
            "rule_compliance_check": [
                {"issue_id": "SFH-001", "compliance_status": "COMPLIANT", "deletion_required": False}
            ],
            "quality_assessment": {
                "overall_score": 82,
                "quality_level": "GOOD",
                "strengths": ["Findings cite exact lines."],
                "weaknesses": [],
                "missing_issues": [],
            },
        },
    },
    "coordinator-input": {
        "changed_files": ["src/api/handler.py", "tests/test_handler.py"],
        "config": {"test_command": "make test", "max_review_iterations": 3, "min_required_agents": 4},
        "context": {"workflow": "bugfix", "stack": "backend"},
        "logging": {"enabled": False, "level": "info", "session_id": "a1b2c3d4"},
    },
    "coordinator-output": {
        "status": "success",
        "agent": "review-coordinator",
        "verification": {
            "tests": {"status": "passed", "duration_ms": 12000},
            "lint": {"status": "passed", "duration_ms": 3000},
            "typecheck": {"status": "skipped", "reason": "no typecheck_command configured"},
        },
        "review_iterations": [
            {
                "iteration": 1,
                "agents_results": [{"agent": "code-reviewer", "status": "success", "issues_count": 1}],
                "issues_found": 1,
                "fixable_issues": 1,
                "fix_result": {"attempted": 1, "succeeded": 1, "failed": 0},
            }
        ],
        "summary": {
            "total_iterations": 1,
            "initial_issues": 1,
            "final_issues": 0,
            "fixed_issues": 1,
            "termination_reason": "no_fixable_issues",
        },
        "fixed_issues": [
            {"id": "CR-001", "file": "src/api/handler.py", "description": "Added error handling"}
        ],
        "remaining_issues": [],
        "files_modified": ["src/api/handler.py"],
    },
    "review-task": {
        "task_id": "review-a1b2c3d4-r1",
        "review_type": "diff",
        "working_directory": "/home/dev/project",
        "priority_focus": ["Security"],
        "retry_context": {"attempt_number": 1, "previous_errors": [], "recovery_actions_taken": []},
    },
    "event": {
        "ts": "2024-12-06T14:30:52.123Z",
        "level": "I",
        "type": "PHASE_START",
        "session_id": "a1b2c3d4",
        "phase": "phase_5",
        "phase_name": "Review",
        "agents": ["review-coordinator"],
    },
}
