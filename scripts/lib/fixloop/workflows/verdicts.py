"""The engine's verdicts on the implementer's stages (bugfix, fix-ci), from the runs it made: the problem
that refuses an answer (TEST_PASSES_BEFORE_FIX, TEST_NOT_FOUND, TEST_NOT_RUN, STILL_FAILING, RED_NOT_PROVEN),
each with violations and a hint the agent is sent back with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.workflows.testselect import label

MAX_NAMED = 10


def _where(run: Mapping[str, Any]) -> str:
    return f"the engine ran `{run.get('command')}`; whole output: {run.get('output_file')}"


def _first_message(run: Mapping[str, Any]) -> str:
    failures = run.get("failures") or []
    return str(failures[0].get("message") or "") if failures else str(run.get("reason") or "")


def red_problem(test: Mapping[str, Any], outcome: str, run: Mapping[str, Any]) -> dict[str, Any] | None:
    """None when the test fails before the fix (red proven); else why the answer is refused."""
    name = label(test)
    if outcome == "failed":
        return None
    if outcome == "passed":
        return {
            "code": "TEST_PASSES_BEFORE_FIX",
            "message": f"The test {name} passes before the fix: it does not reproduce the failure.",
            "violations": [{"path": "$.test", "message": f"{name} passes before the fix"}],
            "hint": (
                "A test that proves the fix must fail now, for the reason the root cause gives. Change the "
                "test so that it reproduces the failure (do not fix the code yet), then answer stage test "
                f"again; {_where(run)}."
            ),
        }
    if outcome == "not_run":
        return {
            "code": "TEST_NOT_FOUND",
            "message": f"No test named {name} ran.",
            "violations": [{"path": "$.test", "message": f"selects no test: {name}"}],
            "hint": f"Give the test's exact file and name, as its runner names it; {_where(run)}.",
        }
    return {
        "code": "TEST_NOT_RUN",
        "message": f"The test run broke before it reported {name}: {_first_message(run) or 'no output'}.",
        "violations": [{"path": "$.test", "message": "the run did not report this test"}],
        "hint": f"Make the test file load and the test run, then answer stage test again; {_where(run)}.",
    }


def green_problem(outcomes: Sequence[Mapping[str, Any]], run: Mapping[str, Any]) -> dict[str, Any] | None:
    """None when every test the engine ran after the fix passed; else STILL_FAILING naming them."""
    if not outcomes:
        why = _first_message(run) or "no result"
        return {
            "code": "TEST_NOT_RUN",
            "message": f"The engine could not run the tests after the fix: {why}.",
            "violations": [{"path": "$.files_modified", "message": "no test result after the fix"}],
            "hint": f"Make the tests run, then answer stage fix again; {_where(run)}.",
        }
    still = [item for item in outcomes if item.get("outcome") != "passed"]
    if not still:
        return None
    named = [f"{label(item['test'])} ({item['outcome']})" for item in still[:MAX_NAMED]]
    more = f" and {len(still) - MAX_NAMED} more" if len(still) > MAX_NAMED else ""
    first = _first_message(run)
    return {
        "code": "STILL_FAILING",
        "message": f"{len(still)} test(s) do not pass after the fix: {', '.join(named)}{more}.",
        "violations": [{"path": "$.files_modified", "message": text} for text in named],
        "failing": [label(item["test"]) for item in still[:MAX_NAMED]],
        "hint": (
            "Fix the code (not the tests) until these pass, then answer stage fix again"
            + (f". First failure: {first}" if first else "")
            + f"; {_where(run)}."
        ),
    }


def red_not_proven() -> dict[str, Any]:
    return {
        "code": "RED_NOT_PROVEN",
        "message": "A fix was answered before the engine saw the new test fail.",
        "violations": [{"path": "$.stage", "message": "stage fix before a test that fails was accepted"}],
        "hint": (
            'First answer stage "test" with the test that reproduces the failure: it must fail before '
            "the fix."
        ),
    }
