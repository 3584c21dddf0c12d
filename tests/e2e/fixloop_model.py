"""A scripted model that obeys fixloop's agent files, for end-to-end runs of the real CLI.

Every ``/fixloop:<command>`` runs as the forked agent ``fixloop:coordinator``; the hooks deliver the engine's
steps to it as "fixloop next" blocks, and each fixloop agent's task as SubagentStart context. This model
answers each request by who sent it, recognised from the agent's own markdown body (markers read from
``agents/*.md`` at import time, so an edit that breaks recognition fails loudly here):

- the coordinator (``agents/coordinator.md``): reads its latest "fixloop next" block (the SubagentStart
  context at first, then the result of the agent call that completed a step) and makes exactly the Agent
  calls it names, all in one message, ``run_in_background: false``; or ends with the exact final message;
- each contracted agent: what the test's table (:class:`Scenario`) says for it, given its :class:`Turn`
  (the task it was handed, its review round, its attempt). :func:`reviewer`, :func:`verifier` and
  :func:`fixer` build the usual behaviours; the fixer edits files with Read/Edit/Write tool calls first.

Everything is derived from the request alone, like a model would; anomalies (an unknown sender, a missing
task, a tool error, no "fixloop next" block where one belongs) go to :attr:`FixloopModel.problems`, which
a test asserts is empty.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_runner import REPO_ROOT, SAMPLE_DEFECTS
from scripted_api import (
    SUBAGENT_MARKER,
    Block,
    Reply,
    Request,
    Rule,
    Script,
    agent_call,
    content_text,
    last_user_message,
    last_user_text,
    messages,
    subagent_report,
    tool_use,
    tool_uses,
)

from fixloop.core.agent_names import COORDINATOR_AGENT, FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT

JSON = dict[str, Any]
Answer = str | Mapping[str, Any]  # a final message: sent as is (str) or as compact JSON (a mapping)

COORDINATOR = COORDINATOR_AGENT
MAIN = "main"
UNKNOWN = "unknown"
STOP_FEEDBACK = "Stop hook feedback:"
START_CONTEXT = "SubagentStart hook additional context: "
CLI_ENVIRONMENT = "\n\n# Environment\n"
NEXT_MARK = "fixloop next"
END_NOW = "End now"
FINAL_IS = "your final message is exactly:"
NO_STEP = "fixloop: the engine gave no next step for this run."
CLI_PERMISSION_MODE = "acceptEdits"  # the fixer's Edit/Write need it in -p
GARBAGE = "I looked at the changes and everything seems fine to me."
TOGETHER_WAIT_S = 120.0  # a bound on the wait for agents that should run at the same time, never a timing


# --------------------------------------------------------------------------------------------------
# The agent files, and the markers that tell the senders apart
# --------------------------------------------------------------------------------------------------


class PluginDrift(RuntimeError):
    """The plugin's markdown no longer has what the scripted model recognises or obeys."""


@dataclass(frozen=True)
class AgentFile:
    path: Path
    name: str
    body: str


def read_agent(path: Path) -> AgentFile:
    lines = path.read_text(encoding="utf-8").split("\n")
    if not lines or lines[0].strip() != "---":
        raise PluginDrift(f"{path} has no frontmatter")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise PluginDrift(f"{path}: the frontmatter is not closed")
    meta = dict(line.split(":", 1) for line in lines[1:end] if ":" in line and not line.startswith(" "))
    name = meta.get("name", path.stem).strip().strip("\"'")
    return AgentFile(path, name, "\n".join(lines[end + 1 :]))


def load_agents(plugin_dir: Path = REPO_ROOT) -> dict[str, AgentFile]:
    return {agent.name: agent for agent in map(read_agent, sorted((plugin_dir / "agents").glob("*.md")))}


def contract_marker(name: str) -> str:
    """A contracted agent's marker: its contract's ``"agent"`` field, as its own body spells it out."""
    return f'"agent": "{name}"'


def coordinator_marker(body: str) -> str:
    """The coordinator's marker: the first sentence of its body."""
    first = body.strip().split("\n", 1)[0]
    return first.split(". ", 1)[0] + "."


