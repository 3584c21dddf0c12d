"""Bugfix phase 4, implement: red, then green, each proven by the engine's own test runs (workflows.redgreen).

Stage test: the implementer adds or changes a test that reproduces the failure; the engine runs exactly that
test and accepts the answer only when the test FAILS. Stage fix: the engine runs the new test and the tests
that failed in phase 0; all must PASS. The files changed are the implementer's and its test, never the fix
plan document of phase 3.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.workflows.bugfix.inputs import needs, phase_data
from fixloop.workflows.bugfix.tasks import implementer_task
from fixloop.workflows.bugfix.tooluse import tests_ran
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import PhaseFailed
from fixloop.workflows.redgreen import Plan, RedGreenPhase
from fixloop.workflows.testrun import COMMAND_FAILURE
from fixloop.workflows.testselect import from_failure


class ImplementPhase(RedGreenPhase):
    def plan(self, ctx: PhaseContext) -> Plan | PhaseFailed:
        inputs = needs(ctx, 2)
        if isinstance(inputs, PhaseFailed):
            return inputs
        design: dict[str, Any] = inputs[2]["design"]
        return design

    def failing(self, ctx: PhaseContext) -> list[dict[str, Any]]:
        failures = (phase_data(ctx, 0) or {}).get("failures") or []
        return [from_failure(item) for item in failures if item.get("test_id") != COMMAND_FAILURE]

    def task(self, ctx: PhaseContext, plan: Plan) -> str:
        command = str(ctx.config.test_command or "")
        return implementer_task(plan, ctx.data["failing"], ctx.data.get("red"), command)

    def judge(
        self, ctx: PhaseContext, agent: str, document: Mapping[str, Any], work: Any
    ) -> tuple[dict[str, Any] | None, str | None]:
        tests_ran(ctx, work)
        return super().judge(ctx, agent, document, work)

    def changed_files(self, ctx: PhaseContext, document: Mapping[str, Any]) -> set[str]:
        plan = (phase_data(ctx, 3) or {}).get("document")
        return super().changed_files(ctx, document) - {plan}
