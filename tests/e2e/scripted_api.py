"""A scripted Anthropic Messages API for driving the real Claude Code CLI in tests (standard library only).

The server binds 127.0.0.1 only. Every request is logged (full JSON body, receive timestamp) to an in-memory
list and, when a log path is given, to a JSONL file (one ``os.write`` per line on an ``O_APPEND`` descriptor).

A :class:`Script` is an ordered list of :class:`Rule`. For each ``POST /v1/messages`` the first rule whose
conditions all hold answers it; its :class:`Reply` (text and tool_use blocks plus a stop reason, optionally
after a delay) is streamed back as server-sent events the way the real API does. ``count_tokens`` is answered
with an estimate. A request no rule matches is recorded in :attr:`ScriptedAPI.unmatched` and answered with a
text reply saying so (or an HTTP error, see ``Script.on_unmatched``), so a broken script ends the run instead
of hanging it.

Use it in-process::

    with ScriptedAPI(Script([Rule(reply=Reply.text("hi"))]), log_path=tmp / "requests.jsonl") as api:
        ...  # api.url -> "http://127.0.0.1:PORT"

or as a process (prints one JSON line ``{"port": N, "url": ...}`` once listening, serves until SIGTERM)::

    python tests/e2e/scripted_api.py --script my_scripts:SCRIPT --port 0 --log requests.jsonl
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import itertools
import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

HOST = "127.0.0.1"
SUBAGENT_MARKER = "cc_is_subagent=true"
DEFAULT_MODEL = "claude-sonnet-4-5"
StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence"]
JSON = dict[str, Any]

# --------------------------------------------------------------------------------------------------
# Reading requests
# --------------------------------------------------------------------------------------------------


_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>\s*", re.DOTALL)


def strip_reminders(value: str) -> str:
    """``value`` without the ``<system-reminder>...</system-reminder>`` sections Claude Code adds to user
    turns (git status, attribution rules, background-task notifications)."""
    return _REMINDER.sub("", value)


def _block_text(block: Any) -> str:
    """Text of one content block (text blocks only; tool_result content is read by tool_results())."""
    if isinstance(block, str):
        return block
    if isinstance(block, dict) and block.get("type") == "text":
        return str(block.get("text", ""))
    return ""


def content_text(content: Any, *, reminders: bool = True) -> str:
    """The text of a message's content (a string or a list of blocks), text blocks joined by newlines;
    ``reminders=False`` drops ``<system-reminder>`` sections."""
    if isinstance(content, str):
        parts = [content]
    elif isinstance(content, list):
        parts = [_block_text(block) for block in content]
    else:
        parts = []
    if not reminders:
        parts = [strip_reminders(part) for part in parts]
    return "\n".join(part for part in parts if part)


def system_text(body: Mapping[str, Any]) -> str:
    """The request's top-level ``system`` (a string or a list of text blocks) as one string."""
    return content_text(body.get("system", ""))


def is_subagent(body: Mapping[str, Any]) -> bool:
    """Whether a subagent sent the request (Claude Code puts ``cc_is_subagent=true`` in the billing header,
    the first system block)."""
    return SUBAGENT_MARKER in system_text(body)


def messages(body: Mapping[str, Any]) -> list[JSON]:
    value = body.get("messages", [])
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def last_user_message(body: Mapping[str, Any]) -> JSON | None:
    """The last ``role: "user"`` message (Claude Code's ``role: "system"`` messages are skipped)."""
    for message in reversed(messages(body)):
        if message.get("role") == "user":
            return message
    return None


def last_user_text(body: Mapping[str, Any], *, reminders: bool = True) -> str:
    """Text blocks of the last user message (tool_result blocks excluded; see :func:`tool_results`).
    Reminders are kept by default: a background agent's ``<task-notification>`` arrives as one."""
    message = last_user_message(body)
    return content_text(message.get("content"), reminders=reminders) if message else ""


def prompt_text(body: Mapping[str, Any]) -> str:
    """The first user message without reminders: the ``-p`` prompt (or expanded slash command) of the main
    thread, the ``prompt`` of a subagent call."""
    for message in messages(body):
        if message.get("role") == "user":
            return content_text(message.get("content"), reminders=False)
    return ""


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: JSON


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    name: str | None  # the tool_use's name, from the assistant message that asked for it (None if not found)
    text: str
    is_error: bool
    input: JSON | None  # the tool_use's input (None if not found)


