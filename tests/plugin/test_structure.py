"""The plugin's markdown (agents, commands, skills) agrees with Claude Code's rules and with the engine.

Checks: frontmatter, names, flat agents, the context budget of descriptions, every `fixloop:<agent>` and
`/fixloop:<command>` named, every engine command line (subcommand path and options, against the real click
CLI), the slash commands (each a forked coordinator whose one `!` line starts its run, no user words in a
shell), every agent but the coordinator answering to a contract of the engine; that the reviewers, the fixer
and the verifier hold only their own instructions (the review guide and the output contracts are generated
from the models and sent by the engine); and that the skills' log queries name fields the events declare.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from pydantic import BaseModel

from fixloop.cli import SUBCOMMANDS, cli
from fixloop.contracts.common import AgentError
from fixloop.contracts.events import EVENT_MODELS, Event
from fixloop.contracts.fixer import FixAttempt, FixerOutput
from fixloop.contracts.kinds import KINDS
from fixloop.contracts.prompt_text import CONFIDENCE_SCALE, REVIEW_SCOPE, contract_text, review_guide_text
from fixloop.contracts.reviewer import ReviewerIssue, ReviewerOutput
from fixloop.contracts.verifier import (
    AccuracyCheck,
    MissingIssue,
    QualityAssessment,
    RuleComplianceCheck,
    VerificationResult,
    VerifierOutput,
)
from fixloop.core.agent_names import COORDINATOR_AGENT, FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT
from fixloop.hookside.readonly import WRITER_AGENTS
from fixloop.runs.typed_command import COMMANDS as TYPED_COMMANDS

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "fixloop"
START_RULES = (
    'Bash("${CLAUDE_PLUGIN_ROOT}/scripts/fixloop" start:*)',  # quoted, also when the path has spaces
    "Bash(${CLAUDE_PLUGIN_ROOT}/scripts/fixloop start:*)",  # the same when it has none
)
# The tools Claude Code 2.1.328 grants an agent that names them (a subagent's request shows them); it
# drops any other name without a word (Grep and Glob included: searching is done with Bash).
KNOWN_TOOLS = {"Agent", "Bash", "Edit", "Read", "Write"}
MODELS = {"inherit", "sonnet", "opus", "haiku"}
COMMANDS = {*TYPED_COMMANDS, "answer"}
READ_ONLY_AGENTS = {*REVIEWER_AGENTS, VERIFIER_AGENT}
MAX_DESCRIPTION = 100
DESCRIPTION_BUDGET = 2500


@dataclass(frozen=True)
class Doc:
    path: Path
    meta: dict[str, Any]
    body: str

    @property
    def name(self) -> str:
        return str(self.meta.get("name", ""))


def read_doc(path: Path) -> Doc:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path}: no frontmatter"
    end = text.find("\n---\n", 4)
    assert end > 0, f"{path}: frontmatter not closed"
    meta = yaml.safe_load(text[4:end])
    assert isinstance(meta, dict), f"{path}: frontmatter is not a mapping"
    return Doc(path, meta, text[end + 5 :])


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


AGENTS = {path.stem: read_doc(path) for path in sorted((ROOT / "agents").glob("*.md"))}
COMMAND_DOCS = {path.stem: read_doc(path) for path in sorted((ROOT / "commands").glob("*.md"))}
SKILLS = {path.parent.name: read_doc(path) for path in sorted((ROOT / "skills").glob("*/SKILL.md"))}
ALL_DOCS = [*AGENTS.values(), *COMMAND_DOCS.values(), *SKILLS.values()]
DOC_IDS = [rel(doc.path) for doc in ALL_DOCS]


def tools_of(doc: Doc) -> list[str]:
    return [item.strip() for item in str(doc.meta.get("tools", "")).split(",") if item.strip()]


def section(body: str, heading: str) -> str:
    """The text under `## heading`, up to the next `## ` heading."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", body, re.S | re.M)
    assert match, f"no '## {heading}' section"
    return match.group(1)


# ---- files and frontmatter -------------------------------------------------------------------------


def test_agents_are_flat_markdown_files() -> None:
    # An agent in agents/x/ is named fixloop:x:<name>: every agent must sit directly in agents/.
    entries = sorted((ROOT / "agents").iterdir())
    assert [entry.name for entry in entries if not (entry.is_file() and entry.suffix == ".md")] == []


