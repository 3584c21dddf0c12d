"""`fixloop review report`: one of the report formats of a run, printed or written to a file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.report.array import simple_array
from fixloop.report.coordinator import coordinator_output
from fixloop.report.markdown import markdown
from fixloop.report.sarif import sarif
from fixloop.runs import lifecycle
from fixloop.runs.usage import run_usage
from fixloop.store import layout

REPORT_FORMATS = ("json", "array", "markdown", "sarif")


def render(state: Mapping[str, Any], fmt: str) -> Any:
    """The report of `state` in `fmt`: coordinator output (json), simple array, Markdown text or SARIF."""
    if fmt == "json":
        return coordinator_output(state)
    if fmt == "array":
        return simple_array(state)
    if fmt == "sarif":
        return sarif(state)
    return markdown(state)


def report_answer(root: Path, run_id: str, fmt: str, output: str | None) -> Any:
    """The answer of `fixloop review report`: the report itself (Markdown wrapped in a JSON object), or,
    with `output`, where it was written (a file inside the project)."""
    state = lifecycle.load_run(root, run_id)
    content = render({**state, "usage": run_usage(root, state)}, fmt)
    if output is None:
        return content if fmt != "markdown" else {"run_id": run_id, "format": fmt, "content": content}
    target = layout.resolve_inside(root, output)
    if target.is_dir():
        raise FixloopError("INVALID_OUTPUT", f"{output} is a directory.", received=output)
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, indent=2) + "\n"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return {"status": "written", "run_id": run_id, "format": fmt, "output": str(target)}
