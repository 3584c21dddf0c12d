"""What an editing agent's Edit/Write tool call does to a run, for engine tests that play the agent: the
PreToolUse hook records the touch (keeping the file's prior content), the tool writes the file, the
PostToolUse hook records the write (the same store.touches calls hookside.file_touch makes)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

from fixloop.store import touches

_CALLS = itertools.count(1)


def agent_writes(
    project: Path,
    run_dir: Path,
    path: str,
    content: str,
    *,
    agent: str = "review-fixer",
    agent_id: str = "agent-fixer",
    tool: str = "Write",
) -> None:
    """`agent` writes `content` to `path` (relative to `project`, or absolute) through its Write tool."""
    target = Path(path) if Path(path).is_absolute() else project / path
    window = touches.active_window(run_dir)
    call = {
        "cwd": str(project),
        "agent_type": f"fixloop:{agent}",
        "agent": agent,
        "agent_id": agent_id,
        "tool": tool,
        "tool_use_id": f"toolu_edit_{next(_CALLS)}",
    }
    touches.note(run_dir, "touch", window, str(project), str(target), ts_ms=time.time_ns() // 10**6, **call)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    touches.note(run_dir, "wrote", window, str(project), str(target), ts_ms=time.time_ns() // 10**6, **call)