ROLE_KINDS = {**dict.fromkeys(REVIEWER_AGENTS, "reviewer"), FIXER_AGENT: "fixer", VERIFIER_AGENT: "verifier"}


def test_every_agent_but_the_coordinator_answers_to_an_engine_contract() -> None:
    names = {doc.name for doc in AGENTS.values()}
    assert COORDINATOR_AGENT in names
    for name in names - {COORDINATOR_AGENT}:
        assert ROLE_KINDS.get(name, name) in KINDS, f"{name}: the engine has no contract for its answers"


def test_the_plugin_ships_its_commands_and_skill() -> None:
    assert set(COMMAND_DOCS) == COMMANDS
    assert set(SKILLS) == {"workflow-logging"}


@pytest.mark.parametrize("stem", sorted(AGENTS))
def test_agent_frontmatter(stem: str) -> None:
    doc = AGENTS[stem]
    assert set(doc.meta) <= {"name", "description", "tools", "model"}, sorted(doc.meta)
    assert doc.name == stem, "file name and frontmatter name differ"
    assert re.fullmatch(r"[a-z][a-z0-9-]*", doc.name)
    assert doc.meta["model"] in MODELS
    tools = tools_of(doc)
    assert tools, "an agent without `tools` gets nearly every tool"
    assert set(tools) <= KNOWN_TOOLS, f"unknown tools are dropped silently: {set(tools) - KNOWN_TOOLS}"
    assert len(tools) == len(set(tools))


@pytest.mark.parametrize("stem", sorted(READ_ONLY_AGENTS))
def test_reviewers_and_verifier_cannot_edit(stem: str) -> None:
    tools = set(tools_of(AGENTS[stem]))
    assert tools == {"Read", "Bash"}
    assert "never edit files" in AGENTS[stem].body


def test_only_the_agents_that_edit_have_a_free_bash() -> None:
    """Every other agent's Bash is held to read-only commands by the PreToolUse hook `readonly`."""
    editors = {stem for stem, doc in AGENTS.items() if "Edit" in tools_of(doc)}
    assert editors == WRITER_AGENTS
    readers = {stem for stem, doc in AGENTS.items() if "Bash" in tools_of(doc)} - editors
    assert readers >= READ_ONLY_AGENTS and len(readers) == 13
    for stem in readers:
        assert "fixloop refuses any other" in AGENTS[stem].body, stem
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]["PreToolUse"]
    (held,) = [entry for entry in hooks if entry["matcher"] == "Bash"]
    assert [hook["command"].split()[-1] for hook in held["hooks"]] == ["readonly"]


def test_agents_that_launch_agents_have_the_agent_tool() -> None:
    launchers = {stem for stem, doc in AGENTS.items() if "Agent" in tools_of(doc)}
    assert launchers == {COORDINATOR_AGENT}
    assert tools_of(AGENTS[COORDINATOR_AGENT]) == ["Agent"]  # it carries out actions; it reads nothing


@pytest.mark.parametrize("stem", sorted(COMMAND_DOCS))
def test_command_frontmatter(stem: str) -> None:
    doc = COMMAND_DOCS[stem]
    assert set(doc.meta) <= {
        "description",
        "argument-hint",
        "allowed-tools",
        "disable-model-invocation",
        "context",
        "agent",
    }
    assert doc.meta["argument-hint"]
    # The command runs as the coordinator itself: no turn of the user's main thread is spent on it.
    assert (doc.meta["context"], doc.meta["agent"]) == ("fork", f"{PLUGIN}:{COORDINATOR_AGENT}")
    rules = [rule.strip() for rule in re.split(r",\s*(?=Bash\()", doc.meta["allowed-tools"])]
    assert rules == list(START_RULES), "the `!` line may start its run and nothing else"
    # Commands change code and spawn many agents: the user starts them, and they cost no context.
    assert doc.meta["disable-model-invocation"] is True


@pytest.mark.parametrize("name", sorted(SKILLS))
def test_skill_frontmatter(name: str) -> None:
    doc = SKILLS[name]
    assert doc.name == name
    assert set(doc.meta) <= {"name", "description", "user-invocable"}
    assert doc.meta.get("user-invocable") is False  # agents read it; it is no slash command


