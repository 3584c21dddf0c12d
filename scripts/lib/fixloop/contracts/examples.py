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
    "failure-analyst": {
        "status": "success",
        "agent": "failure-analyst",
        "failures": [
            {
                "test_id": "tests/test_orders.py::test_total_with_discount",
                "category": "assertion",
                "summary": "The order total ignores the discount: 100 instead of 90.",
                "file": "tests/test_orders.py",
                "line": 27,
            }
        ],
        "summary": "One assertion failure in the order totals.",
    },
    "root-cause-analyst": {
        "status": "success",
        "agent": "root-cause-analyst",
        "root_cause": {
            "summary": "Order.total() adds the discount line before it is set, so it counts as 0.",
            "file": "src/orders.py",
            "line": 42,
            "evidence": ["src/orders.py:42 reads self.discount before apply_discount() sets it."],
        },
        "factors": {"clarity": 85, "specificity": 90, "context": 70},
    },
    "fix-designer": {
        "status": "success",
        "agent": "fix-designer",
        "summary": "Compute the total after the discount is applied.",
        "changes": [
            {"file": "src/orders.py", "change": "Move the discount into total(), after apply_discount()."}
        ],
        "test": {"file": "tests/test_orders.py", "name": "test_total_with_discount", "line": 25},
        "risks": ["Callers that read total before checkout see the discounted value."],
        "alternatives": [
            {
                "approach": "Recompute the total in checkout()",
                "rejected_because": "total() stays wrong elsewhere.",
            }
        ],
    },
    "implementer": {
        "status": "success",
        "agent": "implementer",
        "stage": "fix",
        "test": {"file": "tests/test_orders.py", "name": "test_total_with_discount"},
        "files_modified": ["src/orders.py"],
        "summary": "total() now applies the discount; the new test passes.",
    },
    "comment-classifier": {
        "status": "success",
        "agent": "comment-classifier",
        "classifications": [
            {
                "thread_id": "PRRT_kwDOAbc123",
                "label": "fix",
                "confidence": 90,
                "reason": "parse() returns None for an empty line, and the caller indexes it.",
                "suggestion": "Return an empty list from parse() for an empty line.",
            },
            {
                "thread_id": "PRRT_kwDOAbc456",
                "label": "answer",
                "confidence": 85,
                "reason": "A question about why the cache is per request; no change is asked.",
            },
        ],
    },
    "reply-writer": {
        "status": "success",
        "agent": "reply-writer",
        "replies": [
            {
                "thread_id": "PRRT_kwDOAbc123",
                "body": "Fixed in 1f0e2d3: `parse()` now returns an empty list for an empty line.",
            },
            {
                "thread_id": "PRRT_kwDOAbc456",
                "body": "The cache is per request because the settings can change between requests.",
            },
        ],
    },
    "task-implementer": {
        "status": "success",
        "agent": "task-implementer",
        "tasks": [
            {"task_id": 4, "status": "done", "files": ["src/ratelimit/bucket.py", "tests/test_bucket.py"]},
            {
                "task_id": 5,
                "status": "failed",
                "files": [],
                "reason": "Task 5 needs the Redis client of task 2, which the project does not have yet.",
            },
        ],
        "files_modified": ["src/ratelimit/bucket.py", "tests/test_bucket.py"],
        "summary": "Added the token bucket and its tests; the middleware task is blocked.",
    },
    "ci-analyst": {
        "status": "success",
        "agent": "ci-analyst",
        "failures": [
            {
                "failure_id": "F1",
                "category": "test",
                "confidence": 90,
                "summary": "test_total_with_discount expects 90 and gets 100.",
                "test": {"file": "tests/test_orders.py", "name": "test_total_with_discount", "line": 25},
                "file": "src/orders.py",
                "line": 42,
                "cause": "Order.total() reads the discount before apply_discount() sets it.",
                "fix": "Apply the discount in total(), after apply_discount().",
            },
            {
                "failure_id": "F2",
                "category": "infrastructure",
                "confidence": 85,
                "summary": "The cache service was unreachable: the job could not restore node_modules.",
            },
        ],
        "summary": "One real test failure; the cache outage is the CI's own.",
    },
}
