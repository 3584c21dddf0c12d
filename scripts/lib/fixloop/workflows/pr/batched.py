"""A phase that hands a list of threads to one agent in batches, one dispatch per batch, in turn.

Each answer is checked against its batch before it is recorded (an answer about other threads is
refused and the agent may answer again); when every batch is answered, `finish` ends the phase.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fixloop.review.state import Problem
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Call, Dispatch, Outcome
from fixloop.workflows.phase import Phase


def threads_problem(
    batch: Sequence[str], answered: Sequence[str], field: str, extra: list[dict[str, str]] | None = None
) -> Problem | None:
    """The problem of an answer whose `field` does not cover exactly the threads of `batch`."""
    wanted, given = set(batch), set(answered)
    violations = [
        {"path": f"$.{field}", "message": f"no entry for thread {t}"} for t in batch if t not in given
    ]
    violations += [
        {"path": f"$.{field}", "message": f"thread {t} was not given to you"}
        for t in answered
        if t not in wanted
    ]
    violations += extra or []
    if not violations:
        return None
    return {
        "code": "THREADS_MISMATCH",
        "message": f"The answer's {field} do not match the threads given: "
        + "; ".join(item["message"] for item in violations[:5]),
        "violations": violations,
        "hint": f"Give exactly one entry in {field} for each thread id given, and nothing else.",
    }


class BatchedAgentPhase(Phase):
    agent = ""
    role = ""
    label = ""
    batch_size = 25

    # ---- what a subclass says -------------------------------------------------------------------

    def items(self, ctx: PhaseContext) -> list[str] | Outcome:
        """The thread ids to hand out, or the outcome that ends the phase at once."""
        raise NotImplementedError

    def task(self, ctx: PhaseContext, batch: list[str]) -> str:
        raise NotImplementedError

    def problem(self, ctx: PhaseContext, batch: list[str], document: Mapping[str, Any]) -> Problem | None:
        return None

    def take(self, ctx: PhaseContext, batch: list[str], document: Mapping[str, Any] | None) -> None:
        """Keep the answer for `batch` (None: the agent gave no valid answer)."""
        raise NotImplementedError

    def finish(self, ctx: PhaseContext) -> Outcome:
        raise NotImplementedError

    # ---- the engine's side ----------------------------------------------------------------------

    def step(self, ctx: PhaseContext) -> Outcome:
        data = ctx.data
        if "batches" not in data:
            items = self.items(ctx)
            if not isinstance(items, list):
                return items
            size = self.batch_size
            data.update(batches=[items[i : i + size] for i in range(0, len(items), size)], done=0, sent=None)
        batches: list[list[str]] = data["batches"]
        if data["sent"] is not None:
            self.take(ctx, batches[data["sent"]], ctx.document(self.agent))
            data["sent"] = None
            data["done"] += 1
        if data["done"] >= len(batches):
            return self.finish(ctx)
        index = data["done"]
        data["sent"] = index
        count = f" {index + 1}/{len(batches)}" if len(batches) > 1 else ""
        description = f"{self.label.capitalize()}{count}"
        call = Call(self.agent, description, self.task(ctx, batches[index]), self.role)
        return Dispatch((call,), f"{self.label}{count}")

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
        sent = ctx.data.get("sent")
        if document is not None and error is None and sent is not None:
            problem = self.problem(ctx, ctx.data["batches"][sent], document)
            if problem is not None:
                document, error = None, problem
        return super().record(ctx, agent, document, error, provenance=provenance, agent_id=agent_id)
