"""A scripted model that follows fixloop's own agent instructions, for end-to-end runs of the real CLI.

:class:`FixloopModel` answers every request of a ``/fixloop:review`` session served by
:class:`scripted_api.ScriptedAPI`. It recognises who is asking (the main thread running the command, the
review coordinator, each reviewer, the fixer, the verifier) from markers taken at import time from the
plugin's own markdown files, so an edit to an agent file that breaks recognition fails loudly here instead
of silently changing what the tests exercise. Then it answers the way a model obeying that file would:

- main thread (``commands/review.md``): launches the coordinator with ``Run RUN. You own this run.``, then
  shows the Markdown report;
- review coordinator (``agents/review-coordinator.md``): ``run show``, ``run phase --start 0``, then a loop on
  the last ``fixloop review next`` answer (verify -> ``fixloop verify``; review -> one foreground Agent call
  per reviewer, all in ONE assistant message; verify_findings / fix -> one Agent call; ask_user ->
  ``review choose RUN --default`` since AskUserQuestion is not offered in ``-p``; stop / failed -> leave),
  then the report, ``run phase --end 0``, ``run end``, and the report JSON as its final message;
- reviewers, fixer and verifier: what the scenario's :class:`ScenarioPlan` says for the round named in
  their prompt (``review round N``) and their attempt (1 + the ``Stop hook feedback`` turns so far). The
  fixer really edits files (Read, then Edit/Write tool calls) so hooks, snapshots and rollbacks see real
  changes.

Everything is derived from the request alone (the conversation so far), like a model would; the only
state kept is :attr:`FixloopModel.problems`, a list of anomalies the model met (an unknown actor, a tool
error, a missing engine answer) that a test should assert is empty.

The helpers at the end read what a run left behind (state, JSONL and text logs, the engine's report) and
check the logged durations against the log's own timestamps.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from claude_runner import REPO_ROOT, SAMPLE_DEFECTS, ClaudeRunner, RunResult, git
from scripted_api import (
    SUBAGENT_MARKER,
    Block,
    Reply,
    Request,
    Rule,
    Script,
    ScriptedAPI,
    ToolResult,
    ToolUse,
    agent_call,
    bash_call,
    messages,
    subagent_report,
    tool_use,
)

from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT
from fixloop.store.logtext import render_text

JSON = dict[str, Any]
Answer = str | Mapping[str, Any]  # a final message: sent as is (str) or as compact JSON (a mapping)

PLUGIN = "fixloop"
COORDINATOR = "review-coordinator"
MAIN = "main"
UNKNOWN = "unknown"
ENGINE_RELATIVE = "scripts/fixloop"
STOP_FEEDBACK = "Stop hook feedback:"
MAX_REVIEW_NEXT = 60  # agents/review-coordinator.md: "after 60 calls of `review next`"
CLI_PERMISSION_MODE = "acceptEdits"  # the fixer's Edit/Write need it in -p


# --------------------------------------------------------------------------------------------------
# The plugin's markdown files, and the markers that tell the actors apart
# --------------------------------------------------------------------------------------------------


class PluginDrift(RuntimeError):
    """The plugin's markdown no longer has what the scripted model recognises its actors by."""


@dataclass(frozen=True)
class MarkdownFile:
    path: Path
    meta: dict[str, str]  # frontmatter, flat `key: value` lines
    body: str

    @property
    def name(self) -> str:
        return self.meta.get("name") or self.path.stem


