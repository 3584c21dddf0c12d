"""The plugin's markdown (agents, commands, skills) agrees with Claude Code's rules and with the engine.

Checks: frontmatter, names, flat agents, the context budget of descriptions, every `fixloop:<agent>` and
`/fixloop:<command>` named, every engine command line (subcommand path and options, against the real click
CLI), the slash commands' run start line, the workflow coordinators' phases, and the output instructions of
the reviewers, the fixer and the verifier against the pydantic contracts.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from pydantic import BaseModel

from fixloop.cli import SUBCOMMANDS, cli
from fixloop.contracts.common import AgentError
from fixloop.contracts.fixer import FixAttempt, FixerOutput
from fixloop.contracts.reviewer import ReviewerIssue, ReviewerOutput
from fixloop.contracts.verifier import (
    AccuracyCheck,
    MissingIssue,
    QualityAssessment,
    RuleComplianceCheck,
    VerificationResult,
    VerifierOutput,
)
from fixloop.core.agent_names import FIXER_AGENT, REVIEWER_AGENTS, VERIFIER_AGENT
from fixloop.runs.phases import REVIEW_PHASE, WORKFLOW_PHASES

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "fixloop"
ENGINE_RULES = (
    'Bash("${CLAUDE_PLUGIN_ROOT}/scripts/fixloop":*)',  # quoted calls, also when the path has spaces
    "Bash(${CLAUDE_PLUGIN_ROOT}/scripts/fixloop:*)",  # quoted or bare calls when it has none
)
COMMON_FLAGS = "[--dry-run] [--log] [--verbose]"
# Tool names Claude Code 2.1.328 knows; it drops an unknown name from `tools` without a word.
KNOWN_TOOLS = {
    "Agent", "AskUserQuestion", "Bash", "Edit", "Glob", "Grep", "NotebookEdit", "Read", "Skill",
    "TodoWrite", "WebFetch", "WebSearch", "Write",
}  # fmt: skip
MODELS = {"inherit", "sonnet", "opus", "haiku"}
WORKFLOW_COORDINATORS = {
    "bugfix": "bugfix-coordinator",
    "pr-review": "pr-review-coordinator",
    "ci-job": "ci-coordinator",
    "execute-plan": "plan-coordinator",
}
# command -> (workflow, stack, coordinator agent)
COMMANDS: dict[str, tuple[str, str | None, str]] = {
    "review": ("review", None, "review-coordinator"),
    "fix-backend": ("bugfix", "backend", "bugfix-coordinator"),
    "fix-frontend": ("bugfix", "frontend", "bugfix-coordinator"),
    "fix-e2e": ("bugfix", "e2e", "bugfix-coordinator"),
    "fix-pr-review": ("pr-review", None, "pr-review-coordinator"),
    "fix-ci": ("ci-job", None, "ci-coordinator"),
    "execute-plan": ("execute-plan", None, "plan-coordinator"),
}
EXPECTED_AGENTS = {
    *REVIEWER_AGENTS,
    FIXER_AGENT,
    VERIFIER_AGENT,
    "review-coordinator",
    *WORKFLOW_COORDINATORS.values(),
}
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


def test_the_plugin_ships_exactly_the_designed_agents_and_commands() -> None:
    assert {doc.name for doc in AGENTS.values()} == EXPECTED_AGENTS
    assert set(COMMAND_DOCS) == set(COMMANDS)
    assert set(SKILLS) == {"coordinator-patterns", "workflow-logging"}


@pytest.mark.parametrize("stem", sorted(AGENTS))
def test_agent_frontmatter(stem: str) -> None:
    doc = AGENTS[stem]
    assert set(doc.meta) <= {"name", "description", "tools", "model", "skills"}, sorted(doc.meta)
    assert doc.name == stem, "file name and frontmatter name differ"
    assert re.fullmatch(r"[a-z][a-z0-9-]*", doc.name)
    assert doc.meta["model"] in MODELS
    tools = tools_of(doc)
    assert tools, "an agent without `tools` gets nearly every tool"
    assert set(tools) <= KNOWN_TOOLS, f"unknown tools are dropped silently: {set(tools) - KNOWN_TOOLS}"
    assert len(tools) == len(set(tools))
    for skill in doc.meta.get("skills", "").split(",") if doc.meta.get("skills") else []:
        skill = skill.strip()
        assert skill in SKILLS, f"skills: {skill} is not a skill of the plugin"
        # A skill hidden from the model (disable-model-invocation) is not preloaded into an agent.
        assert SKILLS[skill].meta.get("disable-model-invocation") is not True


@pytest.mark.parametrize("stem", sorted(READ_ONLY_AGENTS))
def test_reviewers_and_verifier_cannot_edit(stem: str) -> None:
    tools = set(tools_of(AGENTS[stem]))
    assert tools == {"Read", "Grep", "Glob", "Bash"}
    assert "never edit files" in AGENTS[stem].body


def test_agents_that_launch_agents_have_the_agent_tool() -> None:
    launchers = {stem for stem, doc in AGENTS.items() if re.search(r"fixloop:[a-z]", doc.body)}
    assert launchers == {"review-coordinator", *WORKFLOW_COORDINATORS.values()}
    for stem in launchers:
        assert "Agent" in tools_of(AGENTS[stem]), stem


@pytest.mark.parametrize("stem", sorted(COMMAND_DOCS))
def test_command_frontmatter(stem: str) -> None:
    doc = COMMAND_DOCS[stem]
    assert set(doc.meta) <= {"description", "argument-hint", "allowed-tools", "disable-model-invocation"}
    hint = doc.meta["argument-hint"]
    assert hint.startswith("[--phase=") and COMMON_FLAGS in hint, hint
    rules = [rule.strip() for rule in re.split(r",\s*(?=Bash\()", doc.meta["allowed-tools"])]
    for rule in ENGINE_RULES:
        assert rule in rules, f"allowed-tools lacks {rule}"
    # Commands change code and spawn many agents: the user starts them, and they cost no context.
    assert doc.meta["disable-model-invocation"] is True


@pytest.mark.parametrize("name", sorted(SKILLS))
def test_skill_frontmatter(name: str) -> None:
    doc = SKILLS[name]
    assert doc.name == name
    assert set(doc.meta) <= {"name", "description"}


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
    assert agents <= EXPECTED_AGENTS, agents - EXPECTED_AGENTS
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
    drivers = {"review-coordinator", *WORKFLOW_COORDINATORS.values()}
    if doc.path.parent.name == "commands" or doc.name in drivers:
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
            assert '`"${CLAUDE_PLUGIN_ROOT}/scripts/fixloop"`' in doc.body, rel(doc.path)


# ---- slash commands --------------------------------------------------------------------------------


@pytest.mark.parametrize("stem", sorted(COMMANDS))
def test_command_starts_its_run_at_expansion_and_launches_its_coordinator(stem: str) -> None:
    workflow, stack, coordinator = COMMANDS[stem]
    body = COMMAND_DOCS[stem].body
    bang = re.findall(r"^!`(.+)`$", body, re.M)
    assert len(bang) == 1, "exactly one `!` line starts the run"
    tokens = shlex.split(bang[0])
    assert tokens[0] == "${CLAUDE_PLUGIN_ROOT}/scripts/fixloop"
    assert tokens[1:3] == ["run", "start"]
    options = dict(itertools.pairwise(tokens[3:]))
    assert options["--workflow"] == workflow
    assert options.get("--stack") == stack
    assert options["--args"] == "$ARGUMENTS"
    assert options["--command"] == f"/fixloop:{stem} $ARGUMENTS"
    assert workflow in WORKFLOW_PHASES
    launched = set(re.findall(r"`fixloop:([a-z0-9-]+)`", body))
    assert launched == {coordinator}
    assert "`run_in_background: false`" in body
    assert "--format markdown" in body


# ---- workflow coordinators -------------------------------------------------------------------------


@pytest.mark.parametrize("workflow", sorted(WORKFLOW_COORDINATORS))
def test_workflow_coordinator_covers_every_phase(workflow: str) -> None:
    doc = AGENTS[WORKFLOW_COORDINATORS[workflow]]
    assert doc.meta.get("skills") == "coordinator-patterns"
    items = re.findall(r"^(\d+)\. (.*)$", section(doc.body, "Phases"), re.M)
    assert [int(number) for number, _ in items] == list(range(len(WORKFLOW_PHASES[workflow])))
    review_item = items[REVIEW_PHASE[workflow]][1]
    assert "`fixloop:review-coordinator`" in review_item
    assert "`fixloop run files RUN --git-diff`" in review_item
    assert "`fixloop run end RUN --status S`" in doc.body
    assert f"`agent` `{doc.name}`" in doc.body


def test_coordinator_patterns_states_the_phase_ranges_of_the_engine() -> None:
    body = SKILLS["coordinator-patterns"].body
    for workflow, names in WORKFLOW_PHASES.items():
        expected = "0" if len(names) == 1 else f"0-{len(names) - 1}"
        assert f"`{workflow}` {expected}" in body, workflow


# ---- agent output contracts ------------------------------------------------------------------------


@dataclass
class Bullets:
    """Field names of `- `name`: ...` bullets, top level and nested, with the line that names each."""

    top: dict[str, str]
    nested: dict[str, str]


def bullet_fields(text: str) -> Bullets:
    bullets = Bullets({}, {})
    for indent, rest in re.findall(r"^( *)- (.*)$", text, re.M):
        head = re.match(r"((?:`[a-z_]+`(?:,\s*)?)+)(?::|\s\()", rest)
        if not head:
            continue
        level = bullets.nested if indent else bullets.top
        for name in re.findall(r"`([a-z_]+)`", head.group(1)):
            assert name not in level, f"{name} is described twice"
            level[name] = rest
    return bullets


def inline_keys(line: str) -> set[str]:
    """Keys of an inline `{"a", "b": ...}` object description."""
    return set(re.findall(r'[{,]\s*"([a-z_]+)"(?=\s*[:,}])', line))


def literal_values(model: type[BaseModel], field: str) -> tuple[str, ...]:
    annotation = model.model_fields[field].annotation
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return tuple(str(arg) for arg in args)
    return ()


def assert_literals_listed(model: type[BaseModel], fields: set[str], lines: dict[str, str]) -> None:
    for field in fields:
        for value in literal_values(model, field):
            assert f"`{value}`" in lines[field] or f'"{value}"' in lines[field], (
                f"{field}: {value} not listed"
            )


def example_document(output: str) -> dict[str, Any]:
    block = re.search(r"^```\n(.*?)\n```", output, re.S | re.M)
    assert block, "the Output section shows no example document"
    document = json.loads(block.group(1))
    assert isinstance(document, dict)
    return document


def error_example(output: str) -> dict[str, Any]:
    match = re.search(r'`(\{"code".*?\})`', output)
    assert match, "no inline error object example"
    example = json.loads(match.group(1))
    assert isinstance(example, dict)
    return example


def assert_error_example(output: str) -> None:
    example = error_example(output)
    required = {name for name, info in AgentError.model_fields.items() if info.is_required()}
    assert required <= set(example) <= set(AgentError.model_fields)
    AgentError.model_validate(example)


def fields(model: type[BaseModel]) -> set[str]:
    return set(model.model_fields)


@pytest.mark.parametrize("name", REVIEWER_AGENTS)
def test_reviewer_output_instructions_match_the_contract(name: str) -> None:
    doc = AGENTS[name]
    output = section(doc.body, "Output")
    assert "ONLY one JSON document" in output
    bullets = bullet_fields(output)
    assert set(bullets.top) == fields(ReviewerOutput)
    assert set(bullets.nested) == fields(ReviewerIssue)
    assert_literals_listed(ReviewerOutput, {"status"}, bullets.top)
    assert_literals_listed(ReviewerIssue, {"severity"}, bullets.nested)
    example = example_document(output)
    assert example["agent"] == name
    ReviewerOutput.model_validate(example)
    assert_error_example(output)
    assert f"`{name}`" in bullets.top["agent"]


def test_reviewers_share_one_contract_text() -> None:
    # The six bodies differ in their focus only: from `## Scope` on, the text is the same once the
    # agent's name, id prefix and example category are taken out.
    def common_part(name: str) -> str:
        text = AGENTS[name].body
        tail = text[text.index("## Scope") :].replace(name, "AGENT")
        tail = re.sub(r"`[A-Z]+-001`", "`PREFIX-001`", tail)
        return re.sub(r"e\.g\. `[a-z-]+`", "e.g. `CATEGORY`", tail)

    parts = {name: common_part(name) for name in REVIEWER_AGENTS}
    assert len(set(parts.values())) == 1
    prefixes = [re.search(r"`([A-Z]+)-001`", AGENTS[name].body) for name in REVIEWER_AGENTS]
    assert len({match.group(1) for match in prefixes if match}) == len(REVIEWER_AGENTS)


def test_reviewers_state_one_confidence_scale_and_the_default_threshold() -> None:
    for name in REVIEWER_AGENTS:
        scale = section(AGENTS[name].body, "Confidence (0-100)")
        bands = re.findall(r"^- (\d+)-(\d+):", scale, re.M)
        numbers = [(int(low), int(high)) for low, high in bands]
        assert numbers[0][0] == 0 and numbers[-1][1] == 100
        assert all(high + 1 == low for (_, high), (low, _) in itertools.pairwise(numbers))
        assert "(80 when none is given)" in scale


def test_fixer_output_instructions_match_the_contract() -> None:
    output = section(AGENTS[FIXER_AGENT].body, "Output")
    bullets = bullet_fields(output)
    assert set(bullets.top) == fields(FixerOutput)
    assert set(bullets.nested) == fields(FixAttempt)
    assert_literals_listed(FixerOutput, {"status"}, bullets.top)
    assert_literals_listed(FixAttempt, {"status"}, bullets.nested)
    FixerOutput.model_validate(example_document(output))
    assert_error_example(output)


def test_verifier_output_instructions_match_the_contract() -> None:
    output = section(AGENTS[VERIFIER_AGENT].body, "Output")
    bullets = bullet_fields(output)
    lines = bullets.nested
    assert set(bullets.top) == fields(VerifierOutput)
    assert set(lines) == fields(VerificationResult)
    assert inline_keys(lines["accuracy_check"]) == fields(AccuracyCheck)
    assert inline_keys(lines["rule_compliance_check"]) == fields(RuleComplianceCheck)
    assert inline_keys(lines["quality_assessment"]) == fields(QualityAssessment) | fields(MissingIssue)
    assert_literals_listed(VerifierOutput, {"status"}, bullets.top)
    assert_literals_listed(AccuracyCheck, {"accuracy_status"}, {"accuracy_status": lines["accuracy_check"]})
    assert_literals_listed(
        RuleComplianceCheck, {"compliance_status"}, {"compliance_status": lines["rule_compliance_check"]}
    )
    assert_literals_listed(
        QualityAssessment, {"quality_level"}, {"quality_level": lines["quality_assessment"]}
    )
    assert_literals_listed(
        MissingIssue, {"suggested_severity"}, {"suggested_severity": lines["quality_assessment"]}
    )
    VerifierOutput.model_validate(example_document(output))
    assert_error_example(output)