@pytest.mark.parametrize("doc", ALL_DOCS, ids=DOC_IDS)
def test_description_is_one_short_line(doc: Doc) -> None:
    description = doc.meta["description"]
    assert isinstance(description, str) and "\n" not in description.strip()
    assert 20 <= len(description) <= MAX_DESCRIPTION, f"{len(description)} chars"


def test_descriptions_fit_the_context_budget() -> None:
    # Every session pays for the agents' and skills' descriptions; commands count too, in case they are
    # ever listed for the model.
    total = sum(len(doc.meta["description"]) for doc in ALL_DOCS)
    assert total < DESCRIPTION_BUDGET, f"{total} description chars"


# ---- names used in markdown ------------------------------------------------------------------------


@pytest.mark.parametrize("doc", ALL_DOCS, ids=DOC_IDS)
def test_named_agents_and_commands_exist(doc: Doc) -> None:
    text = doc.body
    commands = set(re.findall(r"/fixloop:([a-z0-9-]+)", text))
    agents = set(re.findall(r"(?<![/\w.-])fixloop:([a-z0-9-]+)", text))
    assert commands <= set(COMMAND_DOCS), commands - set(COMMAND_DOCS)
    assert agents <= {agent.name for agent in AGENTS.values()}


# ---- engine command lines --------------------------------------------------------------------------


def code_snippets(body: str) -> list[str]:
    """Lines of fenced blocks, then inline code spans (including `!`-prefixed ones) of the rest."""
    snippets: list[str] = []

    def keep_block(match: re.Match[str]) -> str:
        snippets.extend(match.group(1).splitlines())
        return ""

    rest = re.sub(r"^```[^\n]*\n(.*?)^```", keep_block, body, flags=re.S | re.M)
    snippets.extend(re.findall(r"`([^`\n]+)`", rest))
    return snippets


def is_engine(token: str) -> bool:
    return token == "fixloop" or token.endswith("${CLAUDE_PLUGIN_ROOT}/scripts/fixloop")


def engine_calls(body: str) -> list[list[str]]:
    calls = []
    for snippet in code_snippets(body):
        try:
            tokens = shlex.split(snippet)
        except ValueError:
            tokens = snippet.split()
        for index, token in enumerate(tokens):
            if is_engine(token) and index + 1 < len(tokens):
                calls.append(tokens[index + 1 :])
    return calls


def option_names(command: click.Command) -> set[str]:
    names = {"--help"}
    for param in command.params:
        if isinstance(param, click.Option):
            names.update(name for name in [*param.opts, *param.secondary_opts] if name.startswith("--"))
    return names


def resolve(words: list[str]) -> tuple[click.Command, list[str], list[str]]:
    """(command, its path, the words after the path); fails on an unknown subcommand."""
    command: click.Command = cli
    path: list[str] = []
    remaining = list(words)
    while isinstance(command, click.Group):
        assert remaining and not remaining[0].startswith("-"), (
            f"`fixloop {' '.join(path)}` needs a subcommand"
        )
        name = remaining.pop(0)
        with click.Context(command) as ctx:
            sub = command.get_command(ctx, name)
        assert sub is not None, f"`fixloop {' '.join([*path, name])}`: no such engine command"
        command = sub
        path.append(name)
    return command, path, remaining


def test_every_engine_subcommand_imports() -> None:
    with click.Context(cli) as ctx:
        for name in SUBCOMMANDS:
            assert isinstance(cli.get_command(ctx, name), click.Command), name


@pytest.mark.parametrize("doc", ALL_DOCS, ids=DOC_IDS)
def test_engine_calls_name_real_commands_and_options(doc: Doc) -> None:
    calls = engine_calls(doc.body)
    if doc.path.parent.name == "commands":
        assert calls, "this file drives the engine but names no engine call"
    for words in calls:
        command, path, rest = resolve(words)
        known = option_names(command)
        for word in rest:
            option = word.strip("[]").split("=", 1)[0]
            if option.startswith("--"):
                assert option in known, f"`fixloop {' '.join(path)}` has no option {option}"


def test_engine_is_always_called_by_its_quoted_plugin_path() -> None:
    # Bare `fixloop` is shorthand in prose; every instruction says which path to call.
    for doc in ALL_DOCS:
        if engine_calls(doc.body) and doc.name != "workflow-logging":
            assert '"${CLAUDE_PLUGIN_ROOT}/scripts/fixloop"' in doc.body, rel(doc.path)


# ---- slash commands --------------------------------------------------------------------------------


