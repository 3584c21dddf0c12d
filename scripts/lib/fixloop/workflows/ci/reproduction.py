"""Which local run reproduces each CI failure, and whether it did: pure functions of the phases' data.

A failure the analyst calls a test failure is reproduced by running that test (the analyst's name for it,
else the CI's own id of a failed test) with the configured test command narrowed to it; one without a test
to name, by the whole test command. A lint failure is reproduced by lint_command, a type failure by
typecheck_command, a build failure by typecheck_command when there is one, else by the whole test command.
Flaky and infrastructure failures are not reproduced: fixloop does not change code for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.contracts.ci import FIXABLE_CATEGORIES
from fixloop.contracts.runconfig import COMMAND_FIELDS, RunConfig
from fixloop.workflows.testselect import from_failure, label

ITEM_FIELDS = ("test_id", "kind", "message", "file", "line", "job", "step")
ANALYST_FIELDS = ("category", "confidence", "summary", "test", "cause", "fix")
CHECK_FOR = {"lint": "lint", "type": "typecheck"}
WHY_NOT = {
    "passed": "it passes locally",
    "not_run": "no such test runs locally",
    "error": "the local test run broke before it reported the test",
}


def classified(failures: Sequence[Mapping[str, Any]], analysis: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each CI failure (without its log lines) with the analyst's classification of it."""
    answers = {str(item.get("failure_id")): item for item in analysis.get("failures") or []}
    items = []
    for failure in failures:
        answer = answers.get(str(failure["id"])) or {}
        item = {"id": failure["id"], **{key: failure.get(key) for key in ITEM_FIELDS}}
        item.update({key: answer.get(key) for key in ANALYST_FIELDS})
        if answer.get("file"):
            item["file"], item["line"] = answer["file"], answer.get("line")
        items.append(item)
    return items


def fixable(items: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [item for item in items if item.get("category") in FIXABLE_CATEGORIES]


def named_test(item: Mapping[str, Any]) -> dict[str, Any] | None:
    """The test that reproduces a test failure: the analyst's, else the CI's failed test."""
    test = item.get("test")
    if isinstance(test, Mapping) and test.get("name"):
        return {"file": test.get("file"), "name": test.get("name"), "line": test.get("line")}
    if item.get("kind") == "test" and item.get("test_id"):
        return from_failure(item)
    return None


def check_for(item: Mapping[str, Any], config: RunConfig) -> str:
    category = str(item.get("category"))
    if category in CHECK_FOR:
        return CHECK_FOR[category]
    if category == "build" and config.typecheck_command and config.typecheck_command.strip():
        return "typecheck"
    return "tests"


def reproduction_plan(items: Sequence[Mapping[str, Any]], config: RunConfig) -> dict[str, Any]:
    """{"tests": named tests to run, "checks": commands to run, "how": failure id -> {"test"} | {"check"}}."""
    tests: dict[str, dict[str, Any]] = {}
    checks: list[str] = []
    how: dict[str, dict[str, Any]] = {}
    for item in fixable(items):
        test = named_test(item) if item.get("category") == "test" else None
        if test is not None:
            tests.setdefault(label(test), test)
            how[str(item["id"])] = {"test": test}
        else:
            check = check_for(item, config)
            checks += [] if check in checks else [check]
            how[str(item["id"])] = {"check": check}
    return {"tests": list(tests.values()), "checks": checks, "how": how}


def _test_verdict(test: Mapping[str, Any], run: Mapping[str, Any] | None) -> tuple[bool, str | None]:
    outcomes = {label(entry["test"]): entry["outcome"] for entry in (run or {}).get("outcomes") or []}
    found = outcomes.get(label(test), "error")
    if found == "failed":
        return True, None
    if run and run.get("reason") == "not_configured":
        return False, "test_command is not configured"
    return False, WHY_NOT.get(found, found)


def _check_verdict(check: str, result: Mapping[str, Any] | None) -> tuple[bool, str | None]:
    status = (result or {}).get("status")
    if status == "failed":
        return True, None
    if status == "passed":
        return False, "it passes locally"
    if (result or {}).get("reason") == "not_configured":
        return False, f"{COMMAND_FIELDS[check]} is not configured"
    if (result or {}).get("reason") == "untrusted":
        return False, f"{COMMAND_FIELDS[check]} is not approved"
    return False, str((result or {}).get("reason") or "it did not run")


def verdicts(plan: Mapping[str, Any], result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """For each failure of the plan: {"id", "reproduced", "test" or "check", "reason" (when not)}."""
    found = []
    checks = result.get("checks") or {}
    for failure_id, how in plan["how"].items():
        if "test" in how:
            reproduced, reason = _test_verdict(how["test"], result.get("tests"))
        else:
            reproduced, reason = _check_verdict(how["check"], checks.get(how["check"]))
        found.append({"id": failure_id, **how, "reproduced": reproduced, "reason": reason})
    return found


def run_record(result: Mapping[str, Any]) -> dict[str, Any]:
    """What the run state keeps of a reproduction: each command, how it ended, and where its output is."""
    tests = result.get("tests")
    kept: dict[str, Any] = {"tests": None, "checks": {}}
    if isinstance(tests, Mapping):
        fields = ("status", "reason", "command", "exit_code", "duration_ms", "output_file")
        kept["tests"] = {key: tests.get(key) for key in fields}
        messages = [str(item.get("message") or "") for item in tests.get("failures") or []]
        kept["tests"]["first_failure"] = messages[0] if messages else None
    for name, check in (result.get("checks") or {}).items():
        kept["checks"][name] = {key: check.get(key) for key in ("status", "command", "exit_code", "reason")}
    return kept