def agent_markers(agents: Mapping[str, AgentFile]) -> dict[str, str]:
    """agent name -> marker, for every agent file; PluginDrift unless each marker is in its own body and
    in no other agent's body."""
    markers: dict[str, str] = {}
    for name, agent in agents.items():
        marker = coordinator_marker(agent.body) if name == COORDINATOR else contract_marker(name)
        if marker not in agent.body:
            raise PluginDrift(
                f"{agent.path.name} no longer shows `{marker}`; the scripted model recognises the agent by "
                "it (tests/e2e/fixloop_model.py)"
            )
        others = [a.path.name for other, a in agents.items() if other != name and marker in a.body]
        if others:
            raise PluginDrift(
                f"`{marker}` also appears in {', '.join(others)}: it no longer tells agents apart"
            )
        markers[name] = marker
    return markers


AGENT_FILES = load_agents()
MARKERS = agent_markers(AGENT_FILES)
# What the scripted coordinator obeys, as agents/coordinator.md says it.
COORDINATOR_RULES = (
    'start with "fixloop next"',
    "all in one message",
    "`run_in_background: false`",
    '"End now": stop calling agents. Your final message is exactly the text the block gives',
    f'your final message is exactly: "{NO_STEP}"',
)
for _rule in COORDINATOR_RULES:
    if _rule not in AGENT_FILES[COORDINATOR].body:
        raise PluginDrift(
            f"agents/coordinator.md no longer says {_rule!r}: update tests/e2e/fixloop_model.py"
        )


def identify(request: Request) -> str:
    """Who sent the request: an agent name, ``main`` (the main thread) or ``unknown`` (another subagent).
    The forked coordinator is not marked as a subagent: its body tells it apart."""
    system = request.system
    found = next((name for name, marker in MARKERS.items() if marker in system), None)
    return found or (UNKNOWN if SUBAGENT_MARKER in system else MAIN)


# --------------------------------------------------------------------------------------------------
# Reading a request: "fixloop next" blocks, an agent's task
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NextBlock:
    """A "fixloop next" block: the Agent calls it names, or the final message it gives."""

    text: str
    calls: tuple[JSON, ...] = ()
    final: str | None = None


_CALL_LINE = re.compile(r"^- subagent_type: (\S+) \| description: (.*?) \| prompt: (.*)$")


def parse_next(text: str) -> NextBlock | None:
    """The last "fixloop next" block in ``text`` (it runs to the end of the text), None when there is none."""
    start = text.rfind(NEXT_MARK)
    if start < 0:
        return None
    block = text[start:]
    head = block.split("\n", 1)[0]
    if END_NOW in head and FINAL_IS in block:
        final = block.split(FINAL_IS, 1)[1]
        return NextBlock(block, final=final[1:] if final[:1] in ("\n", " ") else final)
    calls = []
    for line in block.split("\n")[1:]:
        match = _CALL_LINE.match(line)
        if match is None:
            break
        calls.append({"subagent_type": match[1], "description": match[2], "prompt": match[3]})
    return NextBlock(block, calls=tuple(calls))


def system_entries(body: Mapping[str, Any]) -> list[str]:
    """Texts of the ``role: "system"`` messages Claude Code puts inside ``messages`` (hook context ...)."""
    return [content_text(m.get("content")) for m in messages(body) if m.get("role") == "system"]


def start_context(body: Mapping[str, Any]) -> str | None:
    """The SubagentStart hook's additional context: a coordinator's first step, an agent's task."""
    found = [t[len(START_CONTEXT) :] for t in system_entries(body) if t.startswith(START_CONTEXT)]
    return found[-1] if found else None


