"""A scripted agent that reads its whole task the way its context tells it to: when the SubagentStart
context names a file holding the task (a task past Claude Code's 10,000-character limit), it reads it with
the real Read tool in the ranges given and rebuilds the task from the tool's results, then checks that the
task and its context end with the agent's contract before its behaviour answers from the whole task."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fixloop_model import CLI_ENVIRONMENT, Act, Behaviour, Turn
from scripted_api import content_text, messages, tool_use

from fixloop.contracts.prompt_text import contract_text

CONTEXT_LIMIT = 10_000  # what Claude Code 2.1.328 delivers whole
NOTE = re.compile(r"READ THE WHOLE TASK FIRST: (\S+) \((\d+) lines\)")
RANGES = re.compile(r"offset:limit = ([\d:, ]+)")
READ_LINE = re.compile(r"^ *\d+[→\t](.*)$")
CONTINUED = " ↩"
JSON = dict[str, Any]


def read_results(body: Mapping[str, Any]) -> dict[str, str]:
    """tool_use id -> the text of its tool_result, over the whole conversation."""
    found: dict[str, str] = {}
    for message in messages(body):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                raw = block.get("content")
                text = content_text(raw, reminders=False) if isinstance(raw, list) else str(raw or "")
                found[str(block.get("tool_use_id"))] = text
    return found


def read_calls(body: Mapping[str, Any]) -> list[tuple[str, JSON]]:
    """(id, input) of every Read call the agent made, in order."""
    calls = []
    for message in messages(body):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Read":
                calls.append((str(block.get("id")), dict(block.get("input") or {})))
    return calls


def lines_of(result: str) -> list[str]:
    """The file's lines in a Read result (each shown after its number)."""
    lines = []
    for line in result.split("\n"):
        match = READ_LINE.match(line)
        if match is not None:
            lines.append(match[1])
    return lines


class WholeTask:
    """Wraps a behaviour: reads the task file its context names (Read calls in the ranges given), then checks
    the whole task and hands it to the behaviour. Problems go to `problems`."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.tasks: dict[str, list[str]] = {}  # agent -> the whole task of each of its turns
        self.contexts: dict[str, list[str]] = {}

    def wrap(self, kind: str, behaviour: Behaviour, check: Any) -> Behaviour:
        def behave(turn: Turn) -> Act:
            context = turn.task.split(CLI_ENVIRONMENT, 1)[0]
            note = NOTE.search(context)
            if note is None:
                task = context
            else:
                path, total = note[1], int(note[2])
                listed = RANGES.search(context)
                if listed is None:
                    self.problems.append(f"{turn.agent}: the context names no ranges")
                    return behaviour(turn)
                ranges = [(int(o), int(n)) for o, n in re.findall(r"(\d+):(\d+)", listed[1])]
                made = [(i, c) for i, c in read_calls(turn.request.body) if c.get("file_path") == path]
                if not made:
                    return [tool_use("Read", {"file_path": path, "offset": o, "limit": n}) for o, n in ranges]
                results = read_results(turn.request.body)
                got: list[str] = []
                for call_id, _call in made:
                    got += lines_of(results.get(call_id, ""))
                if len(got) != total:
                    self.problems.append(f"{turn.agent}: read {len(got)} of {total} lines of {path}")
                task = "\n".join(got).replace(CONTINUED + "\n", "")
            self.contexts.setdefault(turn.agent, []).append(context)
            self.tasks.setdefault(turn.agent, []).append(task)
            if len(context) > CONTEXT_LIMIT:
                self.problems.append(f"{turn.agent}: a context of {len(context)} characters")
            marker = contract_text(kind).split("\n")[-1]
            if not task.endswith(marker) or not context.endswith(marker):
                self.problems.append(f"{turn.agent}: the task or its context does not end with its contract")
            self.problems += [f"{turn.agent}: {p}" for p in check(task)]
            return behaviour(Turn(turn.agent, turn.request, task, turn.attempt))

        return behave
