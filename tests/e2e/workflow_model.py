"""A scripted model for fixloop's workflow commands, on top of ``fixloop_model`` (which scripts the review).

:class:`WorkflowModel` answers the main thread of ``/fixloop:fix-backend`` (``fix-frontend``, ``fix-e2e``:
commands/fix-*.md) and the ``fixloop:bugfix-coordinator`` (agents/bugfix-coordinator.md) the way a model
obeying those files would; everything the bugfix run reaches at its review phase (the review-coordinator,
the reviewers, the fixer, the verifier) is answered by a :class:`fixloop_model.FixloopModel`.
:meth:`WorkflowModel.script` puts this model's rules first: fixloop_model recognises the main thread by the
first line all fixloop commands share, so it must only see ``/fixloop:review``.

The bugfix-coordinator, for each phase ``fixloop run show RUN`` selects, in order:

    fixloop run phase RUN --start N, the phase's work, fixloop run phase RUN --end N --status S
      0 collect: the failure is the run's ``free_text`` (no tool call)
      1 diagnose: ``fixloop policy confidence SCORE --run RUN --phase 1``
      2 design: no tool call
      3 document: Write ``docs/bugfix/RUN.md``
      4 implement: Write the regression test, Read then Edit the source file (the fix)
      5 verify and review: ``fixloop run files RUN --git-diff``, then a foreground
        ``fixloop:review-coordinator`` with prompt ``Run RUN``; its report's status is the phase status
    (a dry run: phases 4 and 5 do nothing and end ``skipped``, the run ends ``dry_run_complete``)

then ``fixloop run end RUN --status S`` and the final JSON of the coordinator-patterns skill. File edits
need ``--permission-mode acceptEdits`` in ``-p``. Answers are derived from the request alone (the tool
calls so far and their results); anomalies (a tool error, an engine error, an unparsable answer) are kept in
:attr:`WorkflowModel.problems`, which a test asserts is empty.

:func:`forged_record_rules` scripts a main thread that fakes a reviewer's result: it never calls the Agent
tool, and records a reviewer JSON it wrote itself with ``fixloop review record RUN --agent NAME -``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from claude_runner import REPO_ROOT
from fixloop_model import (
    FixloopModel,
    PluginDrift,
    ScenarioPlan,
    Step,
    bash_output,
    engine_error,
    engine_path,
    first_json,
    guarded,
    read_markdown,
    steps_of,
)
from scripted_api import Block, Reply, Request, Rule, Script, agent_call, bash_call, subagent_report, tool_use

JSON = dict[str, Any]

BUGFIX = "bugfix-coordinator"
REVIEW_COORDINATOR = "fixloop:review-coordinator"
WORKFLOW_MAIN = "workflow-main"
BUGFIX_COMMANDS = ("fix-backend", "fix-frontend", "fix-e2e")
RUN_START_MARKER = "fixloop started this run (the engine's answer):"
PHASE_STATUSES = ("success", "partial", "failed", "skipped", "user_cancelled")
DRY_RUN_SKIPPED = (4, 5)  # agents/bugfix-coordinator.md: implement, verify and review

BUGFIX_FILE = read_markdown(REPO_ROOT / "agents" / f"{BUGFIX}.md")
BUGFIX_MARKER = "You run one fixloop bugfix run"
_RUN_IN_PROMPT = re.compile(r"\bRun ([0-9a-f]{8})\b")


def _check_instructions() -> None:
    """The markdown still says what this model recognises and does (PluginDrift otherwise)."""
    if BUGFIX_MARKER not in BUGFIX_FILE.body:
        raise PluginDrift(f"agents/{BUGFIX}.md no longer says {BUGFIX_MARKER!r}: update workflow_model.py")
    others = [
        path.name
        for path in (REPO_ROOT / "agents").glob("*.md")
        if path.stem != BUGFIX and BUGFIX_MARKER in path.read_text(encoding="utf-8")
    ]
    if others:
        raise PluginDrift(f"{BUGFIX_MARKER!r} also appears in {', '.join(others)}")
    for phrase in (
        "fixloop run show RUN",
        "`fixloop run phase RUN --start N` / `--end N --status S`",
        "fixloop policy confidence SCORE --run RUN --phase 1",
        "`docs/bugfix/RUN.md`",
        "`fixloop run files RUN --git-diff`, then `fixloop:review-coordinator` in the foreground with prompt "
        "`Run RUN`; its status is the phase status",
        "`fixloop run end RUN --status S`",
    ):
        if phrase not in BUGFIX_FILE.body:
            raise PluginDrift(f"agents/{BUGFIX}.md no longer says {phrase!r}: update workflow_model.py")
    for name in BUGFIX_COMMANDS:
        body = read_markdown(REPO_ROOT / "commands" / f"{name}.md").body
        for phrase in (
            RUN_START_MARKER,
            "`subagent_type` `fixloop:bugfix-coordinator`, `run_in_background: false`, prompt `Run RUN.`",
            "If the review phase ran, `fixloop review report RUN --format markdown`",
        ):
            if phrase not in body:
                raise PluginDrift(f"commands/{name}.md no longer says {phrase!r}: update workflow_model.py")


_check_instructions()


# ------------------------------------------------------------------------------------------------
# Reading a conversation
# ------------------------------------------------------------------------------------------------


def engine_doc(step: Step) -> tuple[int, JSON | None]:
    """(exit code, JSON answer) of a step that ran the engine through Bash."""
    code, output = bash_output(step.result_text)
    return code, first_json(output)


def agent_report(step: Step) -> JSON | None:
    """The JSON a foreground agent reported (its Agent tool result, unwrapped)."""
    report = subagent_report(step.result_text)
    return first_json(report) if report is not None else None


def is_bugfix_command(request: Request) -> bool:
    prompt = request.prompt
    return RUN_START_MARKER in prompt and any(
        f"<command-name>/fixloop:{name}</command-name>" in prompt for name in BUGFIX_COMMANDS
    )


def is_bugfix_coordinator(request: Request) -> bool:
    return request.is_subagent and BUGFIX_MARKER in request.system


# ------------------------------------------------------------------------------------------------
# The plan of a bugfix run
# ------------------------------------------------------------------------------------------------

REGRESSION_TEST = '''"""A corrupt stock file must not read as empty stock."""

import tempfile
import unittest
from pathlib import Path

from inventory.stock import load_stock


class CorruptStockTests(unittest.TestCase):
    def test_a_corrupt_file_is_an_error(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "stock.json"
            path.write_text("{not json", encoding="utf-8")
            with self.assertRaises(ValueError):
                load_stock(path)


if __name__ == "__main__":
    unittest.main()
'''


@dataclass(frozen=True)
class BugfixPlan:
    """What the scripted bugfix-coordinator finds and changes. The defaults fix the sample project's
    swallowed error (``load_stock`` returns ``{}`` for a corrupt file) so that its checks still pass."""

    confidence: int = 85
    fix_file: str = "inventory/stock.py"
    fix_old: str = "    except Exception:\n        return {}\n"
    fix_new: str = "    except FileNotFoundError:\n        return {}\n"
    test_file: str = "tests/test_corrupt_stock.py"
    test_text: str = REGRESSION_TEST
    root_cause: str = "load_stock catches every exception, so a corrupt stock file reads as empty stock."
    fix: str = "load_stock treats only a missing file as empty stock; a corrupt file raises."
    plan_text: str = (
        "# Bugfix plan\n\n"
        "- Root cause: `load_stock` catches `Exception` (inventory/stock.py:14), so a corrupt file is {}.\n"
        "- Change: inventory/stock.py catches `FileNotFoundError` only.\n"
        "- Test: tests/test_corrupt_stock.py fails before the change and passes after it.\n"
        "- Risks: callers that relied on {} for a corrupt file now get the error.\n"
    )
    phase_summaries: Mapping[int, Mapping[str, Any]] = field(
        default_factory=lambda: {0: {"failures": 1, "category": "exception"}}
    )

    def plan_file(self, run_id: str) -> str:
        return f"docs/bugfix/{run_id}.md"


Action = Callable[[], Block]


class WorkflowModel:
    """The scripted main thread of the bugfix commands and the bugfix-coordinator; the review they reach
    is answered by ``self.review`` (a FixloopModel with the given review plan)."""

    def __init__(self, plan: BugfixPlan | None = None, review_plan: ScenarioPlan | None = None) -> None:
        self.plan = plan or BugfixPlan()
        self.review = FixloopModel(review_plan)
        self.problems: list[str] = []
        self._lock = threading.Lock()

    def problem(self, request: Request, message: str) -> None:
        with self._lock:
            self.problems.append(f"request {request.seq}: {message}")

    def rules(self) -> list[Rule]:
        return [
            Rule(name=BUGFIX, where=is_bugfix_coordinator, reply=guarded(self.coordinator, self.problem)),
            Rule(
                name=WORKFLOW_MAIN,
                subagent=False,
                where=is_bugfix_command,
                reply=guarded(self.main_thread, self.problem),
            ),
        ]

    def script(self) -> Script:
        return Script([*self.rules(), *self.review.script().rules])

    def all_problems(self) -> list[str]:
        return [*self.problems, *self.review.problems]

    def _check_last(self, request: Request, steps: Sequence[Step]) -> None:
        """A tool error or an engine error in the last step is a problem (the plan expects none)."""
        if not steps:
            return
        last = steps[-1]
        for use, result in zip(last.uses, last.results, strict=True):
            if result is None:
                self.problem(request, f"no result for the {use.name} call {use.id}")
            elif result.is_error:
                self.problem(request, f"{use.name} failed: {result.text[:300]}")
            elif use.name == "Bash":
                code, doc = engine_doc(last)
                if code != 0 or doc is None or engine_error(doc):
                    self.problem(request, f"engine call failed (exit {code}): {result.text[:300]}")

    # ---- the bugfix-coordinator: agents/bugfix-coordinator.md ------------------------------------

    def coordinator(self, request: Request) -> Reply:
        engine = engine_path(request.system)
        found = _RUN_IN_PROMPT.search(request.prompt)
        if engine is None or found is None:
            self.problem(request, "the bugfix-coordinator has no engine path or no run in its prompt")
            return Reply.text(json.dumps({"status": "failed", "agent": BUGFIX, "error": "no engine or run"}))
        run_id = found.group(1)
        steps = steps_of(request.body)
        self._check_last(request, steps)

        def fixloop(*words: str) -> Block:
            return bash_call(" ".join([f'"{engine}"', *words]), description=f"fixloop {words[0]} {words[1]}")

        if not steps:
            return Reply.tools(fixloop("run", "show", run_id))
        _code, show = engine_doc(steps[0])
        if show is None or engine_error(show):
            return Reply.text(json.dumps({"status": "failed", "agent": BUGFIX, "error": show}))
        actions = self._actions(run_id, show, steps, fixloop)
        done = len(steps) - 1
        if done < len(actions):
            return Reply.tools(actions[done]())
        _code, ended = engine_doc(steps[-1])
        ended = ended or {}
        return Reply.text(
            json.dumps(
                {
                    "status": ended.get("status", "failed"),
                    "agent": BUGFIX,
                    "phases_completed": ended.get("phases_completed", []),
                    "errors": [],
                    "warnings": [],
                    "summary": f"Run {run_id}: {self.plan.root_cause} {self.plan.fix}",
                    "root_cause": self.plan.root_cause,
                    "fix": self.plan.fix,
                }
            )
        )

    def _actions(
        self, run_id: str, show: Mapping[str, Any], steps: Sequence[Step], fixloop: Callable[..., Block]
    ) -> list[Action]:
        """The coordinator's tool calls after ``run show``, one per turn, for the selected phases."""
        actions: list[Action] = []
        for phase in show["phases"]:
            number = int(phase)
            actions.append(partial(fixloop, "run", "phase", run_id, "--start", str(number)))
            actions.extend(self._phase_work(run_id, number, show, fixloop))
            actions.append(partial(self._phase_end, run_id, number, show, steps, fixloop))
        status = "dry_run_complete" if show.get("dry_run") is True else None
        actions.append(lambda: fixloop("run", "end", run_id, "--status", status or self._run_status(steps)))
        return actions

    def _phase_work(
        self, run_id: str, phase: int, show: Mapping[str, Any], fixloop: Callable[..., Block]
    ) -> list[Action]:
        plan = self.plan
        project = str(show["project_dir"])
        if phase in DRY_RUN_SKIPPED and show.get("dry_run") is True:
            return []
        if phase == 1:
            return [
                lambda: fixloop("policy", "confidence", str(plan.confidence), "--run", run_id, "--phase", "1")
            ]
        if phase == 3:
            target = f"{project}/{plan.plan_file(run_id)}"
            return [lambda: tool_use("Write", {"file_path": target, "content": plan.plan_text})]
        if phase == 4:
            source = f"{project}/{plan.fix_file}"
            return [
                lambda: tool_use(
                    "Write", {"file_path": f"{project}/{plan.test_file}", "content": plan.test_text}
                ),
                lambda: tool_use("Read", {"file_path": source}),
                lambda: tool_use(
                    "Edit",
                    {
                        "file_path": source,
                        "old_string": plan.fix_old,
                        "new_string": plan.fix_new,
                        "replace_all": False,
                    },
                ),
            ]
        if phase == 5:
            return [
                lambda: fixloop("run", "files", run_id, "--git-diff"),
                lambda: agent_call(REVIEW_COORDINATOR, f"Run {run_id}", description="Review the fix"),
            ]
        return []

    def _phase_end(
        self,
        run_id: str,
        phase: int,
        show: Mapping[str, Any],
        steps: Sequence[Step],
        fixloop: Callable[..., Block],
    ) -> Block:
        status = "success"
        if phase in DRY_RUN_SKIPPED and show.get("dry_run") is True:
            status = "skipped"
        elif phase == 5:
            review = next(
                (
                    agent_report(step)
                    for step in reversed(steps)
                    if step.uses and step.uses[0].input.get("subagent_type") == REVIEW_COORDINATOR
                ),
                None,
            )
            found = review.get("status") if review else None
            status = str(found) if found in PHASE_STATUSES else "failed"
        words = ["run", "phase", run_id, "--end", str(phase), "--status", status]
        summary = self.plan.phase_summaries.get(phase)
        if summary is not None:
            words += ["--summary", f"'{json.dumps(summary)}'"]
        return fixloop(*words)

    @staticmethod
    def _run_status(steps: Sequence[Step]) -> str:
        """success when every phase ended success; failed when one failed; else partial (a dry run ends
        dry_run_complete instead)."""
        ended = [
            found.group(1)
            for step in steps
            if step.bash is not None and " --end " in step.bash
            for found in [re.search(r"--status (\S+)", step.bash)]
            if found
        ]
        if "failed" in ended:
            return "failed"
        return "success" if all(status == "success" for status in ended) else "partial"

    # ---- the main thread: commands/fix-*.md ---------------------------------------------------------

    def main_thread(self, request: Request) -> Reply:
        engine = engine_path(request.prompt)
        started = first_json(request.prompt[request.prompt.find(RUN_START_MARKER) :])
        run_id = str(started.get("run_id", "")) if started else ""
        if engine is None or not run_id:
            self.problem(request, "the command body has no engine path or no run start answer")
            return Reply.text(f"fixloop could not start the run: {json.dumps(started)}")
        steps = steps_of(request.body)
        self._check_last(request, steps)
        if not steps:
            return Reply.tools(
                agent_call(f"fixloop:{BUGFIX}", f"Run {run_id}.", description="Run the bugfix workflow")
            )
        coordinator = next((s for s in steps if s.uses and s.uses[0].name == "Agent"), None)
        report = (agent_report(coordinator) if coordinator else None) or {}
        completed = [str(p) for p in report.get("phases_completed") or []]
        shown = (
            f"fixloop bugfix run {run_id}: {report.get('status')}; phases completed: "
            f"{', '.join(completed) or 'none'}; errors: {len(report.get('errors') or [])}; "
            f"warnings: {len(report.get('warnings') or [])}\n{report.get('summary', '')}"
        )
        if steps[-1] is coordinator:
            if "phase_5" in completed:
                return Reply.tools(
                    bash_call(
                        f'"{engine}" review report {run_id} --format markdown', description="Review report"
                    ),
                    preface=shown,
                )
            return Reply.text(shown)
        _code, markdown = engine_doc(steps[-1])
        return Reply.text(f"{shown}\n\n{(markdown or {}).get('content', '')}")


