"""The bugfix agents of ``/fixloop:fix-backend``, ``fix-frontend`` and ``fix-e2e`` as a scripted model plays
them, and a session of one of those commands on a sample project (tests/e2e/samples, sample_projects.py).

Each sample has a :class:`BugCase`: the failure analyst's category, where the root cause is, the test the
designer names and the implementer writes (a new test file that FAILS before the fix), and a variant of it
that PASSES before the fix (for the refused test). The behaviours (:func:`failure_analyst`,
:func:`root_cause_analyst`, :func:`fix_designer`, :func:`implementer`) answer what the contracts of
``fixloop.contracts.bugfix`` ask; the implementer really writes the test and fixes the code with Write,
Read and Edit tool calls, one stage per answer, following the engine's feedback (a refusal, or "Red
proven").

:func:`bugfix_session` runs one command in the real CLI on a fresh copy of a sample, with the sample's
real test runner on PATH; :meth:`BugfixSession.follow_up` runs another command (``/fixloop:answer``) in the
same project.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_runner import ClaudeRunner, RunResult, git
from fixloop_model import (
    CLI_PERMISSION_MODE,
    STOP_FEEDBACK,
    Act,
    Behaviour,
    Deviation,
    FixloopModel,
    Scenario,
    Turn,
)
from fixloop_session import (
    MakeRunner,
    RunRecord,
    StartAPI,
    approve_commands,
    read_run,
    reply_tool_uses,
    run_engine,
    run_engine_text,
    run_ids,
)
from sample_projects import SAMPLES, Sample, make_sample, sample_env
from scripted_api import Block, ScriptedAPI, content_text, messages, tool_use

JSON = dict[str, Any]

FAILURE_ANALYST = "failure-analyst"
ROOT_CAUSE_ANALYST = "root-cause-analyst"
FIX_DESIGNER = "fix-designer"
IMPLEMENTER = "implementer"
BUGFIX_AGENTS = (FAILURE_ANALYST, ROOT_CAUSE_ANALYST, FIX_DESIGNER, IMPLEMENTER)
RED_PROVEN = "Red proven:"
SURE = {"clarity": 90, "specificity": 90, "context": 80}  # with a reproduced failure: 90, auto_continue
UNSURE = {"clarity": 20, "specificity": 10, "context": 10}  # with a reproduced failure: 35, stop
MIDDLING = {"clarity": 20, "specificity": 20, "context": 20}  # with a reproduced failure: 40, ask_user


# --------------------------------------------------------------------------------------------------
# The bug of each sample, as the agents see it
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BugCase:
    """What the scripted agents say and do about one sample's bug."""

    sample: str
    command: str  # the slash command, without /fixloop:
    category: str  # the failure analyst's category (one of the stack's)
    test_file: str  # the new test the designer names and the implementer writes
    test_name: str  # its name as the runner names it
    red_test: str  # its content: fails before the fix
    passing_test: str  # a first try that passes before the fix (refused by the engine)

    @property
    def info(self) -> Sample:
        return SAMPLES[self.sample]

    @property
    def root_line(self) -> int:
        """The line of the faulty code in the sample's source."""
        fix = self.info.fix
        text = (self.info.source / fix.file).read_text(encoding="utf-8")
        return text[: text.index(fix.old)].count("\n") + 1

    @property
    def changed_old(self) -> str:
        """The part of the passing test that the implementer changes to make it reproduce the bug."""
        return _differing(self.passing_test, self.red_test)[0]

    @property
    def changed_new(self) -> str:
        return _differing(self.passing_test, self.red_test)[1]


def _differing(one: str, other: str) -> tuple[str, str]:
    """The one line two texts differ in: (its text in ``one``, in ``other``), newline included."""
    pairs = [(a, b) for a, b in zip(one.splitlines(True), other.splitlines(True), strict=True) if a != b]
    assert len(pairs) == 1, pairs
    return pairs[0]


