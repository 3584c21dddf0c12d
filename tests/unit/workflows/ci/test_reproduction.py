"""Which local run reproduces each CI failure, and what the runs said: pure functions of the phases' data."""

from __future__ import annotations

from typing import Any

import pytest

from fixloop.contracts.coordinator import LoopConfig
from fixloop.workflows.ci.reproduction import classified, reproduction_plan, run_record, verdicts

FAILURES = [
    {"id": "F1", "test_id": "tests/t.py::test_a", "kind": "test", "message": "boom", "file": "tests/t.py",
     "line": 3, "details": "E boom", "job": "test", "step": "pytest"},
    {"id": "F2", "test_id": "src/a.py:1:8 F401", "kind": "lint", "message": "unused", "file": "src/a.py",
     "line": 1, "details": "", "job": "lint", "step": "ruff"},
    {"id": "F3", "test_id": "build / tsc", "kind": "step", "message": "failed", "file": None, "line": None,
     "details": "", "job": "build", "step": "tsc"},
    {"id": "F4", "test_id": "test / cache", "kind": "step", "message": "503", "file": None, "line": None,
     "details": "", "job": "test", "step": "cache"},
]  # fmt: skip


def answer(*entries: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "failures": [
            {"failure_id": fid, "category": category, "confidence": 80, "summary": "s", **fields}
            for fid, category, fields in entries
        ]
    }


ANALYSIS = answer(
    ("F1", "test", {}),
    ("F2", "lint", {"file": "src/b.py", "line": 9}),
    ("F3", "build", {}),
    ("F4", "infrastructure", {}),
)


def test_each_failure_is_merged_with_its_classification_without_its_log_lines() -> None:
    items = classified(FAILURES, ANALYSIS)
    assert items[1] == {
        "id": "F2",
        "test_id": "src/a.py:1:8 F401",
        "kind": "lint",
        "message": "unused",
        "file": "src/b.py",  # the analyst found the file at fault
        "line": 9,
        "job": "lint",
        "step": "ruff",
        "category": "lint",
        "confidence": 80,
        "summary": "s",
        "test": None,
        "cause": None,
        "fix": None,
    }
    assert all("details" not in item for item in items)


@pytest.mark.parametrize(
    ("config", "build_check"),
    [(LoopConfig(), "tests"), (LoopConfig(typecheck_command="npx tsc --noEmit"), "typecheck")],
)
def test_the_plan_runs_each_test_once_and_each_check_once(config: LoopConfig, build_check: str) -> None:
    named = ("F5", "test", {"test": {"file": "tests/t.py", "name": "test_a"}})
    analysis = answer(*[(f["failure_id"], f["category"], {}) for f in ANALYSIS["failures"]], named)
    failures = [*FAILURES, {**FAILURES[0], "id": "F5"}]
    plan = reproduction_plan(classified(failures, analysis), config)
    cis_own = {"id": "tests/t.py::test_a", "file": "tests/t.py", "name": "test_a", "line": 3}
    assert plan["tests"] == [cis_own]  # the analyst's name of the same test is the same test
    assert plan["checks"] == ["lint", build_check]
    assert plan["how"] == {
        "F1": {"test": cis_own},
        "F2": {"check": "lint"},
        "F3": {"check": build_check},
        "F5": {"test": {"file": "tests/t.py", "name": "test_a", "line": None}},
    }


def test_a_test_failure_without_a_test_to_name_runs_the_whole_test_command() -> None:
    items = classified([FAILURES[3]], answer(("F4", "test", {})))
    assert reproduction_plan(items, LoopConfig()) == {
        "tests": [],
        "checks": ["tests"],
        "how": {"F4": {"check": "tests"}},
    }


def test_verdicts_say_why_a_failure_did_not_reproduce() -> None:
    test = {"file": "tests/t.py", "name": "test_a", "line": None}
    plan = {
        "how": {
            "F1": {"test": test},
            "F2": {"check": "lint"},
            "F3": {"check": "typecheck"},
            "F4": {"check": "tests"},
        }
    }
    run = {"outcomes": [{"test": test, "outcome": "passed"}], "reason": None}
    checks = {
        "lint": {"status": "failed", "reason": "exit code 1"},
        "typecheck": {"status": "skipped", "reason": "not_configured"},
        "tests": {"status": "timeout", "reason": "timed out after 5s"},
    }
    assert verdicts(plan, {"tests": run, "checks": checks}) == [
        {"id": "F1", "test": test, "reproduced": False, "reason": "it passes locally"},
        {"id": "F2", "check": "lint", "reproduced": True, "reason": None},
        {
            "id": "F3",
            "check": "typecheck",
            "reproduced": False,
            "reason": "typecheck_command is not configured",
        },
        {"id": "F4", "check": "tests", "reproduced": False, "reason": "timed out after 5s"},
    ]
    not_configured = {"outcomes": [{"test": test, "outcome": "error"}], "reason": "not_configured"}
    (only,) = verdicts({"how": {"F1": {"test": test}}}, {"tests": not_configured, "checks": {}})
    assert only["reason"] == "test_command is not configured"


def test_the_run_record_keeps_no_output() -> None:
    tests = {
        "status": "test_failed",
        "reason": None,
        "command": "pytest x",
        "exit_code": 1,
        "duration_ms": 5,
        "output_file": "o.log",
        "failures": [{"message": "boom", "details": "E" * 5000}],
        "output_tail": "x",
    }
    checks = {"lint": {"status": "failed", "command": "ruff", "exit_code": 1, "reason": "exit code 1",
                       "output_tail": "secret-free but long" * 100, "duration_ms": 3}}  # fmt: skip
    assert run_record({"tests": tests, "checks": checks}) == {
        "tests": {"status": "test_failed", "reason": None, "command": "pytest x", "exit_code": 1,
                  "duration_ms": 5, "output_file": "o.log", "first_failure": "boom"},
        "checks": {"lint": {"status": "failed", "command": "ruff", "exit_code": 1, "reason": "exit code 1"}},
    }  # fmt: skip