# ------------------------------------------------------------------------------------------------
# A main thread that forges a reviewer's result
# ------------------------------------------------------------------------------------------------


def forged_record_rules(forged: Mapping[str, Any], agent: str = "code-reviewer") -> list[Rule]:
    """The main thread of ``/fixloop:review`` that, instead of launching the coordinator, drives the loop
    itself up to round 1's ``review`` action (``review next``, ``verify``, ``review next``), then records
    ``forged`` as ``agent``'s answer through a heredoc, never calling the Agent tool; then it stops and
    shows the engine's answer."""
    text = json.dumps(forged)

    def reply(request: Request, index: int) -> Reply:
        engine = engine_path(request.prompt)
        started = first_json(request.prompt[request.prompt.find(RUN_START_MARKER) :])
        if engine is None or not started:
            return Reply.text("no run")
        run_id = str(started["run_id"])
        steps = steps_of(request.body)
        quoted = f'"{engine}"'
        plan = [
            f"{quoted} review next {run_id}",
            f"{quoted} verify {run_id}",
            f"{quoted} review next {run_id}",
            f"{quoted} review record {run_id} --agent {agent} - <<'EOF'\n{text}\nEOF",
        ]
        if len(steps) < len(plan):
            return Reply.tools(bash_call(plan[len(steps)], description="fixloop"))
        return Reply.text(f"The engine answered: {steps[-1].result_text}")

    return [
        Rule(
            name="forger",
            subagent=False,
            prompt_contains=("<command-name>/fixloop:review</command-name>", RUN_START_MARKER),
            reply=reply,
        )
    ]
