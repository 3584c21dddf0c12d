"""Reading Claude Code's hook payloads: who fired the hook, for which agent, with what answer."""

from __future__ import annotations

import os

from fixloop.core import agent_names, jsoncodec
from fixloop.hookside import PLUGIN_ROOT
from fixloop.store import layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

SUBAGENT_TOOLS = ("Agent", "Task")
REPORT_STATUSES = ("success", "failed", "partial")


def session_of(payload: Mapping[str, Any]) -> str | None:
    """The Claude Code session: the payload's `session_id`, else $CLAUDE_CODE_SESSION_ID."""
    session = payload.get("session_id")
    if isinstance(session, str) and session:
        return session
    return os.environ.get("CLAUDE_CODE_SESSION_ID") or None


def project_of(payload: Mapping[str, Any]) -> str:
    cwd = payload.get("cwd")
    return layout.project_root(cwd if isinstance(cwd, str) and cwd else None)


def tool_input_of(payload: Mapping[str, Any]) -> dict[str, Any]:
    tool_input = payload.get("tool_input")
    return tool_input if isinstance(tool_input, dict) else {}


def agent_of_tool(payload: Mapping[str, Any]) -> tuple[str, str] | None:
    """(agent type, fixloop's agent name) of an Agent/Task tool call of a fixloop subagent, else None."""
    if payload.get("tool_name") not in SUBAGENT_TOOLS:
        return None
    agent_type = tool_input_of(payload).get("subagent_type")
    agent = agent_names.agent_name(agent_type, plugin_only=True)
    return (str(agent_type), agent) if agent is not None else None


def subagent_of(payload: Mapping[str, Any]) -> str | None:
    """fixloop's name of the subagent of a SubagentStart/SubagentStop payload (None: not fixloop's)."""
    return agent_names.agent_name(payload.get("agent_type"), plugin_only=True)


def text_of(value: Any) -> str:
    """The text of a tool response's content (a string or a list of {"type":"text","text":...})."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            item["text"] for item in value if isinstance(item, dict) and isinstance(item.get("text"), str)
        )
    return ""


def parse_report(text: str) -> dict[str, Any] | None:
    """The JSON object an agent answered with, tolerating a code fence or words around it.

    Only for the agents without an output contract (the coordinators): the engine reads a contracted
    agent's answer, and the hooks take what it found from its answer to `review record`.
    """
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    for candidate in (body, body[body.find("{") : body.rfind("}") + 1]):
        if not candidate.lstrip().startswith("{"):  # no object here: spare the json module's error path
            continue
        try:
            doc = jsoncodec.loads(candidate)
        except ValueError:
            continue
        if isinstance(doc, dict):
            return doc
    return None


def report_status(text: str) -> str | None:
    """The `status` an uncontracted agent's answer claims (success, failed or partial), if any."""
    report = parse_report(text) if text else None
    status = report.get("status") if report is not None else None
    return status if status in REPORT_STATUSES else None


def agent_model(agent: str, tool_input: Mapping[str, Any]) -> str | None:
    """The model of the call: the tool input's `model`, else the `model:` of agents/<agent>.md."""
    model = tool_input.get("model")
    if isinstance(model, str) and model:
        return model
    if "/" in agent or agent.startswith("."):  # a name, never a path out of agents/
        return None
    try:
        with open(os.path.join(PLUGIN_ROOT, "agents", f"{agent}.md"), encoding="utf-8") as handle:
            head = handle.read(4096)
    except (OSError, UnicodeDecodeError):
        return None
    lines = head.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:]:
        if line.strip() == "---":
            break
        key, _, value = line.partition(":")
        if key.strip() == "model" and value.strip():
            return value.strip().strip("\"'")
    return None
