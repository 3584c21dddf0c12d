"""UserPromptSubmit in process: what is kept of a prompt, and where."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from fixloop.hookside import prompt
from fixloop.store import layout


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("/fixloop:review", True),
        ("\n  /fixloop:fix-ci 123", True),
        ("/fixloopreview", False),
        ("run /fixloop:review", False),
        ("", False),
    ],
)
def test_which_prompts_are_fixloops(text: str, kept: bool) -> None:
    assert prompt.is_fixloop_prompt(text) is kept


def test_a_prompt_is_redacted_then_cut_on_a_character_boundary() -> None:
    text = "/fixloop:review password=hunter2 " + "€" * 100_000  # 3 bytes a character
    doc = prompt.prompt_document(text, "p1", 5)
    assert doc["truncated"] is True and doc["prompt_id"] == "p1" and doc["ts_ms"] == 5
    assert doc["prompt"].startswith("/fixloop:review password=[REDACTED] €")
    assert len(doc["prompt"].encode("utf-8")) == prompt.MAX_PROMPT_BYTES - 1
    short = prompt.prompt_document("/fixloop:review", None, 5)
    assert short == {"prompt": "/fixloop:review", "prompt_id": None, "ts_ms": 5}


def test_the_hook_writes_the_file_the_engine_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    payload = {"session_id": "s-1", "cwd": str(tmp_path), "prompt": "/fixloop:review", "prompt_id": "p"}
    assert prompt.main(io.BytesIO(json.dumps(payload).encode())) == 0
    path = Path(layout.prompt_path(tmp_path, "s-1"))
    assert path == tmp_path / ".claude" / "fixloop" / "sessions" / "s-1.prompt"
    assert json.loads(path.read_text())["prompt"] == "/fixloop:review"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o777 & ~current_umask()
    assert layout.run_for_session(tmp_path, "s-1") is None  # not a session index entry


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_prompt_path_refuses_a_session_id_that_cannot_name_a_file(tmp_path: Path) -> None:
    from fixloop.core.errors import FixloopError

    with pytest.raises(FixloopError) as caught:
        layout.prompt_path(tmp_path, "../x")
    assert caught.value.code == "INVALID_SESSION_ID"
