"""The task text of each fix-ci agent: what to do, the inputs, and the contract its answer follows.

What an agent reads of a CI log is only what the engine kept of it (workflows.ci.logfailures): the failures,
each at most its bounded lines, with the log's path and an account of what was left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.contracts.bugfix import IMPLEMENTER
from fixloop.contracts.ci import CI_ANALYST, CI_CATEGORIES
from fixloop.workflows.tasktext import json_text, sections
from fixloop.workflows.testselect import detect_runner, label

DETAIL_LINES = 200


def source_text(source: Mapping[str, Any] | None) -> str:
    if not source:
        return "(unknown)"
    if source.get("source") != "github":
        return f"A CI job's log file: {source.get('log_file')}"
    run = source["run"]
    job = source.get("job")
    text = f"GitHub Actions run {run['id']} of workflow {run.get('workflow')!r} ({run.get('url')})"
    text += f", job {job['name']!r}" if isinstance(job, Mapping) else ""
    text += f", on commit {str(run.get('head_sha'))[:12]} of branch {run.get('head_branch')}"
    if not source.get("sha_match"):
        text += f"; the checkout is at {str(source.get('local_head') or 'no commit')[:12]}, not that commit"
    return text


def log_text(log: Mapping[str, Any]) -> str:
    lines = [
        f"Whole log: {log.get('path')} ({log.get('bytes')} bytes, {log.get('lines_read')} lines); "
        f"kept below: {log.get('lines_kept')} lines.",
    ]
    if log.get("failures_dropped"):
        lines.append(f"{log['failures_dropped']} more failure(s) were left out.")
    lines += [f"- {note}" for note in log.get("notes") or []]
    return "\n".join(lines)


def ci_failures_text(failures: Sequence[Mapping[str, Any]], detail_lines: int = DETAIL_LINES) -> str:
    """Each failure as a block: its id, where the log shows it, its message, then its kept lines."""
    blocks = []
    for failure in failures:
        where = (
            " / ".join(str(part) for part in (failure.get("job"), failure.get("step")) if part) or "the log"
        )
        place = failure.get("file") or ""
        if place and failure.get("line"):
            place += f":{failure['line']}"
        lines = [f"{failure['id']}. {failure.get('test_id')} ({failure.get('kind')}) in {where}"]
        if place:
            lines[0] += f" at {place}"
        lines.append(f"   {failure.get('message')}")
        details = str(failure.get("details") or "").splitlines()[:detail_lines]
        lines += [f"   | {line}" for line in details]
        if failure.get("lines_dropped"):
            lines.append(f"   ({failure['lines_dropped']} more lines of it are in the whole log)")
        blocks.append("\n".join(lines))
    return "\n".join(blocks) or "(none)"


def analyst_task(source: Mapping[str, Any] | None, fetched: Mapping[str, Any]) -> str:
    return sections(
        [
            "Classify each failure of this CI job below into one category: " + ", ".join(CI_CATEGORIES) + ".",
            "Say how sure you are of each. For a test failure, name the test so that the engine can run it "
            "locally; point to the faulty code and the fix when you find them. Change no file.",
        ],
        [
            ("The CI job", source_text(source)),
            ("The log", log_text(fetched.get("log") or {})),
            ("Failures", ci_failures_text(fetched.get("failures") or [])),
        ],
        CI_ANALYST,
    )


def _running(test_command: str, tests: Sequence[Mapping[str, Any]], checks: Sequence[str]) -> str:
    runner = detect_runner(test_command) or "the project's runner"
    lines = []
    if test_command:
        lines.append(f"Tests run with `{test_command}`, a test selected by the name {runner} gives it.")
    if tests:
        lines.append("Tests that failed locally: " + ", ".join(label(test) for test in tests) + ".")
    if checks:
        lines.append("Checks that failed locally (the project's commands): " + ", ".join(checks) + ".")
    return "\n".join(lines) or "(nothing configured)"


def implementer_task(
    plan: Mapping[str, Any],
    failing: Sequence[Mapping[str, Any]],
    checks: Sequence[str],
    red: Mapping[str, Any] | None,
    test_command: str,
) -> str:
    if red is None:
        what = [
            "Fix the CI failures below in two stages. The engine could not reproduce them locally, so no fix "
            "is taken before a test proves the failure here.",
            "Stage 1: add or change a test that reproduces the failure; do not touch the code under test. "
            'Answer with stage "test" and that test. The engine runs exactly that test: it must fail now, or '
            "your answer is refused.",
            'Stage 2, once the engine confirms the test fails: fix the code and answer with stage "fix" and '
            "the files you changed. The engine then runs your test again; it must pass.",
        ]
    else:
        what = [
            "Fix the CI failures below. The engine reproduced them locally (red): the tests and checks named "
            "below fail now. Fix the code (never the tests or the checks' configuration to hide a failure), "
            'and answer with stage "fix" and the files you changed. The engine then runs the same tests and '
            "checks; all must pass.",
        ]
    return sections(
        what,
        [
            ("Failures to fix", json_text(list(plan.get("failures") or []))),
            ("What the analyst found in common", str(plan.get("summary") or "(nothing)")),
            ("Running tests and checks", _running(test_command, failing, checks)),
        ],
        IMPLEMENTER,
    )