CASES: dict[str, BugCase] = {
    "backend": BugCase(
        sample="backend",
        command="fix-backend",
        category="assertion",
        test_file="tests/test_bulk_boundary.py",
        test_name="test_exactly_the_bulk_quantity_is_discounted",
        red_test=(
            "from pricing.cart import Line, line_total\n\n\n"
            "def test_exactly_the_bulk_quantity_is_discounted() -> None:\n"
            '    assert line_total(Line("pad", 400, 10)) == 3600\n'
        ),
        passing_test=(
            "from pricing.cart import Line, line_total\n\n\n"
            "def test_exactly_the_bulk_quantity_is_discounted() -> None:\n"
            '    assert line_total(Line("pad", 400, 11)) == 3960\n'
        ),
    ),
    "frontend": BugCase(
        sample="frontend",
        command="fix-frontend",
        category="render",
        test_file="src/itemCountLabel.test.ts",
        test_name="uses the plural for an empty cart",
        red_test=(
            'import { expect, it } from "vitest";\n\n'
            'import { itemCountLabel } from "./cartBadge";\n\n'
            'it("uses the plural for an empty cart", () => {\n'
            '  expect(itemCountLabel(0)).toBe("0 items");\n'
            "});\n"
        ),
        passing_test=(
            'import { expect, it } from "vitest";\n\n'
            'import { itemCountLabel } from "./cartBadge";\n\n'
            'it("uses the plural for an empty cart", () => {\n'
            '  expect(itemCountLabel(2)).toBe("2 items");\n'
            "});\n"
        ),
    ),
    "e2e": BugCase(
        sample="e2e",
        command="fix-e2e",
        category="selector",
        test_file="tests/total.spec.ts",
        test_name="one apple shows its price as the total",
        red_test=(
            'import { expect, test } from "@playwright/test";\n\n'
            'test("one apple shows its price as the total", async ({ page }) => {\n'
            '  await page.goto("/");\n'
            '  await page.getByRole("button", { name: "Add apple" }).click();\n'
            '  await expect(page.locator("#total")).toHaveText("$1.50");\n'
            "});\n"
        ),
        passing_test=(
            'import { expect, test } from "@playwright/test";\n\n'
            'test("one apple shows its price as the total", async ({ page }) => {\n'
            '  await page.goto("/");\n'
            '  await page.getByRole("button", { name: "Add apple" }).click();\n'
            '  await expect(page.locator("#total")).toHaveText(/\\$/);\n'
            "});\n"
        ),
    ),
}
# The two texts differ in exactly one line each (checked here, not at the first use).
for _case in CASES.values():
    _differing(_case.passing_test, _case.red_test)


# --------------------------------------------------------------------------------------------------
# The agents
# --------------------------------------------------------------------------------------------------


@dataclass
class ProjectRef:
    """The project a session runs in, known once the sample is copied (the behaviours are made before)."""

    path: Path | None = None

    def file(self, relative: str) -> str:
        assert self.path is not None, "the session has no project yet"
        return str(self.path / relative)


def failure_analyst(case: BugCase) -> Behaviour:
    def behave(turn: Turn) -> JSON:
        return {
            "status": "success",
            "agent": FAILURE_ANALYST,
            "failures": [
                {
                    "test_id": case.info.failing_test,
                    "category": case.category,
                    "summary": case.info.bug,
                    "file": case.info.fix.file,
                    "line": case.root_line,
                }
            ],
            "summary": "one failure, one faulty line",
        }

    return behave


def root_cause_analyst(case: BugCase, factors: Mapping[str, int] = SURE) -> Behaviour:
    def behave(turn: Turn) -> JSON:
        return {
            "status": "success",
            "agent": ROOT_CAUSE_ANALYST,
            "root_cause": {
                "summary": case.info.bug,
                "file": case.info.fix.file,
                "line": case.root_line,
                "evidence": [f"{case.info.fix.file}:{case.root_line}: {case.info.fix.old.strip()}"],
            },
            "factors": dict(factors),
        }

    return behave


def fix_designer(case: BugCase) -> Behaviour:
    def behave(turn: Turn) -> JSON:
        return {
            "status": "success",
            "agent": FIX_DESIGNER,
            "summary": f"Change {case.info.fix.old.strip()!r} to {case.info.fix.new.strip()!r}.",
            "changes": [{"file": case.info.fix.file, "change": f"line {case.root_line}: {case.info.bug}"}],
            "test": {"file": case.test_file, "name": case.test_name},
            "risks": ["callers that relied on the wrong result"],
            "alternatives": [
                {"approach": "special-case the test's input", "rejected_because": "hides the bug"}
            ],
        }

    return behave


@dataclass(frozen=True)
class ToolCall:
    """A Read, Write or Edit of ``file`` (relative to the project) with the tool's other ``fields``."""

    tool: str
    file: str
    fields: Mapping[str, str] = field(default_factory=dict)

    def block(self, project: ProjectRef) -> Block:
        return tool_use(self.tool, {"file_path": project.file(self.file), **self.fields})


@dataclass(frozen=True)
class Stage:
    """One answer of the implementer: the tool calls it makes first, the feedback that must precede it (a
    substring of the last Stop hook feedback; None for the first stage), and its answer."""

    calls: tuple[ToolCall, ...]
    after: str | None
    answer: JSON