@pytest.mark.parametrize("stem", sorted(COMMANDS))
def test_command_starts_its_run_with_no_user_words_in_a_shell(stem: str) -> None:
    body = COMMAND_DOCS[stem].body
    assert body.strip() == f'!`"${{CLAUDE_PLUGIN_ROOT}}/scripts/fixloop" start {stem}`'
    assert (
        "$ARGUMENTS" not in body and "$1" not in body
    )  # the words reach the engine by the hook, never a shell


# ---- agent instructions: each file its own focus; the shared text and contracts come from the engine ----


CONTRACT_AGENTS = {
    **{name: "reviewer" for name in REVIEWER_AGENTS},
    FIXER_AGENT: "fixer",
    VERIFIER_AGENT: "verifier",
}
CONTRACT_MODELS = [
    ReviewerOutput, ReviewerIssue, AgentError, FixerOutput, FixAttempt, VerifierOutput, VerificationResult,
    AccuracyCheck, RuleComplianceCheck, QualityAssessment, MissingIssue,
]  # fmt: skip
MIN_SHARED_CHARS = 20  # shorter phrases ("The issue's id.") say too little to count as a copy
MAX_REVIEWER_BODY = 1000
MAX_REVIEWER_LINES = 10
MAX_FIXER_VERIFIER_BODY = 1300
SOURCE_DIRS = ("agents", "commands", "skills", "scripts/lib/fixloop")


def guide_sentences() -> list[str]:
    """The shared review guide, sentence by sentence as the engine renders it."""
    return [*REVIEW_SCOPE, *(meaning for _, _, meaning in CONFIDENCE_SCALE)]


def contract_descriptions() -> list[str]:
    return [
        str(info.description)
        for model in CONTRACT_MODELS
        for info in model.model_fields.values()
        if info.description and len(info.description) >= MIN_SHARED_CHARS
    ]


def shared_lines(kind: str) -> list[str]:
    """Every line of the contract text and (for reviewers) of the review guide, without list markers."""
    text = contract_text(kind) + ("\n" + review_guide_text() if kind == "reviewer" else "")
    lines = [re.sub(r"^\s*- ", "", line) for line in text.splitlines()]
    return [line for line in lines if len(line) >= MIN_SHARED_CHARS]


def source_files() -> list[Path]:
    files = []
    for folder in SOURCE_DIRS:
        files += [p for p in sorted((ROOT / folder).rglob("*")) if p.suffix in (".md", ".py") and p.is_file()]
    return files


@pytest.mark.parametrize("stem", sorted(CONTRACT_AGENTS))
def test_agent_file_holds_no_copy_of_the_shared_text(stem: str) -> None:
    body = AGENTS[stem].body
    copies = [line for line in shared_lines(CONTRACT_AGENTS[stem]) if line in body]
    copies += [text for text in [*guide_sentences(), *contract_descriptions()] if text in body]
    assert copies == []
    for heading in ("Output", "Scope", "Confidence"):
        assert not re.search(rf"^## {heading}", body, re.M), f"{stem} has its own '## {heading}' section"
    assert "ONLY one JSON" not in body


@pytest.mark.parametrize("stem", sorted(CONTRACT_AGENTS))
def test_agent_file_says_who_it_is_in_the_shared_contract(stem: str) -> None:
    # The contract the prompt carries is the same for the six reviewers: each file names its own `agent`.
    assert AGENTS[stem].body.count(f'"agent": "{stem}"') == 1
    assert f'"{stem}"' in contract_text(CONTRACT_AGENTS[stem])


def test_reviewers_have_their_own_issue_id_prefix() -> None:
    prefixes = [re.findall(r"`([A-Z]+)-001`", AGENTS[name].body) for name in REVIEWER_AGENTS]
    assert all(len(found) == 1 for found in prefixes), prefixes
    assert len({found[0] for found in prefixes}) == len(REVIEWER_AGENTS)


def test_the_shared_text_and_the_contract_exist_once_in_the_engine() -> None:
    files = source_files()
    texts = {path: path.read_text(encoding="utf-8") for path in files}
    guide_home = ROOT / "scripts/lib/fixloop/contracts/prompt_text.py"
    for sentence in guide_sentences():
        holders = [path for path, text in texts.items() if sentence in text]
        assert holders == [guide_home], (sentence, [rel(path) for path in holders])
    # The contract's opening words live in core: the hooks find a task's contract by them.
    opening = [
        rel(path) for path, text in texts.items() if "Your final message is ONLY one JSON object" in text
    ]
    assert opening == ["scripts/lib/fixloop/core/contract_opening.py"]
    for description in contract_descriptions():
        holders = [rel(path) for path, text in texts.items() if description in text]
        # The models state the meanings; markdown and the other engine modules only send what they render.
        assert all(holder.startswith("scripts/lib/fixloop/contracts/") for holder in holders), holders