def tool_uses(body: Mapping[str, Any]) -> list[ToolUse]:
    """Every tool_use block of every assistant message in the conversation, in order."""
    found: list[ToolUse] = []
    for message in messages(body):
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                raw_input = block.get("input")
                found.append(
                    ToolUse(
                        str(block.get("id", "")),
                        str(block.get("name", "")),
                        raw_input if isinstance(raw_input, dict) else {},
                    )
                )
    return found


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


def tool_results(body: Mapping[str, Any], *, last_only: bool = True) -> list[ToolResult]:
    """tool_result blocks of the last user message (or of every user message with ``last_only=False``),
    each with the name and input of the tool_use it answers."""
    uses = {use.id: use for use in tool_uses(body)}
    if last_only:
        last = last_user_message(body)
        source = [last] if last else []
    else:
        source = [m for m in messages(body) if m.get("role") == "user"]
    results: list[ToolResult] = []
    for message in source:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                use_id = str(block.get("tool_use_id", ""))
                use = uses.get(use_id)
                results.append(
                    ToolResult(
                        tool_use_id=use_id,
                        name=use.name if use else None,
                        text=_result_text(block.get("content")),
                        is_error=bool(block.get("is_error", False)),
                        input=use.input if use else None,
                    )
                )
    return results


def tool_names(body: Mapping[str, Any]) -> list[str]:
    """Names of the tools offered to the model in this request."""
    tools = body.get("tools", [])
    return [str(t.get("name")) for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []


HAND_BACK_PREFIX = "[Subagent hand-back]"
_REPORT_START = "The report follows:\n"
_REPORT_END = "\nagentId: "
_NOTIFICATION_RESULT = re.compile(r"<result>(.*?)</result>", re.DOTALL)


def subagent_report(tool_result_text: str) -> str | None:
    """The report inside a foreground Agent tool result; None when the text holds no such frame.

    Claude Code 2.1.328 returns ``[Subagent hand-back] ... The report follows:\n`` + the report with every
    line indented by two spaces + ``\nagentId: ID (use SendMessage ...)\n<usage>...</usage>``. When the
    report holds control tags such as ``<system-reminder>``, an indented ``[harness: ...]`` note comes first
    and the report's tags arrive neutralized (``<`` -> ``<\\``); the report is returned as delivered."""
    if tool_result_text.startswith(HAND_BACK_PREFIX):
        frame = tool_result_text
    else:
        position = tool_result_text.find("\n" + HAND_BACK_PREFIX)
        if position < 0:
            return None
        frame = tool_result_text[position + 1 :]
    if _REPORT_START not in frame:
        return None
    body = frame.split(_REPORT_START, 1)[1]
    # Report lines are indented, so the trailer's column-zero "agentId:" line cannot come from the report.
    end = body.rfind(_REPORT_END)
    if end >= 0:
        body = body[:end]
    return "\n".join(line[2:] if line.startswith("  ") else line for line in body.split("\n"))


def task_notification_results(text: str) -> list[str]:
    """The ``<result>`` texts of background agents' ``<task-notification>`` blocks in a user turn."""
    if "<task-notification>" not in text:
        return []
    return [match.group(1) for match in _NOTIFICATION_RESULT.finditer(text)]


def agent_identity(body: Mapping[str, Any], markers: Mapping[str, str] | None = None) -> str:
    """Which agent sent the request: the first name in ``markers`` (name -> substring of that agent's body)
    whose marker is in the system prompt; else ``"subagent"`` for an unrecognised subagent, ``"main"`` for the
    main thread."""
    system = system_text(body)
    for name, marker in (markers or {}).items():
        if marker in system:
            return name
    return "subagent" if SUBAGENT_MARKER in system else "main"


# --------------------------------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------------------------------

_tool_ids = itertools.count(1)


@dataclass(frozen=True)
class Block:
    """One content block of a reply: ``type`` "text" (with ``text``) or "tool_use" (with name/input/id)."""

    type: Literal["text", "tool_use"]
    text: str = ""
    name: str = ""
    input: JSON = field(default_factory=dict)
    id: str | None = None  # tool_use id; generated (unique per process) when None

    def to_json(self, tool_id: str | None = None) -> JSON:
        if self.type == "text":
            return {"type": "text", "text": self.text}
        return {"type": "tool_use", "id": tool_id or self.id or "", "name": self.name, "input": self.input}


def text(value: str) -> Block:
    return Block("text", text=value)


def tool_use(name: str, tool_input: Mapping[str, Any], *, id: str | None = None) -> Block:
    return Block("tool_use", name=name, input=dict(tool_input), id=id)


def agent_call(
    subagent_type: str,
    prompt: str,
    *,
    description: str | None = None,
    background: bool = False,
    id: str | None = None,
    **extra: Any,
) -> Block:
    """An ``Agent`` tool_use. Foreground by default (``run_in_background: false``) so the report comes back as
    the tool result; Claude Code's own default is background."""
    tool_input: JSON = {
        "description": description or f"run {subagent_type}",
        "prompt": prompt,
        "subagent_type": subagent_type,
        "run_in_background": background,
        **extra,
    }
    return tool_use("Agent", tool_input, id=id)


def bash_call(command: str, *, description: str | None = None, id: str | None = None) -> Block:
    tool_input: JSON = {"command": command}
    if description:
        tool_input["description"] = description
    return tool_use("Bash", tool_input, id=id)


@dataclass(frozen=True)
class Reply:
    blocks: Sequence[Block]
    stop_reason: StopReason | None = None  # None: "tool_use" when a block is a tool_use, else "end_turn"
    delay: float = 0.0  # seconds to wait before answering (added to the rule's delay)
    hold: Callable[[], None] | None = None  # called before answering, outside the server's lock

    @staticmethod
    def text(value: str, *, delay: float = 0.0) -> Reply:
        return Reply([text(value)], delay=delay)

    @staticmethod
    def tools(*blocks: Block, preface: str | None = None, delay: float = 0.0) -> Reply:
        return Reply(([text(preface)] if preface else []) + list(blocks), delay=delay)

    def effective_stop_reason(self) -> StopReason:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(b.type == "tool_use" for b in self.blocks) else "end_turn"

    def content(self) -> list[JSON]:
        """The content blocks as JSON, tool_use ids filled in (generated ids are unique per process)."""
        return [
            block.to_json(None if block.type == "text" or block.id else f"toolu_s{next(_tool_ids):05d}")
            for block in self.blocks
        ]


# --------------------------------------------------------------------------------------------------
# Requests as the script sees them, and rules
# --------------------------------------------------------------------------------------------------


@dataclass
class Request:
    """One received request. ``seq`` counts every request the server received, from 0."""

    seq: int
    method: str
    path: str
    headers: dict[str, str]
    body: JSON
    received_at: float  # epoch seconds
    rule: str | None = None  # the name of the rule that answered (None: unmatched or not a messages call)
    reply: JSON | None = None  # {"content": [...], "stop_reason": ...} as sent
    delay: float = 0.0
    finished_at: float | None = None

    @property
    def system(self) -> str:
        return system_text(self.body)

    @property
    def is_subagent(self) -> bool:
        return is_subagent(self.body)

    @property
    def last_user_text(self) -> str:
        return last_user_text(self.body)

    @property
    def prompt(self) -> str:
        """The task: the first user message without reminders (see :func:`prompt_text`)."""
        return prompt_text(self.body)

    @property
    def tool_results(self) -> list[ToolResult]:
        return tool_results(self.body)

    @property
    def tools(self) -> list[str]:
        return tool_names(self.body)

    @property
    def agent_id(self) -> str | None:
        """Claude Code's id of the subagent that sent this (header ``x-claude-code-agent-id``); None: main."""
        return self.headers.get("x-claude-code-agent-id")

    @property
    def session_id(self) -> str | None:
        return self.headers.get("x-claude-code-session-id")

    def agent(self, markers: Mapping[str, str] | None = None) -> str:
        return agent_identity(self.body, markers)

    def log_record(self) -> JSON:
        return {
            "seq": self.seq,
            "received_at": self.received_at,
            "received_at_iso": datetime.fromtimestamp(self.received_at, timezone.utc).isoformat(
                timespec="milliseconds"
            ),
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "rule": self.rule,
            "delay": self.delay,
            "reply": self.reply,
            "body": self.body,
        }


def _as_collection(value: str | Collection[str] | None) -> Collection[str] | None:
    return (value,) if isinstance(value, str) else value


ReplyFactory = Callable[[Request, int], Reply]


@dataclass
class Rule:
    """Answers a request when every condition that is set holds. String conditions are substrings; a tuple
    of strings means all of them. The counter condition ``calls`` is tested last: the rule counts the requests
    that met its other conditions (from 0) and answers only those whose count is in ``calls``
    (``times=N`` is ``calls=range(N)``)."""

    reply: Reply | ReplyFactory
    name: str = ""
    # which agent
    system_contains: str | Collection[str] | None = None
    system_excludes: str | Collection[str] | None = None
    subagent: bool | None = None  # True: only subagent requests; False: only the main thread
    # the last user turn
    user_contains: str | Collection[str] | None = None  # in the last user message's text blocks
    user_regex: str | None = None
    prompt_contains: str | Collection[str] | None = None  # in Request.prompt (the task / -p prompt)
    # the tool results in the last user message
    has_tool_results: bool | None = None
    tool_result_ids: str | Collection[str] | None = None  # every listed tool_use id has a result
    tool_result_names: str | Collection[str] | None = None  # a result for each listed tool name
    tool_result_contains: str | Collection[str] | None = None  # some result's text holds each substring
    tool_result_is_error: bool | None = None  # some result is (True) / no result is (False) an error
    # anything else
    where: Callable[[Request], bool] | None = None
    # counter
    calls: Collection[int] | None = None
    times: int | None = None
    delay: float = 0.0
    matched: int = field(default=0, init=False)  # requests that met the conditions (before `calls`)
    answered: int = field(default=0, init=False)

    def conditions_hold(self, request: Request) -> bool:
        system = request.system
        checks: list[tuple[str | Collection[str] | None, str, bool]] = [
            (self.system_contains, system, True),
            (self.system_excludes, system, False),
            (self.user_contains, request.last_user_text, True),
            (self.prompt_contains, request.prompt, True),
        ]
        for wanted, haystack, present in checks:
            items = _as_collection(wanted)
            if items is None:
                continue
            if present and not all(item in haystack for item in items):
                return False
            if not present and any(item in haystack for item in items):
                return False
        if self.subagent is not None and request.is_subagent != self.subagent:
            return False
        if self.user_regex is not None and not re.search(self.user_regex, request.last_user_text):
            return False
        return self._tool_results_hold(request.tool_results) and (self.where is None or self.where(request))

    def _tool_results_hold(self, results: list[ToolResult]) -> bool:
        if self.has_tool_results is not None and bool(results) != self.has_tool_results:
            return False
        ids = _as_collection(self.tool_result_ids)
        if ids is not None and not set(ids) <= {r.tool_use_id for r in results}:
            return False
        names = _as_collection(self.tool_result_names)
        if names is not None and not set(names) <= {r.name for r in results}:
            return False
        substrings = _as_collection(self.tool_result_contains)
        if substrings is not None and not all(any(s in r.text for r in results) for s in substrings):
            return False
        if self.tool_result_is_error is True and not any(r.is_error for r in results):
            return False
        return not (self.tool_result_is_error is False and any(r.is_error for r in results))

    def counter_allows(self, index: int) -> bool:
        if self.times is not None and index >= self.times:
            return False
        return self.calls is None or index in self.calls

    def make_reply(self, request: Request, index: int) -> Reply:
        return self.reply(request, index) if callable(self.reply) else self.reply


@dataclass
class Script:
    rules: Sequence[Rule]
    # what to do when no rule matches: "text" answers end_turn with a text saying so; "error" answers HTTP 400
    on_unmatched: Literal["text", "error"] = "text"
    unmatched_text: str = "SCRIPTED_API: no rule matched this request"

    def reset(self) -> None:
        """Zero every rule's counters (to reuse the script in another run)."""
        for rule in self.rules:
            rule.matched = 0
            rule.answered = 0

    def choose(self, request: Request) -> tuple[int, Rule, Reply] | None:
        """The first rule that answers ``request`` (its counters updated), with its reply."""
        for position, rule in enumerate(self.rules):
            if not rule.conditions_hold(request):
                continue
            index = rule.matched
            rule.matched += 1
            if rule.counter_allows(index):
                rule.answered += 1
                return position, rule, rule.make_reply(request, index)
        return None


# --------------------------------------------------------------------------------------------------
# Server-sent events
# --------------------------------------------------------------------------------------------------


def sse_event(name: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _chunks(value: str, size: int | None) -> list[str]:
    if not size or len(value) <= size:
        return [value]
    return [value[i : i + size] for i in range(0, len(value), size)]


def sse_stream(
    content: Sequence[Mapping[str, Any]],
    stop_reason: str,
    *,
    model: str = DEFAULT_MODEL,
    message_id: str = "msg_scripted",
    input_tokens: int = 10,
    chunk_size: int | None = None,
) -> Iterator[bytes]:
    """The SSE events of one streamed message: message_start, per block start/delta(s)/stop, message_delta,
    message_stop. ``chunk_size`` splits text and tool input JSON into several deltas."""
    output_tokens = 1
    yield sse_event(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": input_tokens, "output_tokens": 1},
            },
        },
    )
    for index, block in enumerate(content):
        if block["type"] == "text":
            start: JSON = {"type": "text", "text": ""}
            deltas = [
                {"type": "text_delta", "text": part} for part in _chunks(str(block["text"]), chunk_size)
            ]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": part} for part in _chunks(raw, chunk_size)]
        yield sse_event(
            "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
        )
        for delta in deltas:
            output_tokens += 1
            yield sse_event(
                "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
            )
        yield sse_event("content_block_stop", {"type": "content_block_stop", "index": index})
    yield sse_event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
    )
    yield sse_event("message_stop", {"type": "message_stop"})


