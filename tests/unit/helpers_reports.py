"""Runs on disk to report on: a state (such as helpers_review.two_rounds) saved as a project's run, the
project's source for the code excerpts, and token usage in the run's hook ledger."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixloop.core.timekeeping import utc_timestamp_ms
from fixloop.runs import lifecycle
from fixloop.store import layout, ledger

START_MS = 1_765_000_000_000


def save_run(
    root: Path,
    state: Mapping[str, Any],
    run_id: str,
    *,
    started_ms: int = START_MS,
    ended_ms: int | None = None,
    **fields: Any,
) -> str:
    """Write `state` as run `run_id` of the project at `root` (with the fields a run state needs)."""
    document = copy.deepcopy(dict(state))
    document.update(
        run_id=run_id,
        created_at=utc_timestamp_ms(started_ms / 1000),
        updated_at=utc_timestamp_ms(started_ms / 1000),
        started_at_ms=started_ms,
        ended_at_ms=ended_ms,
        project_dir=str(root),
        phases=[0],
        logging={"enabled": False, "level": "info", "session_id": run_id, "log_files": None},
    )
    document.setdefault("workflow", "review")
    document.update(fields)
    lifecycle.store_for(root, run_id).create(document)
    return run_id


def write_source(root: Path, name: str = "src/app.py", lines: int = 100) -> Path:
    """A source file whose line N reads `line N`."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"line {number}\n" for number in range(1, lines + 1)))
    return path


def record_usage(root: Path, run_id: str, agent: str, tool_use_id: str, inp: int, out: int) -> None:
    """One agent call and its result with token usage, in the run's hook ledger."""
    run_dir = layout.run_dir(root, run_id)
    ledger.append(run_dir, {"kind": "call", "ts_ms": 1, "agent": agent, "tool_use_id": tool_use_id})
    ledger.append(
        run_dir,
        {
            "kind": "result",
            "ts_ms": 2,
            "agent": agent,
            "tool_use_id": tool_use_id,
            "usage": {
                "input_tokens": inp,
                "output_tokens": out,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
            "total_tokens": inp + out,
            "model": "claude-sonnet-5-5",
        },
    )