@pytest.mark.parametrize("stem", sorted(CONTRACT_AGENTS))
def test_agent_instructions_stay_short(stem: str) -> None:
    body = AGENTS[stem].body.strip()
    if stem in REVIEWER_AGENTS:
        assert len(body) <= MAX_REVIEWER_BODY, f"{len(body)} chars"
        assert len([line for line in body.splitlines() if line.strip()]) <= MAX_REVIEWER_LINES
        assert re.search(r"^## Look for$", body, re.M), "a reviewer states its focus under '## Look for'"
        assert "to the other reviewers" in body, "a reviewer says what it leaves to the others"
    else:
        assert len(body) <= MAX_FIXER_VERIFIER_BODY, f"{len(body)} chars"


# ---- log queries in the skills ---------------------------------------------------------------------

SHORTHAND = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*$")
FIELD_REF = re.compile(r"(?<![\w\]\)])\.([a-z_][a-z0-9_]*)")


def jq_filters(body: str) -> list[str]:
    """The filter of every `jq ...` line in the fenced blocks of a markdown body."""
    filters = []
    for snippet in code_snippets(body):
        tokens = shlex.split(snippet) if snippet.startswith("jq ") else []
        filters += [token for token in tokens[1:] if not token.startswith("-")][:1]
    return filters


def selected_fields(jq_filter: str) -> set[str]:
    """`.field` references and `{a, b}` shorthand keys of a jq filter."""
    fields = set(FIELD_REF.findall(jq_filter))
    for inside in re.findall(r"\{([^{}]*)\}", jq_filter):
        for item in inside.split(","):
            match = SHORTHAND.match(item)
            if match:
                fields.add(match.group(1))
    return fields


def unknown_event_fields(jq_filter: str) -> list[str]:
    """`TYPE.field` for each field the filter takes from an event type whose model does not declare it."""
    types = re.findall(r'\.type\s*==\s*"([A-Z_]+)"', jq_filter)
    models: dict[str, type[BaseModel]] = {t: EVENT_MODELS[t] for t in types if t in EVENT_MODELS}
    wrong = [f"{t} (no such event type)" for t in types if t not in EVENT_MODELS]
    for field in sorted(selected_fields(jq_filter)):
        for name, model in (models or {"any event": Event}).items():
            if field not in model.model_fields:
                wrong.append(f"{name}.{field}")
    return wrong


def test_the_jq_field_check_catches_a_field_no_event_declares() -> None:
    bad = 'select(.type == "REVIEW_PARALLEL_END") | {iteration, total_issues, fixable_issues}'
    assert unknown_event_fields(bad) == ["REVIEW_PARALLEL_END.fixable_issues"]
    assert unknown_event_fields('select(.level == "E") | .agent') == ["any event.agent"]
    assert unknown_event_fields('select(.type == "NOPE")') == ["NOPE (no such event type)"]
    assert selected_fields("{a, b: .c, d} | sort_by(.ts)") == {"a", "c", "d", "ts"}


@pytest.mark.parametrize("name", sorted(SKILLS))
def test_skill_jq_queries_name_only_fields_the_events_declare(name: str) -> None:
    filters = jq_filters(SKILLS[name].body)
    if name == "workflow-logging":
        assert len(filters) >= 5
    for jq_filter in filters:
        assert unknown_event_fields(jq_filter) == [], jq_filter


def test_skill_event_field_lists_name_declared_fields() -> None:
    events = section(SKILLS["workflow-logging"].body, "Events")
    listed = re.findall(r"`([A-Z_]+)` \(([^)]*)\)", events)
    checked = 0
    for event_type, inside in listed:
        names = [item.strip() for item in inside.split(",")]
        if not all(re.fullmatch(r"[a-z_]+", item) for item in names):
            continue  # prose, not a field list
        checked += 1
        assert set(names) <= set(EVENT_MODELS[event_type].model_fields), event_type
    assert checked >= 5
