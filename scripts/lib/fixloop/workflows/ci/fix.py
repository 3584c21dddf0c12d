"""fix-ci phase 4, fix: the implementer fixes the failures phase 3 reproduced, red then green
(workflows.redgreen).

Red is the engine's own reproduction: the tests and checks that failed locally in phase 3. The implementer
goes straight to the fix; green is those same tests and checks passing (Work "ci-checks"), else the answer is
refused (STILL_FAILING, CHECKS_STILL_FAILING). When nothing reproduced and the user chose to go on, there is
no red yet: the implementer's first stage must be a test that fails locally, as in the bugfix workflow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.contracts.runconfig import COMMAND_FIELDS
from fixloop.workflows.ci.inputs import needs, phase_data
from fixloop.workflows.ci.performers import CI_CHECKS
from fixloop.workflows.ci.reproduce import TRY
from fixloop.workflows.ci.reproduction import fixable
from fixloop.workflows.ci.tasks import implementer_task
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import PhaseFailed, Work
from fixloop.workflows.redgreen import Plan, RedGreenPhase, test_outcomes
from fixloop.workflows.testselect import label
from fixloop.workflows.verdicts import green_problem

PROVEN_BY_REPRODUCTION = "reproduction"
PLAN_DETAIL_LINES = 40


def _reproduced(reproduced: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [item for item in reproduced.get("verdicts") or [] if item.get("reproduced")]


def checks_problem(checks: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """CHECKS_STILL_FAILING naming each check that does not pass after the fix."""
    still = {name: check for name, check in checks.items() if check.get("status") != "passed"}
    if not still:
        return None
    named = [
        f"{name} `{check.get('command')}` ({check.get('reason') or check.get('status')})"
        for name, check in still.items()
    ]
    tails = [f"{name}: {str(check.get('output_tail') or '')[-600:]}" for name, check in still.items()]
    return {
        "code": "CHECKS_STILL_FAILING",
        "message": f"{len(still)} check(s) do not pass after the fix: {', '.join(named)}.",
        "violations": [{"path": "$.files_modified", "message": text} for text in named],
        "failing": sorted(still),
        "hint": "Fix the code (not the checks' configuration) until they pass, then answer stage fix again. "
        + " | ".join(tails),
    }


class FixPhase(RedGreenPhase):
    def plan(self, ctx: PhaseContext) -> Plan | PhaseFailed:
        inputs = needs(ctx, 2, 3)
        if isinstance(inputs, PhaseFailed):
            return inputs
        reproduced = inputs[3]
        ids = {str(item["id"]) for item in _reproduced(reproduced)}
        if not ids and reproduced.get("user_decision") != TRY:
            return PhaseFailed(
                "NOT_REPRODUCIBLE_LOCALLY",
                "Phase 3 reproduced none of the failures locally, so no fix can be proven: run phase 3 again "
                "once the checkout matches the CI (--phase=3,4).",
                details={"recoverable": False},
            )
        details = {str(item["id"]): item for item in (phase_data(ctx, 1) or {}).get("failures") or []}
        failures = []
        for item in fixable(reproduced.get("items") or []):
            if ids and str(item["id"]) not in ids:
                continue
            lines = str((details.get(str(item["id"])) or {}).get("details") or "").splitlines()
            failures.append({**item, "log_excerpt": lines[:PLAN_DETAIL_LINES]})
        ctx.data["to_fix"] = [item["id"] for item in failures]
        return {"failures": failures, "summary": (inputs[2].get("analysis") or {}).get("summary")}

    def failing(self, ctx: PhaseContext) -> list[dict[str, Any]]:
        found = _reproduced(phase_data(ctx, 3) or {})
        ctx.data["checks"] = list(dict.fromkeys(str(item["check"]) for item in found if "check" in item))
        tests = {label(item["test"]): dict(item["test"]) for item in found if "test" in item}
        return list(tests.values())

    def proven_red(self, ctx: PhaseContext) -> dict[str, Any] | None:
        reproduced = phase_data(ctx, 3) or {}
        if not _reproduced(reproduced):
            return None
        failing = ctx.data.get("failing") or []
        run = reproduced.get("run") or {}
        tests_run = run.get("tests") or {}
        return {
            "test": failing[0] if failing else None,
            "run": tests_run or None,
            "checks": {name: run.get("checks", {}).get(name) for name in ctx.data.get("checks") or []},
            "message": tests_run.get("first_failure"),
            "proven_by": PROVEN_BY_REPRODUCTION,
        }

    def needs_test_command(self, ctx: PhaseContext) -> bool:
        return bool(ctx.data.get("failing")) or not ctx.data.get("red")

    def task(self, ctx: PhaseContext, plan: Plan) -> str:
        command = str(ctx.config.test_command or "")
        data = ctx.data
        return implementer_task(plan, data["failing"], data.get("checks") or [], data.get("red"), command)

    def changed_files(self, ctx: PhaseContext, document: Mapping[str, Any]) -> set[str]:
        red = ctx.data["red"]
        files = set(document.get("files_modified") or [])
        if red.get("proven_by") != PROVEN_BY_REPRODUCTION and red.get("test"):
            files.add(red["test"]["file"])  # the implementer's own test
        return files

    def errors_fixed(self, ctx: PhaseContext) -> int:
        return len(ctx.data.get("to_fix") or [])

    def green_work(self, ctx: PhaseContext, params: dict[str, Any]) -> Work:
        red = ctx.data["red"]
        named = [red["test"]] if red.get("test") else []
        tests = {label(test): dict(test) for test in [*named, *(ctx.data.get("failing") or [])]}
        checks = list(ctx.data.get("checks") or [])
        return Work(
            CI_CHECKS, {**params, "purpose": "green", "tests": list(tests.values()), "checks": checks}
        )

    def green_problem(self, ctx: PhaseContext, work: Any) -> dict[str, Any] | None:
        result: Mapping[str, Any] = work if isinstance(work, Mapping) else {}
        tests = result.get("tests")
        if isinstance(tests, Mapping):
            problem = green_problem(test_outcomes(tests), tests)
            if problem is not None:
                return problem
        return checks_problem(result.get("checks") or {})

    def green_record(self, ctx: PhaseContext, work: Any) -> dict[str, Any]:
        result: Mapping[str, Any] = work if isinstance(work, Mapping) else {}
        tests = result.get("tests")
        run = super().green_record(ctx, tests) if isinstance(tests, Mapping) else {"run": None, "tests": []}
        statuses = {name: check.get("status") for name, check in (result.get("checks") or {}).items()}
        return {**run, "checks": statuses, "commands": [COMMAND_FIELDS[name] for name in statuses]}
