"""A running run bound to a Claude Code session, in the temporary git project, for the hookside tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fixloop.runs import creation

SESSION = "sess-hookside"


@dataclass
class BoundRun:
    root: Path
    run_id: str
    data: Path
    session: str = SESSION

    @property
    def dir(self) -> Path:
        return self.root / ".claude" / "fixloop" / "runs" / self.run_id

    def payload(self, event: str, **fields: Any) -> dict[str, Any]:
        return {"session_id": SESSION, "cwd": str(self.root), "hook_event_name": event, **fields}

    def events(self, *types: str) -> list[dict[str, Any]]:
        state = json.loads((self.dir / "state.json").read_text())
        path = Path(state["logging"]["log_files"]["jsonl"])
        events = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        return [event for event in events if not types or event["type"] in types]

    def hooks_state(self) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads((self.dir / "hooks-state.json").read_text())
        return doc


@pytest.fixture
def bound_run(git_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BoundRun:
    data = tmp_path / "plugin-data"
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    monkeypatch.delenv("FIXLOOP_HOOK_ENGINE", raising=False)
    monkeypatch.delenv("FIXLOOP_RECORD_TIMEOUT", raising=False)
    state = creation.start_run("bugfix", root=git_project, claude_session_id=SESSION)["state"]
    return BoundRun(git_project, state["run_id"], data)
