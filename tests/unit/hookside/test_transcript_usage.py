"""The coordinator's tokens, read from its transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fixloop.hookside import transcript_usage as module
from fixloop.hookside.transcript_usage import transcript_usage


def assistant(message_id: str, usage: dict[str, Any], model: str = "claude-haiku-5-5") -> dict[str, Any]:
    """An `assistant` line as Claude Code 2.1.328 writes it in a subagent transcript."""
    return {
        "parentUuid": "p",
        "isSidechain": True,
        "agentId": "a1",
        "type": "assistant",
        "message": {"id": message_id, "model": model, "role": "assistant", "usage": usage, "content": []},
    }


USAGE_1 = {
    "input_tokens": 2750,
    "cache_creation_input_tokens": 100,
    "cache_read_input_tokens": 0,
    "output_tokens": 2,
    "output_tokens_details": {"thinking_tokens": 0},
    "service_tier": "standard",
}
USAGE_2 = {
    "input_tokens": 3000,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 2800,
    "output_tokens": 40,
}


def write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_each_response_counts_once(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        [
            {"type": "user", "message": {"role": "user", "content": "fixloop run ab12cd34 started"}},
            assistant("msg_1", USAGE_1),
            assistant("msg_1", USAGE_1),  # a second content block of the same response
            {"type": "attachment", "attachment": {"type": "hook_additional_context"}},
            "{torn line",
            assistant("msg_2", USAGE_2, model="claude-haiku-5-6"),
        ],
    )
    assert transcript_usage(str(path)) == {
        "usage": {
            "input_tokens": 5750,
            "output_tokens": 42,
            "cache_creation_input_tokens": 100,
            "cache_read_input_tokens": 2800,
        },
        "total_tokens": 8692,
        "model": "claude-haiku-5-6",
        "responses": 2,
    }


def test_nothing_to_read(tmp_path: Path) -> None:
    assert transcript_usage(str(tmp_path / "missing.jsonl")) is None
    assert transcript_usage(str(write(tmp_path / "t.jsonl", [{"type": "user"}]))) is None
    bad = assistant("m", {"input_tokens": -5, "output_tokens": True, "cache_read_input_tokens": "9"})
    assert transcript_usage(str(write(tmp_path / "u.jsonl", [bad]))) == {
        "usage": dict.fromkeys(module.USAGE_KEYS, 0),
        "total_tokens": 0,
        "model": "claude-haiku-5-5",
        "responses": 1,
    }


def test_the_read_is_bounded(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(module, "MAX_TRANSCRIPT_BYTES", 1000)
    lines = [assistant(f"msg_{n}", USAGE_2) for n in range(50)]
    spent = transcript_usage(str(write(tmp_path / "t.jsonl", lines)))
    assert spent is not None and spent["responses"] < 10


def test_the_final_message_is_waited_for_a_few_seconds_at_most(tmp_path: Path, monkeypatch: Any) -> None:
    final = 'fixloop review ab12cd34: success\n"done" \u00e9 2 fixed'
    answered = assistant("msg_2", USAGE_2)
    answered["message"]["content"] = [{"type": "text", "text": final}]
    path = write(tmp_path / "t.jsonl", [assistant("msg_1", USAGE_1)])
    writes = [answered]

    def sleep(seconds: float) -> None:  # Claude Code writes the final response while the hook waits
        with path.open("a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in writes))
        writes.clear()

    monkeypatch.setattr("time.sleep", sleep)
    assert module.wait_for_final(str(path), final) is True
    spent = transcript_usage(str(path))
    assert spent is not None and spent["responses"] == 2
    assert module.wait_for_final(str(path), "") is True
    assert module.wait_for_final(str(tmp_path / "missing.jsonl"), final) is True
    assert module.wait_for_final(str(path), "never written", timeout=0.2) is False