def is_messages_call(method: str, path: str) -> bool:
    """Whether this is a ``POST /v1/messages`` call (not count_tokens, not anything else)."""
    return method == "POST" and path.split("?", 1)[0].rstrip("/").endswith("/v1/messages")


def estimate_tokens(body: Mapping[str, Any]) -> int:
    return max(1, len(json.dumps(body)) // 4)


# --------------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------------

_REDACTED_HEADERS = {"x-api-key", "authorization"}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> tuple[JSON, str | None]:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return {}, None
        try:
            parsed = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            return {"_raw": raw.decode("utf-8", "replace")}, f"invalid JSON body: {error}"
        return (parsed if isinstance(parsed, dict) else {"_value": parsed}), None

    def _send_json(self, status: int, document: Mapping[str, Any]) -> None:
        payload = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _error(self, status: int, kind: str, message: str) -> None:
        self._send_json(status, {"type": "error", "error": {"type": kind, "message": message}})

    def do_GET(self) -> None:
        request = self.server.api.receive(self.command, self.path, dict(self.headers.items()), {})
        self.server.api.write_log(request)
        self._error(404, "not_found_error", f"scripted API: no GET endpoint {self.path}")
        self.server.api.finish(request)

    def do_POST(self) -> None:
        body, problem = self._read_body()
        api = self.server.api
        request = api.receive(self.command, self.path, dict(self.headers.items()), body)
        # Every request is logged before its answer goes out; a messages call once its reply is chosen.
        if problem is not None or not is_messages_call(self.command, self.path):
            api.write_log(request)
        try:
            route = self.path.split("?", 1)[0].rstrip("/")
            if problem is not None:
                self._error(400, "invalid_request_error", problem)
            elif route.endswith("/count_tokens"):
                self._send_json(200, {"input_tokens": estimate_tokens(body)})
            elif route.endswith("/v1/messages"):
                self._answer_messages(request)
            else:
                self._error(404, "not_found_error", f"scripted API: no endpoint {self.path}")
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            api.finish(request)

    def _answer_messages(self, request: Request) -> None:
        api = self.server.api
        reply = api.choose(request)
        if reply is None or request.reply is None:
            self._error(400, "invalid_request_error", api.script.unmatched_text)
            return
        if reply.hold is not None:
            reply.hold()  # outside the server's lock: other requests go on meanwhile
        if request.delay > 0:
            time.sleep(request.delay)
        content = request.reply["content"]
        stop_reason = str(request.reply["stop_reason"])
        model = str(request.body.get("model") or DEFAULT_MODEL)
        message_id = f"msg_scripted_{request.seq:05d}"
        if request.body.get("stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            for event in sse_stream(
                content,
                stop_reason,
                model=model,
                message_id=message_id,
                input_tokens=estimate_tokens(request.body),
                chunk_size=api.chunk_size,
            ):
                self.wfile.write(event)
            self.wfile.flush()
        else:
            self._send_json(
                200,
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": content,
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": estimate_tokens(request.body),
                        "output_tokens": len(content) + 1,
                    },
                },
            )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, api: ScriptedAPI, port: int) -> None:
        self.api = api
        super().__init__((HOST, port), _Handler)