def last_results(body: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """(text, is_error) of each tool_result in the last user message, a subagent's report unwrapped."""
    message = last_user_message(body) or {}
    content = message.get("content")
    found = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            raw = block.get("content")
            text = content_text(raw) if isinstance(raw, list) else str(raw or "")
            found.append((subagent_report(text) or text, bool(block.get("is_error"))))
    return found


REMINDER_END = "</system-reminder>"


def feedback_block(body: Mapping[str, Any]) -> NextBlock | None:
    """The block of a Stop hook's feedback, when the last user turn is one (the hook sent the model back).
    Claude Code 2.1.331 and later wrap the feedback in a system reminder: its closing tag is no part of it."""
    text = last_user_text(body)
    if STOP_FEEDBACK not in text:
        return None
    start = text.rfind(NEXT_MARK)
    if start < 0:
        return None
    end = text.find(REMINDER_END, start)
    return parse_next((text[:end] if end >= 0 else text).rstrip())


def latest_block(body: Mapping[str, Any]) -> NextBlock | None:
    """The coordinator's latest block: in a Stop hook's feedback that sent it back, else in the results of
    the agent calls it made last, else (no call made yet) in its SubagentStart context."""
    fed_back = feedback_block(body)
    if fed_back is not None:
        return fed_back
    results = last_results(body)
    if results:
        blocks = [b for b in (parse_next(text) for text, _ in results) if b is not None]
        return blocks[-1] if blocks else None
    context = start_context(body)
    if context is None:
        return None
    # Claude Code appends its environment section to the system entry that holds the hook's context
    return parse_next(context.split(CLI_ENVIRONMENT, 1)[0])


def feedback_turns(body: Mapping[str, Any]) -> int:
    """How many ``Stop hook feedback`` user turns the conversation holds (a SubagentStop block each)."""
    return sum(
        STOP_FEEDBACK in content_text(m.get("content")) for m in messages(body) if m.get("role") == "user"
    )


def json_after(text: str, label: str) -> Any:
    """The JSON value that follows ``label`` in ``text`` (None when there is none)."""
    at = text.find(label)
    if at < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[at + len(label) :].lstrip())[0]
    except json.JSONDecodeError:
        return None


@dataclass(frozen=True)
class Turn:
    """What an agent's behaviour gets: its name, the request, its task, round and attempt."""

    agent: str
    request: Request
    task: str
    attempt: int  # 1 + the SubagentStop blocks so far

    @property
    def round(self) -> int | None:
        match = re.search(r"review round (\d+)", self.task)
        return int(match[1]) if match else None

    @property
    def workdir(self) -> Path | None:
        match = re.search(r"Working directory: (\S+)", self.task)
        return Path(match[1]) if match else None

    @property
    def issues(self) -> list[JSON]:
        """The issues the task hands over (verifier, fixer)."""
        found = json_after(self.task, "Issues:\n")
        return [dict(item) for item in found] if isinstance(found, list) else []

    @property
    def tool_uses(self) -> list[Any]:
        return tool_uses(self.request.body)


# --------------------------------------------------------------------------------------------------
# The behaviours of the contracted agents
# --------------------------------------------------------------------------------------------------

Act = Answer | Sequence[Block]  # a final answer, or tool calls to make first
Behaviour = Callable[[Turn], Act]


def issue(defect: str | None = None, **fields: Any) -> JSON:
    """A reviewer issue: a seeded defect of the sample project (``claude_runner.SAMPLE_DEFECTS`` by id) or the
    fields given; ``fields`` override. Defaults: high severity, confidence 90, auto-fixable."""
    base: JSON = {"severity": "high", "confidence": 90, "auto_fixable": True}
    if defect is not None:
        seeded = next((d for d in SAMPLE_DEFECTS if d["id"] == defect), None)
        if seeded is None:
            raise KeyError(f"no sample defect {defect!r}")
        base |= {key: seeded[key] for key in ("file", "line", "category", "description")}
        base["suggestion"] = f"fix the {seeded['category']} at {seeded['file']}:{seeded['line']}"
    return base | fields


def failure_document(agent: str, code: str = "TOOL_ERROR") -> JSON:
    """A contract-valid failure answer."""
    return {
        "status": "failed",
        "agent": agent,
        "error": {"code": code, "message": f"{agent} could not complete its work", "recoverable": True},
    }


def schema_violation(agent: str) -> JSON:
    """Parsable JSON that breaks the reviewer contract at ``$.issues[0].confidence``."""
    bad = issue("swallowed-error", id="BAD-001", confidence="very high")
    return {"status": "success", "agent": agent, "issues": [bad], "positive_observations": []}


