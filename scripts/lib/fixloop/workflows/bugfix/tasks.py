"""The task text of each bugfix agent: what to do, the inputs, and the contract its answer follows.

The contract part is generated from the agent's model (`contract_text`); nothing here restates it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.contracts.bugfix import (
    FAILURE_ANALYST,
    FIX_DESIGNER,
    IMPLEMENTER,
    ROOT_CAUSE_ANALYST,
    categories_for,
)
from fixloop.workflows.tasktext import failures_text, json_text, sections
from fixloop.workflows.testselect import detect_runner, label

ANALYSIS_DETAIL_LINES = 200
PLAN_DETAIL_LINES = 40
PLAN_KEYS = ("summary", "changes", "test", "risks")  # what of the design the implementer is given


def _description(text: str | None) -> str:
    return text.strip() if text and text.strip() else "(none)"


def _test_run(run: Mapping[str, Any] | None) -> str:
    if not run:
        return "not run"
    if run.get("status") == "not_run":
        return f"not run ({run.get('reason')})"
    text = (
        f"`{run.get('command')}` exited {run.get('exit_code')} ({run.get('status')}); "
        f"whole output: {run.get('output_file')}"
    )
    if run.get("not_selected"):
        text += f"; the named tests could not run alone ({run['not_selected']}), so the whole suite ran"
    return text


def _failures(collected: Mapping[str, Any], detail_lines: int) -> str:
    """The failures the phase kept, after a line saying how many the run showed and which these are."""
    failures = collected.get("failures") or []
    total = (collected.get("test_run") or {}).get("failures_total")
    given = len(failures)
    listed = failures_text(failures, detail_lines)
    if not given:
        return listed
    if not isinstance(total, int) or total <= given:
        count = f"The test run showed {given} failure{'s' if given != 1 else ''}; all are below."
    else:
        count = (
            f"The test run showed {total} failures; you are given the first {given} (1 to {given}, in the "
            f"order the runner printed them). The other {total - given} are only in the whole output."
        )
    return f"{count}\n{listed}"


def analyst_task(stack: object, collected: Mapping[str, Any]) -> str:
    categories = ", ".join(categories_for(stack))
    return sections(
        [
            f"Classify each failure of this {stack or 'mixed'} project's tests, and each failure the user "
            "describes, into one category: " + categories + ".",
            "Read the failing tests and the code they exercise as needed; change no file.",
        ],
        [
            ("Test run", _test_run(collected.get("test_run"))),
            ("Failures", _failures(collected, ANALYSIS_DETAIL_LINES)),
            ("The user's description", _description(collected.get("description"))),
        ],
        FAILURE_ANALYST,
    )


def root_cause_task(collected: Mapping[str, Any]) -> str:
    return sections(
        [
            "Find the root cause of the failures below: the faulty code, not the symptom. Read the code, its "
            "callers and its history (git log, git blame); the engine ran the tests below. Change no file.",
            "Score how sure you are honestly: the engine decides from your scores whether the fix goes on.",
        ],
        [
            ("Test run", _test_run(collected.get("test_run"))),
            ("Failures", _failures(collected, ANALYSIS_DETAIL_LINES)),
            ("Classification", json_text((collected.get("analysis") or {}).get("failures") or [])),
            ("The user's description", _description(collected.get("description"))),
        ],
        ROOT_CAUSE_ANALYST,
    )


def designer_task(collected: Mapping[str, Any], diagnosis: Mapping[str, Any]) -> str:
    return sections(
        [
            "Design the smallest fix of the root cause below. Name every file to change and how, the one "
            "test that fails now and will pass once fixed (an existing test, or one to add), the risks, "
            "and the approaches you rejected. Change no file.",
        ],
        [
            ("Root cause", json_text(diagnosis.get("root_cause") or {})),
            ("Failures", failures_text(collected.get("failures") or [], PLAN_DETAIL_LINES)),
            ("The user's description", _description(collected.get("description"))),
        ],
        FIX_DESIGNER,
    )


def implementer_task(
    design: Mapping[str, Any],
    failing: Sequence[Mapping[str, Any]],
    red: Mapping[str, Any] | None,
    test_command: str,
) -> str:
    originals = "\n".join(f"- {label(test)}" for test in failing) or "(none recorded)"
    runner = detect_runner(test_command) or "the project's runner"
    command = f"The engine runs tests with `{test_command}`, selecting a test by the name {runner} gives it."
    if red is None:
        what = [
            "Implement the fix plan below in two stages.",
            "Stage 1: add or change the test that reproduces the failure; do not touch the code under "
            'test yet. Answer with stage "test" and that test. The engine runs exactly that test: it must '
            "fail now, or your answer is refused.",
            'Stage 2, once the engine confirms the test fails: fix the code, and answer with stage "fix" '
            "and the files you changed. The engine then runs your test and the tests that failed before; "
            "all must pass.",
        ]
    else:
        what = [
            f"The test {label(red['test'])} fails before the fix, as the engine confirmed (red). Now fix the "
            'code according to the plan below, keep the test, and answer with stage "fix" and the files you '
            "changed. The engine runs your test and the tests that failed before; all must pass.",
        ]
    return sections(
        what,
        [
            ("Fix plan", json_text({key: design.get(key) for key in PLAN_KEYS})),
            ("Tests that failed before", originals),
            ("Running tests", command),
        ],
        IMPLEMENTER,
    )
