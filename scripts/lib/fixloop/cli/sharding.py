"""`fixloop review shards` and `fixloop review merge`: a large change reviewed past one machine, as a CI
matrix of shard runs whose results are merged into one report."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.report.merge import failing, merge_reports, merge_sarif
from fixloop.runs.shards import plan_shards


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise FixloopError("FILE_UNREADABLE", f"Cannot read {path}: {error}.", path=path) from None


def shard_plan(files_from: str, max_files: int) -> dict[str, Any]:
    """The shards of the files listed in `files_from` (one a line, blank lines skipped): each with its
    files and the arguments that review exactly them (`/fixloop:review --dry-run ARGUMENTS`), and the
    matrix GitHub Actions iterates over."""
    files = sorted({line.strip() for line in _read_text(files_from).splitlines() if line.strip()})
    shards = plan_shards(files, max_files)
    return {
        "files": len(files),
        "max_files": max_files,
        "shards": [
            {"shard": number, "files": members, "arguments": " ".join(shlex.quote(name) for name in members)}
            for number, members in enumerate(shards, 1)
        ],
        "matrix": {"shard": list(range(1, len(shards) + 1))},
    }


def _read_json(path: str, kind: str, required: str) -> dict[str, Any]:
    try:
        document = json.loads(_read_text(path))
    except json.JSONDecodeError as error:
        raise FixloopError("INVALID_JSON", f"{path} is not JSON: {error}.", path=path) from None
    if not isinstance(document, dict) or required not in document:
        raise FixloopError(
            "INVALID_REPORT", f"{path} is not a fixloop {kind} (it has no '{required}').", path=path
        )
    return document


def merged_answer(
    reports: list[str],
    sarif_logs: list[str],
    sarif_output: str | None,
    output: str | None,
    fail_on: str | None,
) -> tuple[dict[str, Any], int]:
    """(what the command prints, exit code): the merged report (or, with `output`, where it was written),
    the merged SARIF written to `sarif_output`, and exit 1 when `fail_on` finds a remaining finding."""
    merged = merge_reports([_read_json(path, "JSON report", "summary") for path in reports])
    failed = failing(merged, fail_on) if fail_on is not None else []
    if sarif_output is not None:
        logs = [_read_json(path, "SARIF log", "runs") for path in sarif_logs]
        Path(sarif_output).write_text(json.dumps(merge_sarif(logs), indent=2) + "\n", encoding="utf-8")
    answer: dict[str, Any] = merged
    if output is not None:
        Path(output).write_text(json.dumps(merged, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        answer = {"status": "written", "output": output, "report_status": merged["status"]}
        if sarif_output is not None:
            answer["sarif_output"] = sarif_output
    if fail_on is not None:
        answer = {**answer, "fail_on": {"level": fail_on, "failed": bool(failed), "findings": failed}}
    return answer, 1 if failed else 0