class ScriptedAPI:
    """The scripted API server. ``start()``/``stop()`` or use it as a context manager (serves on a thread)."""

    def __init__(
        self,
        script: Script,
        *,
        port: int = 0,
        log_path: str | os.PathLike[str] | None = None,
        chunk_size: int | None = None,
    ) -> None:
        self.script = script
        self.chunk_size = chunk_size
        self.log_path = Path(log_path) if log_path is not None else None
        self.requests: list[Request] = []
        self.unmatched: list[Request] = []
        self._lock = threading.Lock()
        self._seq = itertools.count()
        self._log_fd: int | None = None
        self._server = _Server(self, port)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    # lifecycle -------------------------------------------------------------------------------------

    def _open_log(self) -> None:
        if self.log_path is not None and self._log_fd is None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log_fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def start(self) -> ScriptedAPI:
        self._open_log()
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-api", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._open_log()
        self._server.serve_forever()

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._server.server_close()
        if self._log_fd is not None:
            os.close(self._log_fd)
            self._log_fd = None

    def __enter__(self) -> ScriptedAPI:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    # requests ------------------------------------------------------------------------------------

    def receive(self, method: str, path: str, headers: dict[str, str], body: JSON) -> Request:
        received_at = time.time()
        shown = {key.lower(): value for key, value in headers.items()}
        shown.update({key: "<redacted>" for key in _REDACTED_HEADERS & shown.keys()})
        with self._lock:
            request = Request(next(self._seq), method, path, shown, body, received_at)
            self.requests.append(request)
        return request

    def choose(self, request: Request) -> Reply | None:
        """Pick the reply for a messages request (None: answer with an error), record the choice on the
        request and write its log line."""
        with self._lock:
            chosen = self.script.choose(request)
            reply: Reply | None
            if chosen is None:
                self.unmatched.append(request)
                reply = Reply.text(self.script.unmatched_text) if self.script.on_unmatched == "text" else None
            else:
                position, rule, reply = chosen
                request.rule = rule.name or f"#{position}"
                request.delay = rule.delay + reply.delay
            if reply is not None:
                request.reply = {"content": reply.content(), "stop_reason": reply.effective_stop_reason()}
        self.write_log(request)
        return reply

    def finish(self, request: Request) -> None:
        request.finished_at = time.time()

    def write_log(self, request: Request) -> None:
        """Append the request's record to the log file: one line, one ``os.write`` on an O_APPEND fd."""
        if self._log_fd is None:
            return
        line = json.dumps(request.log_record(), ensure_ascii=False) + "\n"
        os.write(self._log_fd, line.encode())

    def message_requests(self) -> list[Request]:
        """The ``POST /v1/messages`` requests (count_tokens and others excluded), in arrival order."""
        return [r for r in self.requests if is_messages_call(r.method, r.path)]