def _invalid(invalid: Sequence[Answer], turn: Turn) -> Answer | None:
    return invalid[turn.attempt - 1] if turn.attempt <= len(invalid) else None


def reviewer(
    rounds: Mapping[int, Sequence[JSON]] | None = None,
    *,
    invalid: Sequence[Answer] = (),
    fail_rounds: Collection[int] = (),
) -> Behaviour:
    """A reviewer: ``rounds`` maps a round to the issues it reports (none otherwise); attempt k answers
    ``invalid[k-1]`` while there is one; in ``fail_rounds`` it answers a valid failure document."""

    def behave(turn: Turn) -> Act:
        bad = _invalid(invalid, turn)
        if bad is not None:
            return bad
        number = turn.round or 0
        if number in fail_rounds:
            return failure_document(turn.agent)
        prefix = "".join(part[0] for part in turn.agent.split("-")).upper()
        issues = [
            {"id": f"{prefix}-{n:03d}", **item} for n, item in enumerate((rounds or {}).get(number, ()), 1)
        ]
        return {"status": "success", "agent": turn.agent, "issues": issues, "positive_observations": []}

    return behave


def verifier(score: int = 85, *, invalid: Sequence[Answer] = ()) -> Behaviour:
    """The review verifier: every finding it is given CORRECT and COMPLIANT, the review scored ``score``."""

    def behave(turn: Turn) -> Act:
        bad = _invalid(invalid, turn)
        if bad is not None:
            return bad
        ids = [str(item["id"]) for item in turn.issues]
        level = (
            "EXCELLENT" if score >= 85 else "GOOD" if score >= 70 else "ACCEPTABLE" if score >= 50 else "POOR"
        )
        task_id = re.search(r'Your task_id is "([^"]+)"', turn.task)
        return {
            "status": "success",
            "agent": VERIFIER_AGENT,
            **({"task_id": task_id[1]} if task_id else {}),
            "verification_result": {
                "accuracy_check": [
                    {
                        "issue_id": i,
                        "accuracy_status": "CORRECT",
                        "evidence": "read the line",
                        "deletion_required": False,
                    }
                    for i in ids
                ],
                "rule_compliance_check": [
                    {"issue_id": i, "compliance_status": "COMPLIANT", "deletion_required": False} for i in ids
                ],
                "quality_assessment": {"overall_score": score, "quality_level": level, "missing_issues": []},
            },
        }

    return behave


@dataclass(frozen=True)
class Edit:
    """A change the fixer makes in ``file`` (relative to the working directory): ``old`` -> ``new`` with the
    Edit tool, or the whole content ``new`` with the Write tool when ``old`` is None."""

    file: str
    old: str | None
    new: str


def fixer(rounds: Mapping[int, Sequence[Edit]] | None = None, *, skip: Collection[str] = ()) -> Behaviour:
    """The review fixer: Read every file it edits, one Edit/Write call per edit of the round, then its
    answer: every issue ``succeeded`` (``skipped`` when its description holds a ``skip`` substring, or when
    the round has no edits), ``files_modified`` the edited files."""

    def behave(turn: Turn) -> Act:
        edits = list((rounds or {}).get(turn.round or 0, ()))
        workdir = turn.workdir or Path(".")
        made = turn.tool_uses
        read = {str(use.input.get("file_path")) for use in made if use.name == "Read"}
        wanted = sorted({str(workdir / e.file) for e in edits if (workdir / e.file).is_file()} - read)
        if wanted:
            return [tool_use("Read", {"file_path": path}) for path in wanted]
        done = sum(use.name in ("Edit", "Write") for use in made)
        if done < len(edits):
            return [_edit_call(workdir, edits[done])]
        edited = sorted({e.file for e in edits})
        results = []
        for item in turn.issues:
            skipped = not edits or any(part in str(item.get("description")) for part in skip)
            results.append(
                {"issue_id": item["id"], "status": "skipped", "reason": "needs a design decision"}
                if skipped
                else {"issue_id": item["id"], "status": "succeeded", "files": edited}
            )
        fixed = sum(r["status"] == "succeeded" for r in results)
        status = "success" if fixed == len(results) else "partial" if fixed else "failed"
        return {"status": status, "agent": FIXER_AGENT, "results": results, "files_modified": edited}

    return behave


