"""fix-ci phase 3, find the root cause locally: the engine reproduces the failures the analyst says the code
causes (Work "ci-checks", workflows.ci.reproduction) and records, per failure, whether it did.

Flaky and infrastructure failures are never fixed (WARNING CI_FAILURES_NOT_FIXED); when nothing else failed
the run ends there. Failures that do not fail locally are not fixed either (WARNING
NOT_REPRODUCIBLE_LOCALLY). When none reproduces, the user is asked whether the implementer should first
write a test that fails locally (the fix is then proven by that test); unattended, or told to stop, the run
ends without a change (`not_reproducible_locally`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.workflows.ci.inputs import needs
from fixloop.workflows.ci.performers import CI_CHECKS
from fixloop.workflows.ci.reproduction import classified, fixable, reproduction_plan, run_record, verdicts
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Ask, Option, Outcome, PhaseDone, PhaseFailed, RunDone, Work
from fixloop.workflows.phase import Phase

NOT_REPRODUCED = "not_reproduced"  # the question's context
TRY, STOP = "write_a_test", "stop"


def _ids(items: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(str(item["id"]) for item in items)


class ReproducePhase(Phase):
    def step(self, ctx: PhaseContext) -> Outcome:
        inputs = needs(ctx, 1, 2)
        if isinstance(inputs, PhaseFailed):
            return inputs
        data = ctx.data
        if "items" not in data:
            data["items"] = classified(inputs[1].get("failures") or [], inputs[2]["analysis"])
            self._not_fixed(ctx)
        if not fixable(data["items"]):
            data["final_lines"] = ["No failure of the job is in the code: nothing to fix locally."]
            return RunDone("success", "success", "nothing_to_fix_locally", self._summary(data))
        if "verdicts" not in data:
            plan = data.setdefault("plan", reproduction_plan(data["items"], ctx.config))
            result = ctx.work_result(CI_CHECKS)
            if result is None:
                params = {"purpose": "reproduce", "tests": plan["tests"], "checks": plan["checks"]}
                return Work(CI_CHECKS, {**params, "phase": ctx.phase_key})
            data["verdicts"] = verdicts(plan, result)
            data["run"] = run_record(result)
            ctx.forget_work(CI_CHECKS)
            self._reported(ctx)
        if any(item["reproduced"] for item in data["verdicts"]):
            return PhaseDone("success", self._summary(data))
        return self._none_reproduced(ctx)

    def _not_fixed(self, ctx: PhaseContext) -> None:
        left = [item for item in ctx.data["items"] if item not in fixable(ctx.data["items"])]
        ctx.data["not_fixed"] = [item["id"] for item in left]
        if left:
            named = ", ".join(f"{item['id']} ({item['category']})" for item in left)
            ctx.warn(
                "CI_FAILURES_NOT_FIXED",
                f"{named}: flaky and infrastructure failures are not fixed in the code; re-run the job "
                "(e.g. `gh run rerun RUN --failed`) or fix the CI setup.",
                impact="these failures are reported, not fixed",
                failures=[item["id"] for item in left],
            )

    def _reported(self, ctx: PhaseContext) -> None:
        found = ctx.data["verdicts"]
        missed = [item for item in found if not item["reproduced"]]
        result = {
            "reproduced": [item["id"] for item in found if item["reproduced"]],
            "not_reproduced": [item["id"] for item in missed],
        }
        ctx.emit("I", "ANALYSIS_RESULT", analysis_type="ci_reproduction", result=result)
        if missed:
            why = "; ".join(f"{item['id']}: {item['reason']}" for item in missed)
            ctx.warn(
                "NOT_REPRODUCIBLE_LOCALLY",
                f"{len(missed)} failure(s) did not fail locally ({why}); fixloop does not fix what it cannot "
                "see failing.",
                impact="these failures are not fixed",
                failures=result["not_reproduced"],
            )

    def _none_reproduced(self, ctx: PhaseContext) -> Outcome:
        data = ctx.data
        summary = self._summary(data)
        can_try = bool(ctx.config.test_command and ctx.config.test_command.strip())
        choice = ctx.answer(NOT_REPRODUCED) if can_try else STOP
        if choice is None:
            return Ask(
                NOT_REPRODUCED,
                f"None of the failures ({_ids(fixable(data['items']))}) fails locally. Let the implementer "
                "first write a test that fails here, and fix the code only once it does?",
                (
                    Option(TRY, "A test must fail locally first; the fix must make it pass."),
                    Option(STOP, "Stop here; nothing is changed."),
                ),
                STOP,
            )
        if choice == TRY:
            data["user_decision"] = TRY
            return PhaseDone("success", {**summary, "user_decision": TRY})
        data["final_lines"] = [
            "The failures did not reproduce locally, so nothing was changed: check out the CI's commit, or "
            "match its environment (versions, services, variables), and run fix-ci again."
        ]
        return RunDone("partial", "partial", "not_reproducible_locally", summary)

    def _summary(self, data: dict[str, Any]) -> dict[str, Any]:
        found = data.get("verdicts") or []
        return {
            "fixable": [item["id"] for item in fixable(data["items"])],
            "not_fixed": list(data.get("not_fixed") or []),
            "reproduced": [item["id"] for item in found if item["reproduced"]],
            "not_reproduced": [item["id"] for item in found if not item["reproduced"]],
        }