def read_request_log(path: str | os.PathLike[str], *, offset: int = 0) -> list[JSON]:
    """The records of a JSONL request log from byte ``offset`` on (a torn line, from a killed server, is
    skipped; a missing file has no records)."""
    records: list[JSON] = []
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except FileNotFoundError:
        return records
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


# --------------------------------------------------------------------------------------------------
# Running as a process
# --------------------------------------------------------------------------------------------------


def load_script(spec: str) -> Script:
    """``module:attr`` or ``path/to/file.py:attr``; the attribute is a Script or a callable returning one."""
    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise ValueError(f"--script must be module:attr or file.py:attr, got {spec!r}")
    if target.endswith(".py") or os.sep in target:
        location = Path(target).resolve()
        module_spec = importlib.util.spec_from_file_location(location.stem, location)
        if module_spec is None or module_spec.loader is None:
            raise ValueError(f"cannot load {location}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[location.stem] = module
        module_spec.loader.exec_module(module)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        module = importlib.import_module(target)
    value = getattr(module, attr)
    if callable(value) and not isinstance(value, Script):
        value = value()
    if not isinstance(value, Script):
        raise TypeError(f"{spec} is {type(value).__name__}, not a Script")
    return value


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--script", required=True, help="module:attr or file.py:attr naming a Script")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port, printed)")
    parser.add_argument("--log", help="JSONL request log to append to")
    parser.add_argument("--chunk-size", type=int, default=None, help="split text/tool input into deltas")
    args = parser.parse_args(list(argv) if argv is not None else None)
    api = ScriptedAPI(load_script(args.script), port=args.port, log_path=args.log, chunk_size=args.chunk_size)

    def _stop(signum: int, frame: object) -> None:
        threading.Thread(target=api._server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    print(json.dumps({"port": api.port, "url": api.url}), flush=True)
    try:
        api.serve_forever()
    finally:
        api.stop()
    return 0


if __name__ == "__main__":
    # Scripts do `from scripted_api import ...`: let that name this very module, so their Script, Rule and
    # Reply are the classes main() checks against (not a second copy of the module).
    sys.modules.setdefault("scripted_api", sys.modules[__name__])
    sys.exit(main())
