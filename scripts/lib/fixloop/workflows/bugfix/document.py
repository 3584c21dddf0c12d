"""Bugfix phase 3, document the fix plan: the engine writes `docs/bugfix/<YYYY-MM-DD>-<run_id>.md` in the
project from the diagnosis and the designer's plan. A dry run writes nothing: the phase ends skipped, and the
run's final message says what the plan holds (root cause, changes, proving test)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from fixloop.store.atomic import write_atomic
from fixloop.workflows.bugfix.inputs import needs, phase_data
from fixloop.workflows.bugfix.tooluse import file_written
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone, PhaseFailed
from fixloop.workflows.phase import Phase
from fixloop.workflows.testselect import label

DOCS_DIR = "docs/bugfix"
MAX_LISTED_FAILURES = 20


def plan_path(run_id: str, now_ms: int) -> str:
    day = datetime.fromtimestamp(now_ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d")
    return f"{DOCS_DIR}/{day}-{run_id}.md"


def _bullets(items: Sequence[str], empty: str) -> list[str]:
    return [f"- {item}" for item in items] if items else [f"- {empty}"]


def render_plan(
    run: Mapping[str, Any],
    collected: Mapping[str, Any] | None,
    diagnosis: Mapping[str, Any],
    design: Mapping[str, Any],
) -> str:
    """The fix plan as Markdown: what failed, the root cause with its evidence, the change per file, the
    proving test, the risks and the rejected alternatives."""
    cause = diagnosis.get("root_cause") or {}
    confidence = diagnosis.get("confidence") or {}
    test = design.get("test") or {}
    where = str(cause.get("file") or "not located")
    if cause.get("file") and cause.get("line"):
        where += f":{cause['line']}"
    lines = [
        f"# Fix plan: {design.get('summary') or 'bug fix'}",
        "",
        f"Run `{run.get('run_id')}` (bugfix, stack {run.get('stack') or 'mixed'}).",
        "",
        "## What fails",
    ]
    failures = list((collected or {}).get("failures") or [])[:MAX_LISTED_FAILURES]
    lines += _bullets([f"`{item.get('test_id')}`: {item.get('message')}" for item in failures], "see below")
    description = str((collected or {}).get("description") or "").strip()
    if description:
        lines += ["", "Reported:", "", *(f"> {line}" for line in description.splitlines())]
    lines += ["", "## Root cause", "", str(cause.get("summary") or ""), "", f"Location: `{where}`", ""]
    if confidence:
        factors = ", ".join(f"{name} {value}" for name, value in (confidence.get("factors") or {}).items())
        lines += [f"Confidence: {confidence.get('confidence_score')} ({factors}).", ""]
    lines += ["Evidence:", "", *_bullets([str(item) for item in cause.get("evidence") or []], "none given")]
    lines += ["", "## Changes", ""]
    lines += _bullets([f"`{item['file']}`: {item['change']}" for item in design.get("changes") or []], "none")
    lines += ["", "## The test that proves the fix", "", f"`{label(test)}`" if test else "none named"]
    lines += ["", "## Risks", "", *_bullets([str(item) for item in design.get("risks") or []], "none named")]
    alternatives = [
        f"{item['approach']}: rejected because {item['rejected_because']}"
        for item in design.get("alternatives") or []
    ]
    lines += ["", "## Alternatives considered", "", *_bullets(alternatives, "none")]
    return "\n".join(lines) + "\n"


def dry_run_lines(
    run_id: str, now_ms: int, diagnosis: Mapping[str, Any] | None, design: Mapping[str, Any] | None
) -> list[str]:
    """What a dry run tells at its end instead of writing the plan: the root cause, the changes and the
    proving test it would have implemented (nothing when the design was not reached)."""
    if not design:
        return []
    cause = (diagnosis or {}).get("root_cause") or {}
    score = ((diagnosis or {}).get("confidence") or {}).get("confidence_score")
    where = str(cause.get("file") or "not located") + (f":{cause['line']}" if cause.get("line") else "")
    lines = [f"Dry run: nothing was changed; the fix plan was not written to {plan_path(run_id, now_ms)}."]
    if cause:
        lines.append(f"- Root cause at {where} (confidence {score}): {cause.get('summary')}")
    lines += [f"- Would change {item['file']}: {item['change']}" for item in design.get("changes") or []]
    if design.get("test"):
        lines.append(f"- Would prove it with the test {label(design['test'])}")
    return lines


class DocumentPhase(Phase):
    def step(self, ctx: PhaseContext) -> Outcome:
        if ctx.dry_run:
            design = (phase_data(ctx, 2) or {}).get("design")
            ctx.data["final_lines"] = dry_run_lines(ctx.run_id, ctx.now, phase_data(ctx, 1), design)
            return PhaseDone("skipped", {"reason": "dry_run"})
        inputs = needs(ctx, 1, 2)
        if isinstance(inputs, PhaseFailed):
            return inputs
        if "document" not in ctx.data:
            path = plan_path(ctx.run_id, ctx.now)
            text = render_plan(ctx.state, phase_data(ctx, 0), inputs[1], inputs[2]["design"])
            target = ctx.root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, text.encode("utf-8"))
            ctx.data["document"] = path
            file_written(ctx, path, text.count("\n"))
            ctx.emit(
                "I", "DATA_COLLECTED", data_type="fix_plan", summary={"file": path, "lines": text.count("\n")}
            )
        return PhaseDone("success", {"document": ctx.data["document"]})
