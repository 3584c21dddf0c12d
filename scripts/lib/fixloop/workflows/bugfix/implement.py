"""Bugfix phase 4, implement: red, then green, each proven by the engine's own test runs.

Stage test: the implementer adds or changes a test that reproduces the failure; the engine runs exactly
that test (Work "tests", a command it builds from the configured `test_command`) and accepts the answer only
when the test FAILS, then sends the agent on to fix the code. Stage fix: the engine runs the new test and the
tests that failed in phase 0; all must PASS, else the answer is refused with STILL_FAILING. Green ends the
phase with `errors_fixed` and `files_changed`. An implementer that stopped before green is dispatched again,
at most MAX_DISPATCHES times in all; then IMPLEMENTATION_FAILED. A dry run skips the phase.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.contracts.bugfix import IMPLEMENTER
from fixloop.review.record import MAX_INVALID_ATTEMPTS
from fixloop.workflows.bugfix.collect import COMMAND_FAILURE, TESTS
from fixloop.workflows.bugfix.consult import closed, dispatch, dispatches
from fixloop.workflows.bugfix.inputs import needs, phase_data
from fixloop.workflows.bugfix.tasks import implementer_task, red_proven
from fixloop.workflows.bugfix.verdicts import green_problem, red_not_proven, red_problem
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed, Work
from fixloop.workflows.phase import Phase
from fixloop.workflows.testselect import from_failure, label

MAX_DISPATCHES = 3
IMPLEMENTER_ROLE = "implementer"  # the config's `models` role of agents that change code to a plan
RUN_FIELDS = ("status", "command", "exit_code", "duration_ms", "output_file")


def _named(test: Mapping[str, Any]) -> dict[str, Any]:
    return {"file": test.get("file"), "name": test.get("name"), "line": test.get("line")}


def _run_summary(run: Mapping[str, Any]) -> dict[str, Any]:
    return {key: run.get(key) for key in RUN_FIELDS}


class ImplementPhase(Phase):
    agents = (IMPLEMENTER,)

    def step(self, ctx: PhaseContext) -> Outcome:
        if ctx.dry_run:
            return PhaseDone("skipped", {"reason": "dry_run"})
        inputs = needs(ctx, 2)
        if isinstance(inputs, PhaseFailed):
            return inputs
        command = ctx.config.test_command
        if not command or not command.strip():
            return PhaseFailed(
                "TESTS_NOT_CONFIGURED",
                "The fix cannot be proven without tests: set test_command in .claude/fixloop.json, then run "
                "this phase again.",
                details={"recoverable": False},
            )
        data = ctx.data
        if "failing" not in data:
            failures = (phase_data(ctx, 0) or {}).get("failures") or []
            data["failing"] = [
                from_failure(item) for item in failures if item.get("test_id") != COMMAND_FAILURE
            ]
        answered = closed(ctx, IMPLEMENTER)
        if data.get("green"):
            return PhaseDone(
                "success",
                {
                    "errors_fixed": data["errors_fixed"],
                    "files_changed": data["files_changed"],
                    "test": label(data["red"]["test"]),
                },
            )
        if answered:
            document = ctx.document(IMPLEMENTER) or {}
            error = document.get("error") or {}
            if document.get("status") == "failed" and not error.get("recoverable"):
                return self._failed(ctx, f"the implementer could not work: {error.get('message')}")
        if dispatches(ctx, IMPLEMENTER) >= MAX_DISPATCHES:
            return self._failed(ctx, f"no green after {MAX_DISPATCHES} implementer calls")
        data["invalid_before_fix"] = 0
        stage = "fix" if data.get("red") else "test"
        return dispatch(
            ctx,
            IMPLEMENTER,
            "Fix the code" if stage == "fix" else "Reproduce, then fix",
            implementer_task(inputs[2]["design"], data["failing"], data.get("red"), command),
            f"implement the fix ({'fix' if stage == 'fix' else 'test first'})",
            IMPLEMENTER_ROLE,
        )

    def _failed(self, ctx: PhaseContext, why: str) -> PhaseFailed:
        record = ctx.result(IMPLEMENTER) or {}
        return PhaseFailed(
            "IMPLEMENTATION_FAILED",
            f"The fix was not implemented: {why}.",
            details={
                "red_proven": bool(ctx.data.get("red")),
                "last_error": record.get("last_error"),
                "recoverable": False,
            },
        )

    # ---- answers, checked by the engine's test runs ------------------------------------------------

    def gate(self, ctx: PhaseContext, agent: str, document: Mapping[str, Any]) -> Work | None:
        if agent != IMPLEMENTER or document.get("status") != "success":
            return None
        params: dict[str, Any] = {"phase": ctx.phase_key, "total_steps": 2}
        if document.get("stage") == "test":
            return Work(
                TESTS, {**params, "purpose": "red", "step_index": 1, "tests": [_named(document["test"])]}
            )
        red = ctx.data.get("red")
        if red is None:
            return None  # refused in record: no red yet
        tests = {label(test): dict(test) for test in [red["test"], *(ctx.data.get("failing") or [])]}
        return Work(TESTS, {**params, "purpose": "green", "step_index": 2, "tests": list(tests.values())})

    def judge(
        self, ctx: PhaseContext, agent: str, document: Mapping[str, Any], work: Any
    ) -> tuple[dict[str, Any] | None, str | None]:
        run: Mapping[str, Any] = work if isinstance(work, Mapping) else {}
        outcomes = [item for item in run.get("outcomes") or [] if isinstance(item, Mapping)]
        if document.get("stage") == "test":
            test = _named(document["test"])
            outcome = outcomes[0]["outcome"] if outcomes else "error"
            problem = red_problem(test, outcome, run)
            if problem is not None:
                return problem, None
            message = next((f.get("message") for f in run.get("failures") or []), None)
            ctx.data["red"] = {"test": test, "run": _run_summary(run), "message": message}
            ctx.data.pop("green", None)
            return None, red_proven(test, message)
        red = ctx.data.get("red")
        if red is None:
            return red_not_proven(), None
        problem = green_problem(outcomes, run)
        if problem is not None:
            return problem, None
        plan = (phase_data(ctx, 3) or {}).get("document")
        files = {*(document.get("files_modified") or []), red["test"]["file"]} - {plan}
        failing = ctx.data.get("failing") or []
        ctx.data["green"] = {"run": _run_summary(run), "tests": [label(item["test"]) for item in outcomes]}
        ctx.data["files_changed"] = sorted(str(item) for item in files if item)
        ctx.data["errors_fixed"] = len(failing)
        return None, None

    def record(
        self,
        ctx: PhaseContext,
        agent: str,
        document: Mapping[str, Any] | None,
        error: Mapping[str, Any] | None,
        *,
        provenance: str,
        agent_id: str | None,
    ) -> dict[str, Any]:
        fix = document is not None and document.get("stage") == "fix" and document.get("status") == "success"
        if fix and not ctx.data.get("red"):
            document, error = None, red_not_proven()
        answer = super().record(ctx, agent, document, error, provenance=provenance, agent_id=agent_id)
        record = ctx.result(agent) or {}
        if answer["valid"] and document is not None and document.get("stage") == "test":
            ctx.data["invalid_before_fix"] = int(record.get("invalid_attempts") or 0)
        elif not answer["valid"] and ctx.data.get("red") and not ctx.data.get("green"):
            # The accepted red answer is kept, which alone would end the retries: the fix stage gets its own.
            tries = int(record.get("invalid_attempts") or 0) - int(ctx.data.get("invalid_before_fix") or 0)
            answer["retry"] = tries < MAX_INVALID_ATTEMPTS
            answer["hint"] = (error or {}).get("hint")
        return answer
