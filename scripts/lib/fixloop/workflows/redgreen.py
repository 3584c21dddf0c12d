"""The implementer's phase, red then green, each proven by the engine's own runs (bugfix phase 4, fix-ci
phase 4).

Red: the failure must be seen failing before the fix. Either the engine saw it already (fix-ci reproduced the
CI's failures locally: `proven_red`), or the implementer's stage test adds or changes a test that reproduces
it; the engine runs exactly that test (Work "tests", a command it builds from the configured `test_command`)
and accepts the answer only when the test FAILS, then sends the agent on to fix the code. Green: at stage fix
the engine runs what proved red and the tests that failed before (`green_work`); all must PASS, else the
answer is refused (STILL_FAILING). Green ends the phase with `errors_fixed` and `files_changed`: of the
files the implementer says it modified, those the facts say changed (workflows.claimed_files: the phase
snapshots the project and opens a touch window before its first call). An
implementer that stopped before green is dispatched again, at most MAX_DISPATCHES times in all; then
IMPLEMENTATION_FAILED. A dry run skips the phase.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.contracts.bugfix import IMPLEMENTER
from fixloop.review.record import MAX_INVALID_ATTEMPTS
from fixloop.workflows import claimed_files
from fixloop.workflows.consult import closed, dispatch, dispatches
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed, Work
from fixloop.workflows.phase import Phase
from fixloop.workflows.testrun import TESTS
from fixloop.workflows.testselect import label
from fixloop.workflows.verdicts import green_problem, red_not_proven, red_problem

MAX_DISPATCHES = 3
IMPLEMENTER_ROLE = "implementer"  # the config's `models` role of agents that change code to a plan
RUN_FIELDS = ("status", "command", "exit_code", "duration_ms", "output_file")
Plan = dict[str, Any]


def named(test: Mapping[str, Any]) -> dict[str, Any]:
    return {"file": test.get("file"), "name": test.get("name"), "line": test.get("line")}


def run_summary(run: Mapping[str, Any]) -> dict[str, Any]:
    return {key: run.get(key) for key in RUN_FIELDS}


def test_outcomes(run: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [item for item in run.get("outcomes") or [] if isinstance(item, Mapping)]


class RedGreenPhase(Phase):
    """The red-then-green gate; a workflow says what the implementer follows and what proves green."""

    agents = (IMPLEMENTER,)

    # ---- what each workflow gives ----------------------------------------------------------------------

    def plan(self, ctx: PhaseContext) -> Plan | PhaseFailed:
        """What the implementer follows, from earlier phases; or why the phase cannot run."""
        raise NotImplementedError

    def failing(self, ctx: PhaseContext) -> list[dict[str, Any]]:
        """The named tests that failed before the fix: each must pass after it."""
        raise NotImplementedError

    def task(self, ctx: PhaseContext, plan: Plan) -> str:
        """The implementer's task (ctx.data holds `failing` and, once proven, `red`)."""
        raise NotImplementedError

    def proven_red(self, ctx: PhaseContext) -> dict[str, Any] | None:
        """Red the engine proved before this phase (then the implementer goes straight to the fix)."""
        return None

    def needs_test_command(self, ctx: PhaseContext) -> bool:
        return True

    def changed_files(self, ctx: PhaseContext, document: Mapping[str, Any]) -> set[str]:
        """The files the run changed, from the implementer's answer at stage fix."""
        red = ctx.data["red"]
        return {*(document.get("files_modified") or []), red["test"]["file"]}

    def errors_fixed(self, ctx: PhaseContext) -> int:
        return len(ctx.data.get("failing") or [])

    def green_work(self, ctx: PhaseContext, params: dict[str, Any]) -> Work:
        """The engine work that proves green: the red test and the tests that failed before."""
        red = ctx.data["red"]
        tests = {label(test): dict(test) for test in [red["test"], *(ctx.data.get("failing") or [])]}
        return Work(TESTS, {**params, "purpose": "green", "step_index": 2, "tests": list(tests.values())})

    def green_problem(self, ctx: PhaseContext, work: Any) -> dict[str, Any] | None:
        """None when `green_work`'s result proves green; else the problem that refuses the fix."""
        run: Mapping[str, Any] = work if isinstance(work, Mapping) else {}
        return green_problem(test_outcomes(run), run)

    def green_record(self, ctx: PhaseContext, work: Any) -> dict[str, Any]:
        run: Mapping[str, Any] = work if isinstance(work, Mapping) else {}
        return {"run": run_summary(run), "tests": [label(item["test"]) for item in test_outcomes(run)]}

    # ---- stepping -------------------------------------------------------------------------------------

    def step(self, ctx: PhaseContext) -> Outcome:
        if ctx.dry_run:
            return PhaseDone("skipped", {"reason": "dry_run"})
        plan = self.plan(ctx)
        if isinstance(plan, PhaseFailed):
            return plan
        data = ctx.data
        if "failing" not in data:
            data["failing"] = self.failing(ctx)
            red = self.proven_red(ctx)
            if red is not None:
                data["red"] = red
        command = ctx.config.test_command
        if self.needs_test_command(ctx) and (not command or not command.strip()):
            return PhaseFailed(
                "TESTS_NOT_CONFIGURED",
                "The fix cannot be proven without tests: set test_command in .claude/fixloop.json, then run "
                "this phase again.",
                details={"recoverable": False},
            )
        answered = closed(ctx, IMPLEMENTER)
        if data.get("green"):
            test = (data.get("red") or {}).get("test")
            return PhaseDone(
                "success",
                {
                    "errors_fixed": data["errors_fixed"],
                    "files_changed": data["files_changed"],
                    "test": label(test) if test else None,
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
        if "begun" not in data:
            data["begun"] = claimed_files.begin(ctx, planned_files(plan))
        stage = "fix" if data.get("red") else "test"
        return dispatch(
            ctx,
            IMPLEMENTER,
            "Fix the code" if stage == "fix" else "Reproduce, then fix",
            self.task(ctx, plan),
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

    # ---- answers, checked by the engine's runs ---------------------------------------------------------

    def gate(self, ctx: PhaseContext, agent: str, document: Mapping[str, Any]) -> Work | None:
        if agent != IMPLEMENTER or document.get("status") != "success":
            return None
        params: dict[str, Any] = {"phase": ctx.phase_key, "total_steps": 2}
        if document.get("stage") == "test":
            return Work(
                TESTS, {**params, "purpose": "red", "step_index": 1, "tests": [named(document["test"])]}
            )
        if ctx.data.get("red") is None:
            return None  # refused in record: no red yet
        return self.green_work(ctx, params)

    def judge(
        self, ctx: PhaseContext, agent: str, document: Mapping[str, Any], work: Any
    ) -> tuple[dict[str, Any] | None, str | None]:
        if document.get("stage") == "test":
            run: Mapping[str, Any] = work if isinstance(work, Mapping) else {}
            outcomes = test_outcomes(run)
            test = named(document["test"])
            outcome = outcomes[0]["outcome"] if outcomes else "error"
            problem = red_problem(test, outcome, run)
            if problem is not None:
                return problem, None
            message = next((f.get("message") for f in run.get("failures") or []), None)
            ctx.data["red"] = {"test": test, "run": run_summary(run), "message": message}
            ctx.data.pop("green", None)
            return None, red_proven(test, message)
        if ctx.data.get("red") is None:
            return red_not_proven(), None
        problem = self.green_problem(ctx, work)
        if problem is not None:
            return problem, None
        ctx.data["green"] = self.green_record(ctx, work)
        claimed = [str(item) for item in self.changed_files(ctx, document) if item]
        ctx.data["files_changed"] = claimed_files.sort_claims(ctx, ctx.data.get("begun"), claimed)
        ctx.data["errors_fixed"] = self.errors_fixed(ctx)
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


def planned_files(plan: Plan) -> list[str]:
    """The files the plan says the fix changes, and its test's: what a snapshot outside git holds."""
    changes = [item for item in plan.get("changes") or [] if isinstance(item, Mapping)]
    test = plan.get("test")
    named = [item.get("file") for item in changes] + [test.get("file") if isinstance(test, Mapping) else None]
    return [str(path) for path in named if path]


def red_proven(test: Mapping[str, Any], message: str | None) -> str:
    """The instruction that sends the implementer on once its test fails before the fix."""
    why = f" ({message})" if message else ""
    return (
        f"Red proven: {label(test)} fails before the fix{why}. Now fix the code according to the plan, keep "
        'the test, and answer with stage "fix" and files_modified.'
    )
