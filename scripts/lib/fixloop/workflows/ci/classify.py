"""fix-ci phase 2, classify the failures: the CI analyst puts each failure of phase 1 in one category (test,
build, lint, type, flaky, infrastructure) with its confidence. An answer that leaves a failure out, or names
one that was not given, is refused (FAILURES_NOT_CLASSIFIED) and the analyst is asked again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from fixloop.contracts.ci import CI_ANALYST, FIXABLE_CATEGORIES
from fixloop.workflows.ci.inputs import needs, phase_data
from fixloop.workflows.ci.tasks import analyst_task
from fixloop.workflows.consult import consult
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed
from fixloop.workflows.phase import Phase


def ids_problem(given: list[str], document: Mapping[str, Any]) -> dict[str, Any] | None:
    """FAILURES_NOT_CLASSIFIED when the answer does not classify exactly the failures given."""
    answered = [str(item.get("failure_id")) for item in document.get("failures") or []]
    unknown = [
        {"path": f"$.failures[{index}].failure_id", "message": f"{failure!r} is not a failure given"}
        for index, failure in enumerate(answered)
        if failure not in given
    ]
    left_out = [failure for failure in given if failure not in answered]
    violations = unknown + [
        {"path": "$.failures", "message": f"{failure} is not classified"} for failure in left_out
    ]
    if not violations:
        return None
    return {
        "code": "FAILURES_NOT_CLASSIFIED",
        "message": f"The answer must classify each failure given once: {', '.join(given)}.",
        "violations": violations,
        "hint": f"Give one entry per failure, with failure_id one of {', '.join(given)}. "
        "Answer again with the whole document.",
    }


def analysis_result(document: Mapping[str, Any]) -> dict[str, Any]:
    failures = [item for item in document.get("failures") or [] if isinstance(item, Mapping)]
    categories = [str(item.get("category")) for item in failures]
    return {
        "errors_found": len(failures),
        "categories": dict(Counter(categories)),
        "fixable": sum(1 for category in categories if category in FIXABLE_CATEGORIES),
        "files_affected": sorted({str(item["file"]) for item in failures if item.get("file")}),
    }


class ClassifyPhase(Phase):
    agents = (CI_ANALYST,)

    def step(self, ctx: PhaseContext) -> Outcome:
        inputs = needs(ctx, 1)
        if isinstance(inputs, PhaseFailed):
            return inputs
        data = ctx.data
        if "analysis" not in data:
            task = analyst_task(phase_data(ctx, 0), inputs[1])
            answer = consult(ctx, CI_ANALYST, "Classify the CI failures", task, "classify the CI failures")
            if not isinstance(answer, dict):
                return answer
            data["analysis"] = answer
            ctx.emit(
                "I",
                "ANALYSIS_RESULT",
                analysis_type="ci_failure_classification",
                result=analysis_result(answer),
            )
        return PhaseDone("success", analysis_result(data["analysis"]))

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
        if document is not None and document.get("status") == "success":
            given = [str(item["id"]) for item in (phase_data(ctx, 1) or {}).get("failures") or []]
            problem = ids_problem(given, document)
            if problem is not None:
                document, error = None, problem
        return super().record(ctx, agent, document, error, provenance=provenance, agent_id=agent_id)