def _edit_call(workdir: Path, edit: Edit) -> Block:
    path = str(workdir / edit.file)
    if edit.old is None:
        return tool_use("Write", {"file_path": path, "content": edit.new})
    return tool_use("Edit", {"file_path": path, "old_string": edit.old, "new_string": edit.new})


DEFAULT_BEHAVIOURS: dict[str, Callable[[], Behaviour]] = {
    **{name: reviewer for name in REVIEWER_AGENTS},
    VERIFIER_AGENT: verifier,
    FIXER_AGENT: fixer,
}


# A coordinator that does not obey: given the request and the block it would follow, the reply it makes
# instead (None: it obeys this time).
Deviation = Callable[[Request, "NextBlock"], "Reply | None"]


def obey(block: NextBlock, *, background: bool = False) -> Reply:
    """What an obedient coordinator answers to ``block``: its calls in one message, or its final text."""
    if block.final is not None:
        return Reply.text(block.final)
    return Reply.tools(
        *(
            agent_call(c["subagent_type"], c["prompt"], description=c["description"], background=background)
            for c in block.calls
        )
    )


@dataclass
class Scenario:
    """A test's table: each agent's behaviour (reviewers clean, verifier approving, fixer skipping unless
    given), seconds to hold each agent's final answer, and deviations: ``coordinator_quits`` (a final
    message the coordinator ends with at once, ignoring its step), ``deviate`` (the coordinator's own
    deviations, turn by turn), ``main`` (the main thread's turns, for a conversation that goes on after a
    command)."""

    agents: Mapping[str, Behaviour] = field(default_factory=dict)
    delays: Mapping[str, float] = field(default_factory=dict)
    coordinator_quits: str | None = None
    main: Callable[[Request], Reply] | None = None
    deviate: Deviation | None = None
    tolerated_errors: tuple[str, ...] = ()  # tool errors the scenario provokes on purpose (substrings)
    together: Collection[str] = ()  # agents whose first answers wait until all of them are under way

    def behaviour(self, agent: str) -> Behaviour | None:
        given = self.agents.get(agent)
        if given is not None:
            return given
        default = DEFAULT_BEHAVIOURS.get(agent)
        return default() if default is not None else None


# --------------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------------


def answer_text(answer: Answer) -> str:
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