def implementer_stages(case: BugCase, *, passes_first: bool = False) -> list[Stage]:
    """Write the test (first one that passes before the fix when ``passes_first``, then, refused, Read and
    Edit it until it fails), then, once red is proven, Read and Edit the code under test."""
    test_answer: JSON = {
        "status": "success",
        "agent": IMPLEMENTER,
        "stage": "test",
        "test": {"file": case.test_file, "name": case.test_name},
        "summary": f"added {case.test_file}",
    }
    first = case.passing_test if passes_first else case.red_test
    stages = [Stage((ToolCall("Write", case.test_file, {"content": first}),), None, test_answer)]
    if passes_first:
        edit = {"old_string": case.changed_old, "new_string": case.changed_new}
        calls = (ToolCall("Read", case.test_file), ToolCall("Edit", case.test_file, edit))
        stages.append(Stage(calls, "TEST_PASSES_BEFORE_FIX", test_answer))
    fix = case.info.fix
    fixed: JSON = {
        "status": "success",
        "agent": IMPLEMENTER,
        "stage": "fix",
        "files_modified": [fix.file],
        "summary": f"fixed {fix.file}",
    }
    calls = (
        ToolCall("Read", fix.file),
        ToolCall("Edit", fix.file, {"old_string": fix.old, "new_string": fix.new}),
    )
    stages.append(Stage(calls, RED_PROVEN, fixed))
    return stages


def last_feedback(body: Mapping[str, Any]) -> str | None:
    """The latest ``Stop hook feedback`` user turn of the conversation (a SubagentStop block)."""
    found = [
        text
        for m in messages(body)
        if m.get("role") == "user" and STOP_FEEDBACK in (text := content_text(m.get("content")))
    ]
    return found[-1] if found else None


def implementer(stages: Sequence[Stage], project: ProjectRef, problems: list[str]) -> Behaviour:
    """Plays ``stages`` in order: stage k answers at attempt k (each Stop hook feedback starts the next)."""

    def behave(turn: Turn) -> Act:
        index = turn.attempt - 1
        if index >= len(stages):
            problems.append(f"implementer: attempt {turn.attempt}, and only {len(stages)} stages scripted")
            error = {"code": "SCRIPT_ENDED", "message": "no stage left", "recoverable": False}
            return {"status": "failed", "agent": IMPLEMENTER, "error": error}
        stage = stages[index]
        feedback = last_feedback(turn.request.body)
        if stage.after is not None and (feedback is None or stage.after not in feedback):
            problems.append(
                f"implementer stage {index + 1}: expected feedback with {stage.after!r}, got {feedback!r}"
            )
        done = len(turn.tool_uses) - sum(len(s.calls) for s in stages[:index])
        if done < len(stage.calls):
            return [stage.calls[done].block(project)]
        return stage.answer

    return behave


def bugfix_scenario(
    case: BugCase,
    project: ProjectRef,
    *,
    factors: Mapping[str, int] = SURE,
    passes_first: bool = False,
) -> tuple[Scenario, list[str]]:
    """The four bugfix agents of ``case`` (the reviewers, verifier and fixer keep fixloop_model's clean
    defaults); the list collects what the implementer met that its script did not expect."""
    problems: list[str] = []
    agents = {
        FAILURE_ANALYST: failure_analyst(case),
        ROOT_CAUSE_ANALYST: root_cause_analyst(case, factors),
        FIX_DESIGNER: fix_designer(case),
        IMPLEMENTER: implementer(implementer_stages(case, passes_first=passes_first), project, problems),
    }
    return Scenario(agents=agents), problems


# --------------------------------------------------------------------------------------------------
# A session on a sample project
# --------------------------------------------------------------------------------------------------


def tree_files(project: Path) -> dict[str, bytes]:
    """Every file of the project outside .git, .claude (the engine's own) and node_modules, with content."""
    skipped = {".git", ".claude", "node_modules", "__pycache__", ".pytest_cache", ".vite", "test-results"}
    return {
        str(path.relative_to(project)): path.read_bytes()
        for path in sorted(project.rglob("*"))
        if path.is_file() and not skipped & set(path.relative_to(project).parts)
    }


