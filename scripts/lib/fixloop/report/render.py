"""`fixloop review report`: one of the report formats of a run, printed or written to a file, and whether
its remaining findings fail a CI job (`--fail-on LEVEL`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.report.array import simple_array
from fixloop.report.coordinator import coordinator_output
from fixloop.report.destination import report_destination, write_report
from fixloop.report.fail_level import FAIL_LEVELS, failing_findings
from fixloop.report.html import html_report
from fixloop.report.markdown import markdown
from fixloop.report.sarif import sarif
from fixloop.runs import lifecycle
from fixloop.runs.coverage import coverage
from fixloop.runs.usage import run_usage

REPORT_FORMATS = ("json", "array", "markdown", "sarif", "html")


@dataclass(frozen=True)
class ReportAnswer:
    document: Any  # what the command prints: the Markdown or HTML text itself, else a JSON value
    exit_code: int  # 1 when --fail-on found a finding at or above its level


def render(state: Mapping[str, Any], fmt: str, root: Path | None = None) -> Any:
    """The report of `state` in `fmt`: coordinator output (json), simple array, Markdown text, SARIF or
    HTML (whose code excerpts are read from `root`, default the run's project directory)."""
    if fmt == "json":
        return {"run_id": state.get("run_id"), **coordinator_output(state), "coverage": coverage(state)}
    if fmt == "array":
        return simple_array(state)
    if fmt == "sarif":
        return sarif(state)
    if fmt == "html":
        return html_report(state, root if root is not None else Path(str(state.get("project_dir") or ".")))
    return markdown(state)


def _check_fail_on(fail_on: str | None) -> None:
    if fail_on is not None and fail_on not in FAIL_LEVELS:
        raise FixloopError(
            "INVALID_ARGUMENT",
            f"Invalid --fail-on {fail_on!r}.",
            argument="--fail-on",
            valid_values=list(FAIL_LEVELS),
            received=fail_on,
        )


def report_answer(
    root: Path, run_id: str, fmt: str, output: str | None, fail_on: str | None = None
) -> ReportAnswer:
    """The answer of `fixloop review report`: the report itself (Markdown and HTML as text, the other
    formats as JSON), or, with `output`, where it was written. With `fail_on`, exit code 1 when a remaining
    finding is at or above that severity (after the report is printed or written)."""
    _check_fail_on(fail_on)
    target = report_destination(root, output) if output is not None else None
    state = lifecycle.load_run(root, run_id)
    state = {**state, "usage": run_usage(root, state)}
    content = render(state, fmt, root)
    failing = failing_findings(state, fail_on) if fail_on is not None else []
    exit_code = 1 if failing else 0
    if target is None:
        return ReportAnswer(content, exit_code)
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, indent=2) + "\n"
    write_report(target, text)
    answer: dict[str, Any] = {"status": "written", "run_id": run_id, "format": fmt, "output": str(target)}
    if fail_on is not None:
        answer["fail_on"] = {"level": fail_on, "failed": bool(failing), "findings": failing}
    return ReportAnswer(answer, exit_code)