def read_markdown(path: Path) -> MarkdownFile:
    content = path.read_text(encoding="utf-8")
    lines = content.split("\n")
    if not lines or lines[0].strip() != "---":
        raise PluginDrift(f"{path} has no frontmatter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise PluginDrift(f"{path}: the frontmatter is not closed") from None
    meta: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            meta[key.strip()] = value.strip().strip("\"'")
    return MarkdownFile(path, meta, "\n".join(lines[end + 1 :]))


def contract_marker(name: str) -> str:
    """What identifies agent ``name`` in a subagent's system prompt: its output contract's ``"agent"``
    field as its own body spells it out (``{"status": ..., "agent": "code-reviewer", ...}``)."""
    return f'"agent": "{name}"'


def command_marker(command: MarkdownFile) -> str:
    """The first line of the command body (what the main thread's expanded prompt starts with)."""
    for line in command.body.split("\n"):
        if line.strip() and "$" not in line and "`" not in line:
            return line.strip()
    raise PluginDrift(f"{command.path}: no plain first line to recognise the command by")


def load_agents(plugin_dir: Path = REPO_ROOT) -> dict[str, MarkdownFile]:
    agents = {}
    for path in sorted((plugin_dir / "agents").glob("*.md")):
        agent = read_markdown(path)
        agents[agent.name] = agent
    return agents


def agent_markers(agents: Mapping[str, MarkdownFile], actors: Sequence[str]) -> dict[str, str]:
    """actor -> marker; PluginDrift unless each marker is in its own body and in no other agent's body."""
    markers: dict[str, str] = {}
    for actor in actors:
        if actor not in agents:
            raise PluginDrift(f"no agents/*.md has `name: {actor}`")
        marker = contract_marker(actor)
        if marker not in agents[actor].body:
            raise PluginDrift(
                f"{agents[actor].path.name} no longer shows its contract's `{marker}`; the scripted model "
                "recognises the agent by it (tests/e2e/fixloop_model.py)"
            )
        others = [a.path.name for name, a in agents.items() if name != actor and marker in a.body]
        if others:
            raise PluginDrift(
                f"`{marker}` also appears in {', '.join(others)}: it no longer tells agents apart"
            )
        markers[actor] = marker
    return markers


AGENT_FILES = load_agents()
ACTORS: tuple[str, ...] = (COORDINATOR, *REVIEWER_AGENTS, FIXER_AGENT, VERIFIER_AGENT)
MARKERS = agent_markers(AGENT_FILES, ACTORS)
REVIEW_COMMAND = read_markdown(REPO_ROOT / "commands" / "review.md")
REVIEW_COMMAND_MARKER = command_marker(REVIEW_COMMAND)


def _check_instructions() -> None:
    """The instructions the scripted coordinator and main thread follow are still the ones written."""
    coordinator = AGENT_FILES[COORDINATOR].body
    for phrase in (
        "fixloop review next RUN",
        "`run_in_background: false`",
        "in ONE message, one Agent call per entry of `agents`",
        "fixloop review choose RUN --default",
        "fixloop run phase RUN --start 0",
        "fixloop run phase RUN --end 0 --status S",
        "fixloop run end RUN --status S",
        "fixloop review report RUN --format json",
        "Your final message is ONLY the report's JSON as printed",
    ):
        if phrase not in coordinator:
            raise PluginDrift(
                f"agents/review-coordinator.md no longer says {phrase!r}: update fixloop_model.py"
            )
    for phrase in (
        "`subagent_type` `fixloop:review-coordinator`",
        "prompt `Run RUN. You own this run.`",
        "fixloop review report RUN --format markdown",
    ):
        if phrase not in REVIEW_COMMAND.body:
            raise PluginDrift(f"commands/review.md no longer says {phrase!r}: update fixloop_model.py")


_check_instructions()


def identify(request: Request) -> str:
    """The actor of a request: an agent name of ACTORS, ``main`` for the main thread running
    ``/fixloop:review``, or ``unknown``."""
    system = request.system
    if SUBAGENT_MARKER in system:
        for actor, marker in MARKERS.items():
            if marker in system:
                return actor
        return UNKNOWN
    return MAIN if REVIEW_COMMAND_MARKER in request.prompt else UNKNOWN


# --------------------------------------------------------------------------------------------------
# Reading a conversation
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One assistant message of the conversation with the results its tool calls got."""

    uses: tuple[ToolUse, ...]
    results: tuple[ToolResult | None, ...]
    text: str

    @property
    def bash(self) -> str | None:
        """The command of a single-Bash step."""
        if len(self.uses) == 1 and self.uses[0].name == "Bash":
            return str(self.uses[0].input.get("command", ""))
        return None

    @property
    def result_text(self) -> str:
        result = self.results[0] if self.results else None
        return result.text if result is not None else ""


def steps_of(body: Mapping[str, Any]) -> list[Step]:
    """The assistant messages of the conversation, each with the tool results of its calls."""
    results: dict[str, ToolResult] = {}
    uses_by_id: dict[str, ToolUse] = {}
    found: list[tuple[list[ToolUse], str]] = []
    for message in messages(body):
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, list):
            uses: list[ToolUse] = []
            words: list[str] = []
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    raw = block.get("input")
                    use = ToolUse(
                        str(block.get("id", "")),
                        str(block.get("name", "")),
                        raw if isinstance(raw, dict) else {},
                    )
                    uses.append(use)
                    uses_by_id[use.id] = use
                elif block.get("type") == "text":
                    words.append(str(block.get("text", "")))
            found.append((uses, "\n".join(words)))
        elif message.get("role") == "user" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    use_id = str(block.get("tool_use_id", ""))
                    use_of = uses_by_id.get(use_id)
                    raw_content = block.get("content")
                    if isinstance(raw_content, list):
                        result_text = "\n".join(
                            str(b.get("text", ""))
                            for b in raw_content
                            if isinstance(b, dict) and b.get("type") == "text"
                        )
                    else:
                        result_text = str(raw_content or "")
                    results[use_id] = ToolResult(
                        use_id,
                        use_of.name if use_of else None,
                        result_text,
                        bool(block.get("is_error", False)),
                        use_of.input if use_of else None,
                    )
    return [Step(tuple(uses), tuple(results.get(u.id) for u in uses), words) for uses, words in found]


def user_texts(body: Mapping[str, Any]) -> list[str]:
    """The text of every user turn (text blocks only), in order."""
    texts: list[str] = []
    for message in messages(body):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.append(
                "\n".join(
                    str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
                )
            )
    return texts


def attempt_of(request: Request) -> int:
    """1 + the SubagentStop blocks this subagent has been sent back with."""
    return 1 + sum(1 for value in user_texts(request.body) if STOP_FEEDBACK in value)


_EXIT_CODE = re.compile(r"\AExit code (\d+)\n")


def bash_output(result_text: str) -> tuple[int, str]:
    """(exit code, output) of a Bash tool result (Claude Code prefixes ``Exit code N`` when non-zero)."""
    match = _EXIT_CODE.match(result_text)
    if match:
        return int(match.group(1)), result_text[match.end() :]
    return 0, result_text


def first_json(value: str) -> JSON | None:
    """The first JSON object in ``value`` (engine answers are one document, maybe after other output)."""
    start = value.find("{")
    decoder = json.JSONDecoder()
    while start >= 0:
        try:
            doc, _end = decoder.raw_decode(value, start)
        except json.JSONDecodeError:
            start = value.find("{", start + 1)
            continue
        return doc if isinstance(doc, dict) else None
    return None


def json_after(value: str, label: str) -> Any:
    """The JSON value that follows ``label`` in ``value`` (None when there is none)."""
    position = value.find(label)
    if position < 0:
        return None
    rest = value[position + len(label) :]
    offset = len(rest) - len(rest.lstrip())
    try:
        doc, _end = json.JSONDecoder().raw_decode(rest, offset)
    except json.JSONDecodeError:
        return None
    return doc


def engine_error(doc: Mapping[str, Any] | None) -> JSON | None:
    """The error object of an engine error document (``{"status": "failed", "error": {...}}``)."""
    if doc is not None and doc.get("status") == "failed" and isinstance(doc.get("error"), dict):
        return dict(doc["error"])
    return None


_ENGINE = re.compile(r'"([^"`\s]*/' + re.escape(ENGINE_RELATIVE) + r')"')
_RUN_IN_PROMPT = re.compile(r"\bRun ([0-9a-f]{8})\b")
_ROUND = re.compile(r"review round (\d+)")


def engine_path(value: str) -> str | None:
    """The expanded ``"${CLAUDE_PLUGIN_ROOT}/scripts/fixloop"`` of an agent or command body."""
    match = _ENGINE.search(value)
    return match.group(1) if match else None


def round_of(prompt: str) -> int | None:
    match = _ROUND.search(prompt)
    return int(match.group(1)) if match else None


def engine_words(command: str, engine: str) -> list[str]:
    """The engine arguments of a Bash command calling ``engine`` (``[]`` when it calls something else)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return words[1:] if words and words[0] == engine else []


# --------------------------------------------------------------------------------------------------
# Scenario plans: what the reviewers, the fixer and the verifier answer
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """What a plan gets to decide an answer: the request, who sent it, for which round and attempt."""

    actor: str
    request: Request
    round: int | None
    attempt: int

    @property
    def prompt(self) -> str:
        return self.request.prompt


def answer_text(answer: Answer) -> str:
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


def issue(
    defect: str | None = None,
    *,
    confidence: int = 90,
    severity: str = "high",
    auto_fixable: bool = True,
    id: str | None = None,
    **fields: Any,
) -> JSON:
    """A reviewer issue: one of the sample project's seeded defects (``claude_runner.SAMPLE_DEFECTS`` by
    id), or any fields given; ``fields`` override."""
    base: JSON = {}
    if defect is not None:
        found = [d for d in SAMPLE_DEFECTS if d["id"] == defect]
        if not found:
            raise KeyError(f"no sample defect {defect!r}")
        seeded = found[0]
        base = {
            "file": seeded["file"],
            "line": seeded["line"],
            "category": seeded["category"],
            "description": seeded["description"],
            "suggestion": f"fix the {seeded['category']} at {seeded['file']}:{seeded['line']}",
        }
    document: JSON = {
        "id": id or "X-001",
        "severity": severity,
        "confidence": confidence,
        "auto_fixable": auto_fixable,
        **base,
        **fields,
    }
    return document


def failure_document(agent: str, code: str = "TOOL_ERROR", message: str | None = None) -> JSON:
    """A contract-valid failure answer (``status: failed`` with an error object)."""
    return {
        "status": "failed",
        "agent": agent,
        "error": {
            "code": code,
            "message": message or f"{agent} could not complete its work",
            "phase": "execution",
            "recoverable": True,
        },
    }


def schema_violation(agent: str) -> JSON:
    """Parsable JSON that breaks the reviewer contract at ``$.issues[0].confidence``."""
    return {
        "status": "success",
        "agent": agent,
        "issues": [issue("swallowed-error", id="BAD-001", confidence="very high")],  # type: ignore[arg-type]
        "positive_observations": [],
    }


GARBAGE = "I looked at the changes and everything seems fine to me."


@dataclass
class ReviewerPlan:
    """What one reviewer answers.

    ``issues``: round -> the issues it reports (a round not listed: none). Ids are made unique per answer.
    ``invalid_attempts``: the first N attempts of each run of the agent answer ``invalid_answer`` (default:
    a schema violation at ``$.issues[0].confidence``); ``ALWAYS`` for every attempt. ``invalid_rounds``
    limits that to some rounds. ``fail_rounds``: rounds in which it answers a contract-valid failure
    document. ``delay``: seconds to hold each of its answers (None: the scenario's ``reviewer_delay``).
    ``answer``: a callable that overrides all of the above.
    """

    issues: Mapping[int, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    invalid_attempts: int = 0
    invalid_answer: Answer | None = None
    invalid_rounds: Collection[int] | None = None
    fail_rounds: Collection[int] = ()
    positive_observations: Sequence[str] = ("the change is small and focused",)
    delay: float | None = None
    answer: Callable[[Turn], Answer] | None = None

    def respond(self, turn: Turn) -> Answer:
        if self.answer is not None:
            return self.answer(turn)
        number = turn.round or 0
        invalid_here = self.invalid_rounds is None or number in self.invalid_rounds
        if invalid_here and turn.attempt <= self.invalid_attempts:
            return self.invalid_answer if self.invalid_answer is not None else schema_violation(turn.actor)
        if number in self.fail_rounds:
            return failure_document(turn.actor)
        prefix = "".join(part[0] for part in turn.actor.split("-")).upper()
        issues = [
            {**item, "id": f"{prefix}-{index:03d}"}
            for index, item in enumerate(self.issues.get(number, ()), 1)
        ]
        return {
            "status": "success",
            "agent": turn.actor,
            "issues": issues,
            "positive_observations": list(self.positive_observations),
        }


ALWAYS = 1_000_000


@dataclass(frozen=True)
class Edit:
    """A change the fixer makes: ``old`` -> ``new`` in ``file`` (Edit tool), or the whole content ``new``
    (Write tool) when ``old`` is None. ``file`` is relative to the working directory."""

    file: str
    old: str | None
    new: str


@dataclass
class IssuesAgentPlan:
    """What the fixer and the verifier share, both given the round's issues: the first ``invalid_attempts``
    attempts of each run answer ``invalid_answer``; ``failure``: a contract-valid failure document instead
    of the answer; ``delay``: seconds to hold each answer; ``answer``: a callable that overrides all."""

    invalid_attempts: int = 0
    invalid_answer: Answer = GARBAGE
    failure: bool = False
    delay: float = 0.0
    answer: Callable[[Turn, list[JSON]], Answer] | None = None

    def respond(self, turn: Turn, issues: list[JSON]) -> Answer:
        if self.answer is not None:
            return self.answer(turn, issues)
        if turn.attempt <= self.invalid_attempts:
            return self.invalid_answer
        if self.failure:
            return self.failure_answer()
        return self.valid_answer(turn, issues)

    def failure_answer(self) -> Answer:
        raise NotImplementedError

    def valid_answer(self, turn: Turn, issues: list[JSON]) -> Answer:
        raise NotImplementedError


@dataclass
class FixerPlan(IssuesAgentPlan):
    """What the fixer does: ``edits`` by round (Read each existing file first, then one Edit/Write call per
    edit), then answers: every issue ``succeeded`` (``skip``: issue descriptions containing one of these
    substrings are ``skipped``), ``files_modified`` = the edited files."""

    edits: Mapping[int, Sequence[Edit]] = field(default_factory=dict)
    skip: Collection[str] = ()

    def failure_answer(self) -> Answer:
        return failure_document(FIXER_AGENT, "FIX_FAILED", "the fixer could not apply any fix")

    def valid_answer(self, turn: Turn, issues: list[JSON]) -> Answer:
        edited = sorted({edit.file for edit in self.edits.get(turn.round or 0, ())})
        results: list[JSON] = []
        for item in issues:
            description = str(item.get("description", ""))
            if any(part in description for part in self.skip):
                results.append(
                    {
                        "issue_id": item["id"],
                        "status": "skipped",
                        "reason": "needs a design decision",
                        "files": [],
                    }
                )
                continue
            files = [name for name in edited if name == item.get("file")] or edited
            results.append({"issue_id": item["id"], "status": "succeeded", "files": files})
        fixed = [r for r in results if r["status"] == "succeeded"]
        status = "success" if len(fixed) == len(results) else ("partial" if fixed else "failed")
        return {"status": status, "agent": FIXER_AGENT, "results": results, "files_modified": edited}


@dataclass
class VerifierPlan(IssuesAgentPlan):
    """What the verifier answers: every finding CORRECT and COMPLIANT, quality ``score``, except findings
    ``delete`` returns a reason for (INCORRECT, deletion required)."""

    score: int = 85
    delete: Callable[[JSON], str | None] | None = None
    missing_issues: Sequence[Mapping[str, Any]] = ()

    def failure_answer(self) -> Answer:
        return failure_document(VERIFIER_AGENT)

    def valid_answer(self, turn: Turn, issues: list[JSON]) -> Answer:
        accuracy: list[JSON] = []
        for item in issues:
            reason = self.delete(item) if self.delete is not None else None
            check: JSON = {
                "issue_id": item["id"],
                "accuracy_status": "INCORRECT" if reason else "CORRECT",
                "evidence": f"read {item.get('file')}:{item.get('line')}",
                "deletion_required": bool(reason),
            }
            if reason:
                check["deletion_reason"] = reason
            accuracy.append(check)
        level = (
            "EXCELLENT"
            if self.score >= 85
            else "GOOD"
            if self.score >= 70
            else "ACCEPTABLE"
            if self.score >= 50
            else "POOR"
        )
        task = re.search(r'"task_id": "([^"]+)"', turn.prompt)
        document: JSON = {
            "status": "success",
            "agent": VERIFIER_AGENT,
            "verification_result": {
                "accuracy_check": accuracy,
                "rule_compliance_check": [
                    {"issue_id": item["id"], "compliance_status": "COMPLIANT", "deletion_required": False}
                    for item in issues
                ],
                "quality_assessment": {
                    "overall_score": self.score,
                    "quality_level": level,
                    "strengths": ["findings point at exact lines"],
                    "weaknesses": [],
                    "missing_issues": [dict(m) for m in self.missing_issues],
                },
            },
        }
        if task:
            document["task_id"] = task.group(1)
        return document


@dataclass
class ScenarioPlan:
    """Everything a scenario scripts: one plan per reviewer (default: a clean review), the fixer, the
    verifier, and the delay of every reviewer whose plan sets none (``reviewer_delay``)."""

    reviewers: Mapping[str, ReviewerPlan] = field(default_factory=dict)
    fixer: FixerPlan = field(default_factory=FixerPlan)
    verifier: VerifierPlan = field(default_factory=VerifierPlan)
    reviewer_delay: float = 0.0

    def __post_init__(self) -> None:
        unknown = set(self.reviewers) - set(REVIEWER_AGENTS)
        if unknown:
            raise ValueError(f"not reviewers: {sorted(unknown)} (reviewers: {', '.join(REVIEWER_AGENTS)})")

    def reviewer(self, name: str) -> ReviewerPlan:
        return self.reviewers.get(name) or ReviewerPlan()

    def reviewer_delay_of(self, name: str) -> float:
        delay = self.reviewer(name).delay
        return self.reviewer_delay if delay is None else delay


# --------------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------------


LOOP_SUBCOMMANDS = ("run show", "review next", "verify", "review choose")


@dataclass(frozen=True)
class EngineCall:
    """One engine call of a conversation: its words after the program, exit code, output and answer."""

    words: tuple[str, ...]
    code: int
    output: str
    doc: JSON | None

    @staticmethod
    def of(step: Step, engine: str) -> EngineCall:
        code, output = bash_output(step.result_text)
        return EngineCall(tuple(engine_words(step.bash or "", engine)), code, output, first_json(output))

    @property
    def subcommand(self) -> str:
        return engine_subcommand(" ".join(["fixloop", *(shlex.quote(w) for w in self.words)]))

    def is_(self, subcommand: str) -> bool:
        return self.subcommand == subcommand

    @property
    def error(self) -> JSON | None:
        return engine_error(self.doc)

    @property
    def ends_loop(self) -> bool:
        """An engine error before or in the loop (the coordinator leaves the loop on one); errors of the
        finish steps (report, phase end, run end) do not restart the finish."""
        in_loop = self.subcommand in LOOP_SUBCOMMANDS or (self.is_("run phase") and "--start" in self.words)
        return in_loop and self.error is not None


class FixloopModel:
    """The scripted model of a fixloop review session. ``script()`` gives the :class:`scripted_api.Script`
    (one rule per actor, named after it, so the request log's ``rule`` says who sent each request)."""

    def __init__(self, plan: ScenarioPlan | None = None) -> None:
        self.plan = plan or ScenarioPlan()
        self.problems: list[str] = []
        self._lock = threading.Lock()

    def problem(self, request: Request, message: str) -> None:
        with self._lock:
            self.problems.append(f"request {request.seq} ({identify(request)}): {message}")

    def script(self) -> Script:
        handlers: dict[str, Callable[[Request], Reply]] = {
            MAIN: self.main_thread,
            COORDINATOR: self.coordinator,
            FIXER_AGENT: self.fixer,
            VERIFIER_AGENT: self.verifier,
            **{name: self.reviewer for name in REVIEWER_AGENTS},
        }
        rules = [
            Rule(reply=guarded(handler, self.problem), name=actor, where=_is_actor(actor))
            for actor, handler in handlers.items()
        ]
        rules.append(Rule(reply=self._unknown, name=UNKNOWN))
        return Script(rules)

    def _unknown(self, request: Request, index: int) -> Reply:
        self.problem(request, "no fixloop actor recognised in this request")
        return Reply.text("SCRIPTED MODEL: unknown actor")

    def _tool_errors(self, request: Request, steps: Sequence[Step], names: Collection[str]) -> None:
        if not steps:
            return
        for use, result in zip(steps[-1].uses, steps[-1].results, strict=True):
            if result is None:
                self.problem(request, f"no result for the {use.name} call {use.id}")
            elif result.is_error and use.name in names:
                self.problem(request, f"{use.name} failed: {result.text[:300]}")

    # ---- the main thread: commands/review.md ---------------------------------------------------

    def main_thread(self, request: Request) -> Reply:
        prompt = request.prompt
        engine = engine_path(prompt)
        if engine is None:
            self.problem(request, "the command body names no engine")
            return Reply.text("no engine")
        started = json_after(prompt, REVIEW_COMMAND_MARKER)
        started = started if isinstance(started, dict) else None
        run_id = str(started.get("run_id", "")) if started else ""
        steps = steps_of(request.body)
        self._tool_errors(request, steps, ("Agent",))
        quoted = f'"{engine}"'
        if not run_id:
            return Reply.text(f"fixloop could not start the run: {json.dumps(started)}")
        if not steps:
            args = re.search(r"<command-args>(.*?)</command-args>", request.last_user_text, re.DOTALL)
            paths = [w for w in shlex.split(args.group(1) if args else "") if not w.startswith("-")]
            if paths:
                named = " ".join(shlex.quote(p) for p in paths)
                return Reply.tools(
                    bash_call(
                        f"{quoted} run files {run_id} --changed-files {named}",
                        description="Review the named paths",
                    )
                )
        last = steps[-1] if steps else None
        if last is None or (last.bash is not None and "run files" in last.bash):
            return Reply.tools(
                agent_call(
                    f"{PLUGIN}:{COORDINATOR}",
                    f"Run {run_id}. You own this run.",
                    description="Run the review-fix loop",
                )
            )
        if last.uses and last.uses[0].name == "Agent":
            return Reply.tools(
                bash_call(f"{quoted} review report {run_id} --format markdown", description="Review report")
            )
        # the report: show it, after the coordinator's error when it failed
        coordinator_answer = next(
            (
                subagent_report(step.result_text) or step.result_text
                for step in reversed(steps)
                if step.uses and step.uses[0].name == "Agent"
            ),
            "",
        )
        verdict = first_json(coordinator_answer) or {}
        _code, output = bash_output(last.result_text)
        report = first_json(output) or {}
        shown = str(report.get("content") or output)
        error = verdict.get("error") if verdict.get("status") == "failed" else None
        if isinstance(error, dict):
            shown = f"fixloop failed: {error.get('code')}: {error.get('message')}\n\n{shown}"
        return Reply.text(shown)

    # ---- the coordinator: agents/review-coordinator.md -----------------------------------------

    def coordinator(self, request: Request) -> Reply:
        engine = engine_path(request.system)
        if engine is None:
            self.problem(request, "the coordinator's body names no engine")
            return Reply.text(json.dumps({"status": "failed", "agent": COORDINATOR, "error": "no engine"}))
        quoted = f'"{engine}"'
        prompt = request.prompt
        steps = steps_of(request.body)
        self._tool_errors(request, steps, ("Agent", "Read"))
        found = _RUN_IN_PROMPT.search(prompt)
        run_id = found.group(1) if found else None
        owns = "You own this run" in prompt
        calls = [EngineCall.of(step, engine) for step in steps if step.bash is not None]
        for call in calls:
            if call.is_("run start") and call.doc and call.doc.get("run_id"):
                run_id, owns = str(call.doc["run_id"]), True

        def bash(*words: str, description: str) -> Reply:
            return Reply.tools(bash_call(" ".join([quoted, *words]), description=description))

        if not steps:
            if run_id is None:
                return bash("run", "start", "--workflow", "review", "--git-diff", description="Start a run")
            if owns:
                return bash("run", "show", run_id, description="Show the run")
            return bash("review", "next", run_id, description="Next action")
        if run_id is None:
            return self._coordinator_failed(request, {"code": "NO_RUN", "message": "no run id"})
        next_action = bash("review", "next", run_id, description="Next action")
        leave = bash("review", "report", run_id, "--format", "json", description="Review report")
        last = steps[-1]
        if last.uses and all(use.name == "Agent" for use in last.uses):
            return next_action
        if last.bash is None or not calls:
            self.problem(request, f"unexpected last step {[u.name for u in last.uses]}")
            return next_action
        call = calls[-1]
        dry_run = any(c.is_("run show") and c.doc and c.doc.get("dry_run") is True for c in calls)
        # "Leave the loop on an engine error": from then on only the finish steps run.
        if call.ends_loop:
            return leave
        if call.is_("run start") or call.is_("run show"):
            return bash("run", "phase", run_id, "--start", "0", description="Open phase 0")
        if call.is_("run phase") and "--start" in call.words:
            return next_action
        if call.is_("verify") or call.is_("review choose"):
            return next_action  # a failed check (exit 1) is an answer, not an error
        if call.is_("review next"):
            return self._dispatch(request, call, calls, run_id, owns and dry_run, bash, next_action, leave)
        report = next((c for c in reversed(calls) if c.is_("review report")), None)
        status = str(report.doc.get("status")) if report and report.doc and report.error is None else "failed"
        if call.is_("review report"):
            if not owns:
                return Reply.text(self._final_text(calls))
            return bash("run", "phase", run_id, "--end", "0", "--status", status, description="Close phase 0")
        if call.is_("run phase") and "--end" in call.words:
            final_status = "dry_run_complete" if dry_run else status
            return bash("run", "end", run_id, "--status", final_status, description="End the run")
        if call.is_("run end"):
            return Reply.text(self._final_text(calls))
        self.problem(request, f"unexpected engine call {call.words}")
        return leave

    def _dispatch(
        self,
        request: Request,
        call: EngineCall,
        calls: Sequence[EngineCall],
        run_id: str,
        dry_run: bool,
        bash: Callable[..., Reply],
        next_action: Reply,
        leave: Reply,
    ) -> Reply:
        """Act on a `review next` answer."""
        doc = call.doc or {}
        action = doc.get("action")
        if action == "verify":
            reply: Reply = bash("verify", run_id, description="Verify the project")
            return reply
        if action in ("stop", "failed") or sum(c.is_("review next") for c in calls) >= MAX_REVIEW_NEXT:
            return leave
        if action == "review":
            return Reply.tools(
                *[
                    agent_call(str(a), str(doc["prompt"]), description=f"Review: {str(a).split(':')[-1]}")
                    for a in doc.get("agents") or []
                ]
            )
        if action == "verify_findings":
            return Reply.tools(
                agent_call(f"{PLUGIN}:{VERIFIER_AGENT}", str(doc["prompt"]), description="Verify findings")
            )
        if action == "fix":
            if dry_run:
                return leave
            return Reply.tools(
                agent_call(f"{PLUGIN}:{FIXER_AGENT}", str(doc["prompt"]), description="Fix the issues")
            )
        if action == "ask_user":
            if "AskUserQuestion" in request.tools:
                self.problem(request, "AskUserQuestion is offered; the scripted model only answers --default")
            reply = bash("review", "choose", run_id, "--default", description="Apply the default choice")
            return reply
        self.problem(request, f"unknown action {action!r}")
        return leave

    @staticmethod
    def _final_text(calls: Sequence[EngineCall]) -> str:
        """The coordinator's final message: the report as printed, or the failed document after an engine
        error in the loop."""
        for call in calls:
            if call.ends_loop:
                return json.dumps({"status": "failed", "agent": COORDINATOR, "error": call.error})
        for call in reversed(calls):
            if call.is_("review report"):
                return call.output.strip()
        return "{}"

    def _coordinator_failed(self, request: Request, error: JSON) -> Reply:
        self.problem(request, f"coordinator failed: {error}")
        return Reply.text(json.dumps({"status": "failed", "agent": COORDINATOR, "error": error}))

    # ---- reviewers, fixer, verifier ------------------------------------------------------------

    def _turn(self, request: Request) -> Turn:
        return Turn(identify(request), request, round_of(request.prompt), attempt_of(request))

    def reviewer(self, request: Request) -> Reply:
        turn = self._turn(request)
        plan = self.plan.reviewer(turn.actor)
        self._tool_errors(request, steps_of(request.body), ("Read", "Bash", "Grep", "Glob"))
        if turn.round is None:
            self.problem(request, "the reviewer prompt names no review round")
        return Reply.text(answer_text(plan.respond(turn)), delay=self.plan.reviewer_delay_of(turn.actor))

    def verifier(self, request: Request) -> Reply:
        turn = self._turn(request)
        issues = json_after(request.prompt, "Issues:")
        if not isinstance(issues, list):
            self.problem(request, "the verifier prompt has no issue list")
            issues = []
        plan = self.plan.verifier
        return Reply.text(answer_text(plan.respond(turn, issues)), delay=plan.delay)

    def fixer(self, request: Request) -> Reply:
        turn = self._turn(request)
        plan = self.plan.fixer
        issues = json_after(request.prompt, "Issues:")
        if not isinstance(issues, list):
            self.problem(request, "the fixer prompt has no issue list")
            issues = []
        where = re.search(r"Working directory: (\S+)", request.prompt)
        if where is None:
            self.problem(request, "the fixer prompt names no working directory")
            return Reply.text(answer_text(plan.respond(turn, issues)))
        workdir = Path(where.group(1))
        steps = steps_of(request.body)
        self._tool_errors(request, steps, ("Read", "Edit", "Write"))
        edits = list(plan.edits.get(turn.round or 0, ()))
        used = [use for step in steps for use in step.uses]
        if turn.attempt == 1 and edits:
            read = {str(use.input.get("file_path")) for use in used if use.name == "Read"}
            to_read = sorted({str(workdir / e.file) for e in edits if (workdir / e.file).is_file()} - read)
            if to_read:
                return Reply.tools(*[tool_use("Read", {"file_path": path}) for path in to_read])
            done = sum(1 for use in used if use.name in ("Edit", "Write"))
            if done < len(edits):
                return Reply.tools(_edit_block(workdir, edits[done]), delay=plan.delay)
        return Reply.text(answer_text(plan.respond(turn, issues)), delay=plan.delay)


def guarded(
    handler: Callable[[Request], Reply], problem: Callable[[Request, str], None]
) -> Callable[[Request, int], Reply]:
    """A rule reply that reports a crash of `handler` as a problem and answers text: a broken script must end
    the run, not hang it."""

    def reply(request: Request, index: int) -> Reply:
        try:
            return handler(request)
        except Exception as error:
            problem(request, f"scripted model crashed: {type(error).__name__}: {error}")
            return Reply.text(f"SCRIPTED MODEL ERROR: {error}")

    return reply


def _edit_block(workdir: Path, edit: Edit) -> Block:
    path = str(workdir / edit.file)
    if edit.old is None:
        return tool_use("Write", {"file_path": path, "content": edit.new})
    return tool_use(
        "Edit", {"file_path": path, "old_string": edit.old, "new_string": edit.new, "replace_all": False}
    )


def _is_actor(actor: str) -> Callable[[Request], bool]:
    def check(request: Request) -> bool:
        return identify(request) == actor

    return check


# --------------------------------------------------------------------------------------------------
# What a run left behind
# --------------------------------------------------------------------------------------------------


def engine_env(project: Path, plugin_data: Path | None = None) -> dict[str, str]:
    """An environment for running the engine on ``project`` from a test (no Claude Code session)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC_"))}
    env["CLAUDE_PROJECT_DIR"] = str(project)
    if plugin_data is not None:
        env["FIXLOOP_DATA"] = str(plugin_data)
    return env


def run_engine(project: Path, *args: str, plugin_data: Path | None = None) -> tuple[int, Any]:
    """``scripts/fixloop ARGS`` run by the test itself on ``project``: (exit code, its JSON answer)."""
    done = subprocess.run(
        ["bash", str(REPO_ROOT / ENGINE_RELATIVE), *args],
        cwd=project,
        env=engine_env(project, plugin_data),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    try:
        return done.returncode, json.loads(done.stdout)
    except json.JSONDecodeError:
        raise AssertionError(
            f"fixloop {' '.join(args)} printed no JSON: {done.stdout!r} {done.stderr!r}"
        ) from None


def run_ids(project: Path) -> list[str]:
    runs = project / ".claude" / "fixloop" / "runs"
    return sorted(p.name for p in runs.iterdir() if (p / "state.json").is_file()) if runs.is_dir() else []


def parse_ts(value: str) -> float:
    """Epoch seconds of a log ``ts`` (``2024-12-06T14:30:52.123Z``)."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


@dataclass
class RunRecord:
    """A finished run as the test reads it back from the throwaway project."""

    project: Path
    run_id: str
    state: JSON
    events: list[JSON]  # the JSONL log, in order
    text_log: str
    jsonl_path: Path
    text_path: Path
    ledger: list[JSON]  # runs/<id>/agents.jsonl

    def of_type(self, kind: str, **where: Any) -> list[JSON]:
        return [
            e for e in self.events if e.get("type") == kind and all(e.get(k) == v for k, v in where.items())
        ]

    @property
    def review(self) -> JSON:
        value = self.state.get("review")
        return value if isinstance(value, dict) else {}


def read_run(project: Path, run_id: str | None = None) -> RunRecord:
    """The run (the only one of the project unless ``run_id`` is given): state, logs, ledger."""
    if run_id is None:
        ids = run_ids(project)
        if len(ids) != 1:
            raise AssertionError(f"expected exactly one run in {project}, found {ids}")
        run_id = ids[0]
    run_dir = project / ".claude" / "fixloop" / "runs" / run_id
    state = json.loads((run_dir / "state.json").read_text(encoding="utf-8"))
    files = (state.get("logging") or {}).get("log_files") or {}
    jsonl_path, text_path = Path(str(files.get("jsonl"))), Path(str(files.get("text")))
    events = [
        json.loads(line) for line in jsonl_path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    ledger_file = run_dir / "agents.jsonl"
    ledger = (
        [json.loads(line) for line in ledger_file.read_text(encoding="utf-8").splitlines() if line.strip()]
        if ledger_file.is_file()
        else []
    )
    return RunRecord(
        project, run_id, state, events, text_path.read_text(encoding="utf-8"), jsonl_path, text_path, ledger
    )


# (end event, its duration field, start event, the fields that pair an end with its start)
DURATION_PAIRS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("AGENT_RESULT", "duration_ms", "AGENT_CALL", ("tool_use_id",)),
    ("PHASE_END", "duration_ms", "PHASE_START", ("phase",)),
    ("REVIEW_PARALLEL_END", "duration_ms", "REVIEW_PARALLEL_START", ("iteration",)),
    ("REVIEW_VERIFICATION_END", "duration_ms", "REVIEW_VERIFICATION_START", ()),
    ("REVIEW_FIX_ITERATION", "duration_ms", "REVIEW_FIX_ITERATION", ("iteration",)),
    ("SESSION_END", "total_duration_ms", "SESSION_START", ()),
)


def duration_mismatches(events: Sequence[Mapping[str, Any]], tolerance_ms: int = 250) -> list[str]:
    """Logged durations that disagree with the log's own clock, described (empty: all agree).

    Each end event's duration must equal the time between its start event's ``ts`` and its own ``ts``
    within ``tolerance_ms`` (see DURATION_PAIRS; an end pairs with the latest earlier start of the same
    key; for REVIEW_FIX_ITERATION the start is ``direction: start`` and the end ``direction: end``). An
    AGENT_RESULT's ``reported_duration_ms`` (Claude Code's own figure) must not exceed the measured one:
    the hooks bracket the subagent. Every end event with a duration must have found its start.
    """
    problems: list[str] = []
    for end_type, field_name, start_type, keys in DURATION_PAIRS:
        open_starts: dict[tuple[Any, ...], Mapping[str, Any]] = {}
        for event in events:
            kind = event.get("type")
            direction = event.get("direction")
            key = tuple(event.get(k) for k in keys)
            is_start = kind == start_type and (start_type != end_type or direction == "start")
            is_end = kind == end_type and (start_type != end_type or direction == "end")
            if is_start:
                open_starts[key] = event
            if not is_end or field_name not in event:
                continue
            start = open_starts.pop(key, None)
            label = f"{end_type} {dict(zip(keys, key, strict=True))} at {event.get('ts')}"
            if start is None:
                problems.append(f"{label}: no {start_type} before it")
                continue
            wall = (parse_ts(str(event["ts"])) - parse_ts(str(start["ts"]))) * 1000
            logged = int(event[field_name])
            if abs(wall - logged) > tolerance_ms:
                problems.append(f"{label}: {field_name} {logged} but {wall:.0f} ms since its {start_type}")
            reported = event.get("reported_duration_ms")
            if isinstance(reported, int) and reported > logged + tolerance_ms:
                problems.append(f"{label}: reported_duration_ms {reported} exceeds the measured {logged}")
    return problems


def requests_by_agent(records: Sequence[JSON]) -> dict[tuple[str, str | None], list[JSON]]:
    """Request log records grouped by (actor = the rule that answered, Claude Code's agent id)."""
    groups: dict[tuple[str, str | None], list[JSON]] = {}
    for record in records:
        headers = record.get("headers") or {}
        key = (str(record.get("rule")), headers.get("x-claude-code-agent-id"))
        groups.setdefault(key, []).append(record)
    return groups


# --------------------------------------------------------------------------------------------------
# One /fixloop:review session, end to end
# --------------------------------------------------------------------------------------------------

CHANGED_FILES = ("inventory/report.py", "inventory/stock.py")  # left uncommitted: the change under review
StartAPI = Callable[..., ScriptedAPI]  # tests/e2e/conftest.py's start_api fixture
MakeRunner = Callable[..., ClaudeRunner]  # tests/e2e/conftest.py's make_runner fixture


@dataclass
class Session:
    """One ``/fixloop:review`` run and everything it left behind."""

    result: RunResult
    api: ScriptedAPI
    model: FixloopModel
    project: Path
    plugin_data: Path
    wall_ms: float  # measured by the test around the CLI run
    run: RunRecord
    report: JSON  # `fixloop review report RUN --format json`, run by the test itself
    markdown: str  # the `content` of `fixloop review report RUN --format markdown`

    @property
    def requests(self) -> list[JSON]:
        """The run's ``/v1/messages`` request log records, in arrival order."""
        return self.result.message_requests()

    def requests_of(self, actor: str) -> list[JSON]:
        return [r for r in self.requests if r.get("rule") == actor]

    def instances(self, actor: str) -> list[list[JSON]]:
        """The requests of each run of subagent ``actor`` (grouped by Claude Code's agent id), in order."""
        groups = [g for (who, _id), g in requests_by_agent(self.requests).items() if who == actor]
        return sorted(groups, key=lambda group: float(group[0]["received_at"]))

    def coordinator_requests(self) -> list[JSON]:
        return self.requests_of(COORDINATOR)

    def agent_dispatches(self) -> list[list[JSON]]:
        """The coordinator's replies that call Agent, each as its list of tool_use blocks."""
        found = []
        for record in self.coordinator_requests():
            uses = reply_tool_uses(record)
            if uses and all(use["name"] == "Agent" for use in uses):
                found.append(uses)
        return found

    def engine_commands(self) -> list[str]:
        """The engine subcommands the coordinator ran (``review next``, ``run phase`` ...), in order."""
        commands = []
        for record in self.coordinator_requests():
            for use in reply_tool_uses(record):
                if use["name"] == "Bash":
                    commands.append(engine_subcommand(str(use["input"]["command"])))
        return commands

    def engine_answers(self, subcommand: str) -> list[JSON]:
        """The engine's answers (parsed) to the coordinator's calls of ``subcommand`` (e.g. ``review
        next``), in order, as the coordinator received them."""
        answers: list[JSON] = []
        for record in self.coordinator_requests():
            for result in tool_result_texts(record):
                command, output = result
                if engine_subcommand(command) == subcommand:
                    answers.append(first_json(bash_output(output)[1]) or {})
        return answers


def engine_subcommand(command: str) -> str:
    """``review next`` for ``"/p/scripts/fixloop" review next 1a2b3c4d``: the words after the program up to
    the first run id or option."""
    try:
        words = shlex.split(command)[1:]
    except ValueError:
        return ""
    taken: list[str] = []
    for word in words:
        if word.startswith("-") or re.fullmatch(r"[0-9a-f]{8}", word):
            break
        taken.append(word)
    return " ".join(taken)


def tool_result_texts(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(Bash command, result text) of the tool results in a request's last user turn."""
    body = record.get("body") or {}
    found: list[tuple[str, str]] = []
    last = messages(body)[-1] if messages(body) else {}
    if last.get("role") != "user":
        return found
    commands = {
        use.id: str(use.input.get("command", ""))
        for step in steps_of(body)
        for use in step.uses
        if use.name == "Bash"
    }
    for block in last.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            use_id = str(block.get("tool_use_id"))
            if use_id in commands:
                content = block.get("content")
                if isinstance(content, list):
                    content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
                found.append((commands[use_id], str(content or "")))
    return found


def review_session(
    start_api: StartAPI,
    make_runner: MakeRunner,
    plugin_data: Path,
    plan: ScenarioPlan,
    *,
    config: Mapping[str, Any] | None = None,
    before: Callable[[Path], None] | None = None,
    arguments: str = "",
    uncommitted: Sequence[str] = CHANGED_FILES,
    timeout: float = 120.0,
) -> Session:
    """Run ``/fixloop:review ARGUMENTS`` with the scripted model of ``plan`` on a fresh copy of the sample
    project whose ``uncommitted`` files are the change under review.

    ``config`` is merged into the project's ``.claude/fixloop.json`` and committed; ``before(project)``
    runs just before the CLI (for uncommitted user edits). ``plugin_data``: the ``shared_plugin_data``
    fixture (the engine's environment is built once). Raises AssertionError when the CLI failed, the
    model met a problem, a request matched no actor, or the engine cannot report on the run."""
    model = FixloopModel(plan)
    api = start_api(model.script())
    runner = make_runner(api, shared_plugin_data=plugin_data, timeout=timeout)
    project = runner.new_project(uncommitted=uncommitted)
    if config:
        path = project / ".claude" / "fixloop.json"
        settings = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({**settings, **config}, indent=2) + "\n", encoding="utf-8")
        git(project, "commit", "-q", "-m", "loop settings", "--", ".claude/fixloop.json")
    if before is not None:
        before(project)
    started = time.time()
    result = runner.run(
        f"/fixloop:review {arguments}".strip(), project_dir=project, permission_mode=CLI_PERMISSION_MODE
    )
    wall_ms = (time.time() - started) * 1000
    print(f"/fixloop:review: {result.duration_s:.2f}s wall, {len(result.message_requests())} requests")
    failures = []
    if (result.exit_code, result.timed_out, result.is_error) != (0, False, False):
        failures.append(f"the CLI failed: {result.summary()}")
    failures += [f"scripted model: {problem}" for problem in model.problems]
    failures += [f"no actor for request {r.seq}: {r.prompt[:200]!r}" for r in api.unmatched]
    if failures:
        raise AssertionError("\n".join(failures))
    record = read_run(project)
    code, report = run_engine(project, "review", "report", record.run_id, plugin_data=plugin_data)
    if code != 0:
        raise AssertionError(f"fixloop review report failed: {report}")
    code, markdown = run_engine(
        project, "review", "report", record.run_id, "--format", "markdown", plugin_data=plugin_data
    )
    if code != 0:
        raise AssertionError(f"fixloop review report --format markdown failed: {markdown}")
    return Session(
        result, api, model, project, plugin_data, wall_ms, record, report, str(markdown["content"])
    )


def reply_text(record: Mapping[str, Any]) -> str:
    """The text blocks of the reply sent for a request log record."""
    content = (record.get("reply") or {}).get("content") or []
    return "".join(str(block.get("text", "")) for block in content if block.get("type") == "text")


def reply_tool_uses(record: Mapping[str, Any]) -> list[JSON]:
    content = (record.get("reply") or {}).get("content") or []
    return [dict(block) for block in content if block.get("type") == "tool_use"]


def iter_user_texts(record: Mapping[str, Any]) -> Iterator[str]:
    """Every user-turn text of a request log record (text blocks and tool results)."""
    for message in record.get("body", {}).get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            yield content
            continue
        for block in content or []:
            if block.get("type") == "text":
                yield str(block.get("text", ""))


__all__ = [
    "ACTORS",
    "AGENT_FILES",
    "ALWAYS",
    "CHANGED_FILES",
    "CLI_PERMISSION_MODE",
    "COORDINATOR",
    "DURATION_PAIRS",
    "FIXER_AGENT",
    "GARBAGE",
    "MAIN",
    "MARKERS",
    "MAX_REVIEW_NEXT",
    "PLUGIN",
    "REVIEWER_AGENTS",
    "REVIEW_COMMAND",
    "REVIEW_COMMAND_MARKER",
    "STOP_FEEDBACK",
    "UNKNOWN",
    "VERIFIER_AGENT",
    "Answer",
    "Edit",
    "FixerPlan",
    "FixloopModel",
    "MakeRunner",
    "MarkdownFile",
    "PluginDrift",
    "ReviewerPlan",
    "RunRecord",
    "ScenarioPlan",
    "Session",
    "StartAPI",
    "Step",
    "Turn",
    "VerifierPlan",
    "agent_markers",
    "answer_text",
    "attempt_of",
    "bash_output",
    "command_marker",
    "contract_marker",
    "duration_mismatches",
    "engine_env",
    "engine_error",
    "engine_path",
    "engine_subcommand",
    "failure_document",
    "first_json",
    "identify",
    "issue",
    "iter_user_texts",
    "json_after",
    "load_agents",
    "parse_ts",
    "read_markdown",
    "read_run",
    "render_text",
    "reply_text",
    "reply_tool_uses",
    "requests_by_agent",
    "review_session",
    "round_of",
    "run_engine",
    "run_ids",
    "schema_violation",
    "steps_of",
    "tool_result_texts",
    "user_texts",
]


# --------------------------------------------------------------------------------------------------
# Scenario 1's plan, shared by the happy-path test, the end-to-end benchmark and the demo
# --------------------------------------------------------------------------------------------------

REVIEWER_DELAY = 1.5  # seconds every reviewer holds its answer: long enough to see the overlap
EXCEPT_OLD = "    except Exception:\n        return {}\n"
EXCEPT_NEW = "    except FileNotFoundError:\n        return {}\n"
COMMENT_OLD = "    # Raises KeyError when the SKU is not in stock.\n"
COMMENT_NEW = "    # An unknown SKU counts as 0 units; the result never goes below 0.\n"


def happy_path_plan(reviewer_delay: float = REVIEWER_DELAY) -> ScenarioPlan:
    """Two fixable findings in round 1, one fixer pass that edits inventory/stock.py, a clean round 2."""
    return ScenarioPlan(
        reviewers={
            "silent-failure-hunter": ReviewerPlan(issues={1: [issue("swallowed-error")]}),
            "comment-analyzer": ReviewerPlan(issues={1: [issue("misleading-comment")]}),
        },
        reviewer_delay=reviewer_delay,
        fixer=FixerPlan(
            edits={
                1: [
                    Edit("inventory/stock.py", EXCEPT_OLD, EXCEPT_NEW),
                    Edit("inventory/stock.py", COMMENT_OLD, COMMENT_NEW),
                ]
            }
        ),
    )
