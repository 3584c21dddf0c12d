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
        "complete": True,
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
        "complete": True,
    }


def test_the_read_is_bounded(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(module, "MAX_TRANSCRIPT_BYTES", 1000)
    lines = [assistant(f"msg_{n}", USAGE_2) for n in range(50)]
    spent = transcript_usage(str(write(tmp_path / "t.jsonl", lines)))
    assert spent is not None and spent["responses"] < 10 and spent["complete"] is False


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


def tool_use(message_id: str, usage: dict[str, Any], name: str) -> dict[str, Any]:
    line = assistant(message_id, usage)
    line["message"]["content"] = [
        {"type": "tool_use", "id": f"toolu_{message_id}", "name": name, "input": {}}
    ]
    return line


def tool_result(message_id: str, text: str) -> dict[str, Any]:
    content = [{"type": "tool_result", "tool_use_id": f"toolu_{message_id}", "content": text}]
    return {"type": "user", "message": {"role": "user", "content": content}}


def turn(input_tokens: int, output_tokens: int, cache_read: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cache_read,
    }


def test_every_turn_of_a_multi_turn_agent_counts(tmp_path: Path) -> None:
    """A fixer's Read, Edit, Edit and answer: four model responses, each written as one line per content
    block with the same message id; the tool results between them say "assistant" too."""
    thinking = assistant("msg_read", turn(4000, 1))
    thinking["message"]["content"] = [{"type": "thinking", "thinking": "Read it first."}]
    path = write(
        tmp_path / "fixer.jsonl",
        [
            {"type": "user", "message": {"role": "user", "content": "Fix FL-001."}},
            thinking,
            tool_use("msg_read", turn(4000, 30), "Read"),
            tool_result("msg_read", 'def f():\n    return {"role": "assistant"}\n'),
            tool_use("msg_edit1", turn(4500, 60, cache_read=4000), "Edit"),
            tool_result("msg_edit1", "The file has been updated."),
            tool_use("msg_edit2", turn(4600, 55, cache_read=4500), "Edit"),
            tool_use("msg_edit2", turn(4600, 55, cache_read=4500), "Edit"),  # the same response again
            tool_result("msg_edit2", "The file has been updated."),
            assistant("msg_answer", turn(4700, 120, cache_read=4600), model="claude-opus-5-1"),
        ],
    )
    assert transcript_usage(str(path)) == {
        "usage": {
            "input_tokens": 4000 + 4500 + 4600 + 4700,
            "output_tokens": 30 + 60 + 55 + 120,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 4000 + 4500 + 4600,
        },
        "total_tokens": 17800 + 265 + 13100,
        "model": "claude-opus-5-1",
        "responses": 4,
        "complete": True,
    }


def test_garbled_lines_are_skipped(tmp_path: Path) -> None:
    good = json.dumps(assistant("msg_1", turn(100, 10))).encode()
    not_usage = assistant("msg_2", turn(1, 1))
    not_usage["message"]["usage"] = "lots"
    lines = [
        good,
        b'["assistant", {"usage": 5}]',  # JSON, but not an object
        b'"assistant"',
        b'{"type": "assistant", "message": "hello"}',
        json.dumps(not_usage).encode(),
        b'{"type": "assistant", "message": {"id": "msg_3", "usage": {"input_tokens": 7}}, \xff\xfe}',
        b"[" * 100_000 + b'"assistant"' + b"]" * 99_999 + b"}",
        b'{"type": "assistant", "message": {"id": "msg_4", "usage": {"input_tokens": 5',  # being written
    ]
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(lines))
    spent = transcript_usage(str(path))
    assert spent is not None
    assert (spent["usage"]["input_tokens"], spent["usage"]["output_tokens"], spent["responses"]) == (
        100,
        10,
        1,
    )
    assert spent["complete"] is True


def test_an_unreadable_transcript_is_none(tmp_path: Path) -> None:
    assert transcript_usage(str(tmp_path)) is None  # a directory
    assert transcript_usage("") is None
    assert transcript_usage(str(write(tmp_path / "empty.jsonl", []))) is None


def test_one_huge_line_is_read_only_up_to_the_bound(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(module, "MAX_TRANSCRIPT_BYTES", 10_000)
    path = tmp_path / "t.jsonl"
    first = json.dumps(assistant("msg_1", turn(100, 10))) + "\n"
    path.write_text(first + '{"type": "assistant", "text": "' + "x" * 1_000_000 + '"}\n')
    asked: list[int] = []
    real_open = open

    def spy_open(*args: Any, **kwargs: Any) -> Any:
        handle = real_open(*args, **kwargs)
        real_read = handle.read

        def read(size: int = -1) -> bytes:
            asked.append(size)
            data: bytes = real_read(size)
            return data

        handle.read = read
        return handle

    monkeypatch.setattr("builtins.open", spy_open)
    spent = transcript_usage(str(path))
    assert spent is not None and spent["responses"] == 1 and spent["complete"] is False
    assert asked == [10_001]
