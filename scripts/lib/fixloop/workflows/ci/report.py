"""fix-ci phase 6, report: what failed in CI, what of it was reproduced and fixed (red then green), and what
was not and why; the lines end the command's final message and are kept in `<run dir>/ci/report.md`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.store import layout
from fixloop.store.atomic import write_atomic
from fixloop.workflows.ci.inputs import phase_data
from fixloop.workflows.ci.performers import CI_DIR
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.outcomes import Outcome, PhaseDone
from fixloop.workflows.phase import Phase

REPORT = "report.md"
MAX_LISTED = 15


def source_line(source: Mapping[str, Any] | None) -> str:
    if not source:
        return "CI: (phase 0 did not run)"
    if source.get("source") != "github":
        return f"CI log: {source.get('log_file')}"
    run = source["run"]
    job = source.get("job")
    text = f"CI: run {run['id']} of {run.get('workflow')!r}" + (f", job {job['name']!r}" if job else "")
    match = "" if source.get("sha_match") else " (not the checkout's HEAD)"
    return f"{text}, commit {str(run.get('head_sha'))[:12]}{match}: {run.get('url')}"


def _fate(item: Mapping[str, Any], verdict: Mapping[str, Any] | None, fixed: bool) -> str:
    if item.get("category") in ("flaky", "infrastructure"):
        return "not fixed (not in the code)"
    if verdict is None:
        return "not reproduced" if not fixed else "fixed"
    if not verdict.get("reproduced"):
        return f"not reproduced locally ({verdict.get('reason')})"
    return "reproduced locally, fixed" if fixed else "reproduced locally, not fixed"


def report_lines(ctx: PhaseContext) -> tuple[list[str], dict[str, Any]]:
    source, fetched = phase_data(ctx, 0), phase_data(ctx, 1) or {}
    reproduced, implemented = phase_data(ctx, 3) or {}, phase_data(ctx, 4) or {}
    log = fetched.get("log") or {}
    items = list(reproduced.get("items") or [])
    verdicts = {str(item["id"]): item for item in reproduced.get("verdicts") or []}
    fixed = set(implemented.get("to_fix") or []) if implemented.get("green") else set()
    lines = [source_line(source)]
    if log:
        lines.append(
            f"Log: {log.get('bytes')} bytes, {log.get('lines_read')} lines read, "
            f"{log.get('lines_kept')} kept; {len(fetched.get('failures') or [])} failure(s), "
            f"{log.get('failures_dropped') or 0} left out."
        )
    counts = Counter(str(item.get("category")) for item in items)
    if counts:
        lines.append(
            "Categories: " + ", ".join(f"{name} {count}" for name, count in sorted(counts.items())) + "."
        )
    for item in items[:MAX_LISTED]:
        fate = _fate(item, verdicts.get(str(item["id"])), str(item["id"]) in fixed)
        head = f"- {item['id']} {item.get('category')} ({item.get('confidence')}%)"
        lines.append(f"{head}: {item.get('summary')}: {fate}")
    if len(items) > MAX_LISTED:
        lines.append(f"- and {len(items) - MAX_LISTED} more")
    green = implemented.get("green") or {}
    if green:
        proven = [*green.get("tests", []), *(green.get("commands") or [])]
        lines.append(f"Proven fixed (red, then green): {', '.join(proven) or 'the failing runs'}.")
    elif ctx.dry_run:
        lines.append("Dry run: nothing was changed.")
    fields = {
        "ci_failures": len(items),
        "ci_reproduced": sum(1 for item in verdicts.values() if item.get("reproduced")),
        "ci_not_fixed": len(items) - len(fixed),
    }
    return lines, fields


class ReportPhase(Phase):
    def step(self, ctx: PhaseContext) -> Outcome:
        data = ctx.data
        if "report" not in data:
            lines, fields = report_lines(ctx)
            folder = Path(layout.run_dir(ctx.root, ctx.run_id)) / CI_DIR
            folder.mkdir(parents=True, exist_ok=True)
            text = "# fix-ci report\n\n" + "\n".join(lines) + "\n"
            write_atomic(folder / REPORT, text.encode("utf-8"))
            data["final_lines"] = lines
            data["summary_fields"] = fields
            data["report"] = str(folder / REPORT)
            ctx.emit("I", "ANALYSIS_RESULT", analysis_type="ci_report", result=fields)
        return PhaseDone("success", {"report": data["report"], **data["summary_fields"]})