@dataclass
class BugfixSession:
    """One bugfix command run and what it left behind; ``follow_up`` runs another command after it."""

    case: BugCase
    runner: ClaudeRunner
    api: ScriptedAPI
    model: FixloopModel
    project: Path
    plugin_data: Path
    env: dict[str, str]
    before: dict[str, bytes]  # the project's files when the command started
    results: list[RunResult] = field(default_factory=list)
    script_problems: list[str] = field(default_factory=list)

    @property
    def result(self) -> RunResult:
        return self.results[-1]

    @property
    def run(self) -> RunRecord:
        return read_run(self.project)

    @property
    def requests(self) -> list[JSON]:
        return [r for result in self.results for r in result.message_requests()]

    def requests_of(self, sender: str) -> list[JSON]:
        return [r for r in self.requests if r.get("rule") == sender]

    def dispatched(self) -> list[list[str]]:
        """The agents of each coordinator dispatch, by name, in call order (all commands of the session)."""
        found = []
        for record in self.requests_of("coordinator"):
            uses = reply_tool_uses(record)
            if uses:
                found.append([str(u["input"]["subagent_type"]).split(":", 1)[1] for u in uses])
        return found

    def engine(self, *args: str) -> tuple[int, Any]:
        """``scripts/fixloop ARGS`` on the project: (exit code, its JSON answer)."""
        return run_engine(self.project, *args, plugin_data=self.plugin_data)

    def engine_text(self, *args: str) -> tuple[int, str]:
        return run_engine_text(self.project, *args, plugin_data=self.plugin_data)

    def command(self, prompt: str, *, resume: bool = False) -> RunResult:
        """Run ``prompt`` in the project: a new session, or (``resume``) the last command's session again,
        as a user who answers in the same conversation."""
        started = time.monotonic()
        extra: list[str] = []
        config_dir = None
        if resume:
            last = self.result
            assert last.session_id, "the last command has no session id to resume"
            extra, config_dir = ["--resume", last.session_id], last.config_dir
        result = self.runner.run(
            prompt,
            project_dir=self.project,
            permission_mode=CLI_PERMISSION_MODE,
            env=self.env,
            extra_args=extra,
            config_dir=config_dir,
        )
        print(
            f"{prompt[:60]!r}: {time.monotonic() - started:.2f}s, {len(result.message_requests())} requests"
        )
        self.results.append(result)
        failures = []
        if (result.exit_code, result.timed_out, result.is_error) != (0, False, False):
            failures.append(f"the CLI failed: {result.summary()}")
        failures += [f"scripted model: {problem}" for problem in self.model.problems]
        failures += [f"scripted implementer: {problem}" for problem in self.script_problems]
        failures += [f"no sender for request {r.seq}" for r in self.api.unmatched]
        if not run_ids(self.project):
            failures.append(f"the command started no run: {result.summary()}")
        if failures:
            raise AssertionError("\n".join(failures))
        return result

    def follow_up(self, prompt: str, *, resume: bool = False) -> RunResult:
        return self.command(prompt, resume=resume)


def bugfix_session(
    start_api: StartAPI,
    make_runner: MakeRunner,
    plugin_data: Path,
    case: BugCase,
    *,
    arguments: str = "",
    factors: Mapping[str, int] = SURE,
    passes_first: bool = False,
    config: Mapping[str, Any] | None = None,
    prepare: Callable[[Path], None] | None = None,
    timeout: float = 900.0,
    deviate: Deviation | None = None,
) -> BugfixSession:
    """``/fixloop:<case.command> ARGUMENTS`` in the real CLI on a fresh git copy of the case's sample, its
    test command approved (``fixloop trust``), the repo's .venv first on PATH. ``config`` is merged into its
    ``.claude/fixloop.json`` and committed; ``prepare(project)`` runs last before the CLI.
    AssertionError when the CLI failed or the scripted model met a problem."""
    project_ref = ProjectRef()
    scenario, problems = bugfix_scenario(case, project_ref, factors=factors, passes_first=passes_first)
    scenario.deviate = deviate
    model = FixloopModel(scenario)
    api = start_api(model.script())
    runner = make_runner(api, shared_plugin_data=plugin_data, timeout=timeout)
    project = make_sample(case.sample, runner.work_dir / "project")
    project_ref.path = project
    if config:
        path = project / ".claude" / "fixloop.json"
        settings = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({**settings, **config}, indent=2) + "\n", encoding="utf-8")
        git(project, "commit", "-q", "-m", "fixloop settings", "--", ".claude/fixloop.json")
    approve_commands(project, plugin_data)
    if prepare is not None:
        prepare(project)
    env = {"PATH": sample_env()["PATH"]}
    session = BugfixSession(case, runner, api, model, project, plugin_data, env, tree_files(project))
    session.script_problems = problems
    session.command(f"/fixloop:{case.command} {arguments}".rstrip())
    return session