class FixloopModel:
    """The scripted model of one scenario. ``script()`` gives the :class:`scripted_api.Script`: one rule per
    sender, named after it, so the request log's ``rule`` says who sent each request."""

    def __init__(self, scenario: Scenario | None = None) -> None:
        self.scenario = scenario or Scenario()
        self.problems: list[str] = []
        self._lock = threading.Lock()
        self.arrived: dict[int, set[str]] = {}  # round -> the `together` agents whose first request came
        self._arrived_changed = threading.Condition()

    def gather(self, name: str, round_number: int, request: Request) -> None:
        """Hold this first request until every agent of ``together`` has sent its own first request of the
        round: they run at the same time, or the wait ends after TOGETHER_WAIT_S and says they did not."""
        with self._arrived_changed:
            arrived = self.arrived.setdefault(round_number, set())
            arrived.add(name)
            self._arrived_changed.notify_all()
            everyone = self._arrived_changed.wait_for(
                lambda: len(arrived) >= len(self.scenario.together), timeout=TOGETHER_WAIT_S
            )
        if not everyone:
            self.problem(request, f"round {round_number}: only {sorted(arrived)} were under way together")

    def problem(self, request: Request, message: str) -> None:
        with self._lock:
            self.problems.append(f"request {request.seq} ({identify(request)}): {message}")

    def script(self) -> Script:
        senders = [MAIN, COORDINATOR, *(name for name in MARKERS if name != COORDINATOR), UNKNOWN]
        return Script([Rule(name=name, where=_sent_by(name), reply=self._guarded(name)) for name in senders])

    def _guarded(self, sender: str) -> Callable[[Request, int], Reply]:
        """A reply that turns a crash of the model into a problem: a broken script ends the run, not hangs."""

        def reply(request: Request, index: int) -> Reply:
            try:
                return self.answer(sender, request)
            except Exception as error:
                self.problem(request, f"scripted model crashed: {type(error).__name__}: {error}")
                return Reply.text(f"SCRIPTED MODEL ERROR: {error}")

        return reply

    def answer(self, sender: str, request: Request) -> Reply:
        if sender != MAIN:
            for text, is_error in last_results(request.body):
                if is_error and not any(part in text for part in self.scenario.tolerated_errors):
                    self.problem(request, f"a tool failed: {text[:300]}")
        if sender == COORDINATOR:
            return self.coordinator(request)
        if sender == MAIN:
            if self.scenario.main is None:
                self.problem(request, "a main-thread request, and the scenario scripts none")
                return Reply.text("no main thread in this scenario")
            return self.scenario.main(request)
        behaviour = self.scenario.behaviour(sender)
        if behaviour is None:
            self.problem(request, f"no behaviour for {sender}")
            return Reply.text(f"no behaviour for {sender}")
        return self.agent(sender, behaviour, request)

    def coordinator(self, request: Request) -> Reply:
        if self.scenario.coordinator_quits is not None:
            return Reply.text(self.scenario.coordinator_quits)
        block = latest_block(request.body)
        if block is None:
            self.problem(request, "the coordinator has no fixloop next block to follow")
            return Reply.text(NO_STEP)
        if block.final is None and not block.calls:
            self.problem(request, f"a fixloop next block names no agent: {block.text[:300]!r}")
            return Reply.text(NO_STEP)
        deviation = self.scenario.deviate(request, block) if self.scenario.deviate is not None else None
        return deviation if deviation is not None else obey(block)

    def agent(self, name: str, behaviour: Behaviour, request: Request) -> Reply:
        task = start_context(request.body)
        if task is None:
            self.problem(request, f"{name} started without its task (no SubagentStart context)")
            task = ""
        turn = Turn(name, request, task, 1 + feedback_turns(request.body))
        act = behaviour(turn)
        if isinstance(act, (str, Mapping)):
            reply = Reply.text(answer_text(act), delay=self.scenario.delays.get(name, 0.0))
            if name in self.scenario.together and turn.attempt == 1 and not turn.tool_uses:
                reply = dataclasses.replace(reply, hold=lambda: self.gather(name, turn.round or 0, request))
            return reply
        return Reply.tools(*act)


def _sent_by(sender: str) -> Callable[[Request], bool]:
    def check(request: Request) -> bool:
        return identify(request) == sender

    return check


# --------------------------------------------------------------------------------------------------
# The happy path of /fixloop:review, shared by its test, the benchmarks and the demo
# --------------------------------------------------------------------------------------------------

EXCEPT_OLD = "    except Exception:\n        return {}\n"
EXCEPT_NEW = "    except FileNotFoundError:\n        return {}\n"
COMMENT_OLD = "    # Raises KeyError when the SKU is not in stock.\n"
COMMENT_NEW = "    # An unknown SKU counts as 0 units; the result never goes below 0.\n"


def happy_path(reviewer_delay: float = 0.0, together: bool = False) -> Scenario:
    """Two fixable findings in round 1 (the sample's swallowed error and misleading comment), one fixer pass
    that edits inventory/stock.py twice, a clean round 2; each reviewer holds its answer ``reviewer_delay``
    seconds, and with ``together`` until all six are under way."""
    return Scenario(
        agents={
            "silent-failure-hunter": reviewer({1: [issue("swallowed-error")]}),
            "comment-analyzer": reviewer({1: [issue("misleading-comment")]}),
            FIXER_AGENT: fixer(
                {
                    1: [
                        Edit("inventory/stock.py", EXCEPT_OLD, EXCEPT_NEW),
                        Edit("inventory/stock.py", COMMENT_OLD, COMMENT_NEW),
                    ]
                }
            ),
        },
        delays=dict.fromkeys(REVIEWER_AGENTS, reviewer_delay),
        together=REVIEWER_AGENTS if together else (),
    )
