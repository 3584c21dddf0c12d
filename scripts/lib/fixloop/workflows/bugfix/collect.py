"""Bugfix phase 0, collect and classify the failure: the engine runs the project's tests (Work "tests"),
keeps the bounded failures, and the failure analyst classifies them into the stack's categories.

Tests the user's description names (in the form the project's runner reports them: named_tests.py) run alone
first; only when none of them fails alone does the whole suite run (when they cannot be run alone, the whole
suite runs at once, and the test run says why). No failure and no description from the user: WARNING
NO_FAILURE_FOUND and the run ends, successful, with nothing to fix. No test command configured: WARNING
TESTS_NOT_CONFIGURED, and the description alone goes on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from fixloop.contracts.bugfix import FAILURE_ANALYST, categories_for
from fixloop.workflows.bugfix.named_tests import named_tests
from fixloop.workflows.bugfix.tasks import analyst_task
from fixloop.workflows.bugfix.tooluse import tests_ran
from fixloop.workflows.consult import consult
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, RunDone, Work
from fixloop.workflows.phase import Phase
from fixloop.workflows.testrun import COMMAND_FAILURE, TESTS
from fixloop.workflows.testselect import detect_runner

# failures_total: the run kept at most testrun.MAX_FAILURES of them
RUN_FIELDS: tuple[str, ...] = ("status", "reason", "command", "exit_code", "duration_ms", "output_file")
RUN_FIELDS += ("lines", "counts", "failures_total", "selected", "not_selected")


def _description(ctx: PhaseContext) -> str:
    text = ctx.state.get("free_text")
    return text.strip() if isinstance(text, str) else ""


def categories_problem(stack: object, document: Mapping[str, Any]) -> dict[str, Any] | None:
    """CATEGORY_NOT_FOR_STACK when a failure is put in a category the run's stack does not have."""
    allowed = categories_for(stack)
    stack = stack or "mixed"
    wrong = [
        {
            "path": f"$.failures[{index}].category",
            "message": f"{item.get('category')!r} is not a {stack} category",
        }
        for index, item in enumerate(document.get("failures") or [])
        if item.get("category") not in allowed
    ]
    if not wrong:
        return None
    return {
        "code": "CATEGORY_NOT_FOR_STACK",
        "message": f"{len(wrong)} failure(s) classified outside the {stack} categories.",
        "violations": wrong,
        "hint": f"Use only these categories: {', '.join(allowed)}. Answer again with the whole document.",
    }


def _named_failed(result: Mapping[str, Any]) -> bool:
    """Whether a test the user named failed in a run of the named tests alone."""
    return any(item.get("outcome") == "failed" for item in result.get("outcomes") or [])


def _collect_params(ctx: PhaseContext) -> dict[str, Any]:
    return {"purpose": "collect", "phase": ctx.phase_key, "step_index": 1, "total_steps": 2}


class CollectPhase(Phase):
    agents = (FAILURE_ANALYST,)

    def step(self, ctx: PhaseContext) -> Outcome:
        data = ctx.data
        if "failures" not in data:
            work = self._collect(ctx)
            if work is not None:
                return work
        if not data["failures"] and not data["description"]:
            ctx.warn(
                "NO_FAILURE_FOUND",
                "The tests show no failure and no failure was described: there is nothing to fix.",
                impact="the run ends without changes",
            )
            return RunDone("skipped", "success", "no_failure_found", {"reason": "no_failure_found"})
        if "analysis" not in data:
            answer = consult(
                ctx, FAILURE_ANALYST, "Classify the failures", analyst_task(ctx.state.get("stack"), data),
                "classify the failures",
            )  # fmt: skip
            if not isinstance(answer, dict):
                return answer
            data["analysis"] = answer
            ctx.emit("I", "ANALYSIS_RESULT", analysis_type="failure_classification", result=_analysis(answer))
        return PhaseDone("success", _analysis(data["analysis"]))

    def _collect(self, ctx: PhaseContext) -> Work | None:
        """Engine work to run the tests, or None once what they showed is in the phase's data."""
        data = ctx.data
        if "description" not in data:
            data["description"] = _description(ctx)
            self._described(ctx)
        command = ctx.config.test_command
        if command and command.strip():
            named = named_tests(data["description"], detect_runner(command))
            result = ctx.work_result(TESTS)
            if named and "alone" not in data:
                if result is None:  # the tests the user named run alone first
                    return Work(TESTS, {**_collect_params(ctx), "tests": named})
                data["alone"] = {key: result.get(key) for key in RUN_FIELDS}
                if result.get("selected") and not _named_failed(result):
                    ctx.forget_work(TESTS)  # they pass alone, or were not found: run the whole suite
                    result = None  # (not selected: the whole suite already ran)
            if result is None:
                return Work(TESTS, _collect_params(ctx))
            data["test_run"] = {key: result.get(key) for key in RUN_FIELDS}
            data["failures"] = list(result.get("failures") or [])
        else:
            ctx.warn(
                "TESTS_NOT_CONFIGURED",
                "No test_command is configured: the failure is taken from the user's description only.",
                impact="the failure cannot be reproduced by the engine",
            )
            ctx.emit(
                "I",
                "DATA_COLLECTED",
                data_type="test_output",
                summary={"lines": 0, "exit_code": None, "status": "not_run", "source": "auto_run"},
            )
            data["test_run"] = {"status": "not_run", "reason": "not_configured"}
            data["failures"] = []
        data["reproduced"] = any(item.get("test_id") != COMMAND_FAILURE for item in data["failures"])
        return None

    def apply_work(self, ctx: PhaseContext, kind: str, result: Any) -> None:
        super().apply_work(ctx, kind, result)
        if kind == TESTS:
            tests_ran(ctx, result)

    def _described(self, ctx: PhaseContext) -> None:
        text = ctx.data["description"]
        if text:
            summary = {"lines": len(text.splitlines()), "chars": len(text), "source": "user"}
            ctx.emit("I", "DATA_COLLECTED", data_type="user_description", summary=summary)

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
        problem = categories_problem(ctx.state.get("stack"), document) if document is not None else None
        if problem is not None:
            document, error = None, problem
        return super().record(ctx, agent, document, error, provenance=provenance, agent_id=agent_id)


def _analysis(document: Mapping[str, Any]) -> dict[str, Any]:
    failures = [item for item in document.get("failures") or [] if isinstance(item, Mapping)]
    return {
        "errors_found": len(failures),
        "categories": dict(Counter(str(item.get("category")) for item in failures)),
        "files_affected": sorted({str(item["file"]) for item in failures if item.get("file")}),
    }
