"""Properties of the engine over whole runs of the bugfix and review workflows, with agents answering at
random (valid, invalid, failed or not at all), random confidence scores, test outcomes and verifications,
and random answers to questions: phases run in order and all end, the run's status never beats its phases
(nor a stop decision), no phase faults, and every run ends within a bounded number of `next` calls."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from helpers_review import issue, reviewer_doc, verifier_doc
from helpers_runs import FakeClock, git, read_events
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from workflows.bugfix_helpers import (
    agents_of,
    design,
    implementer_fix,
    implementer_test,
    root_cause,
    write_calc_project,
)

from fixloop.contracts.bugfix import ALL_CATEGORIES, categories_for
from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.runs import creation, lifecycle
from fixloop.runs.phasebook import STATUS_RANK, final_status
from fixloop.workflows import driver, intake, work

MAX_NEXT = 80
FAULTS = {"INTERNAL_ERROR", "STEP_LIMIT", "UNKNOWN_WORK", "WORKFLOW_NOT_AVAILABLE"}
OUTCOMES = ("failed", "passed", "not_run", "error")
# Mostly valid answers, so that runs get far; each other kind often enough to show up in every run.
ANSWER_KINDS = ("valid",) * 7 + ("invalid", "failed", "silent")


@contextmanager
def project() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        git(root, "init", "-q", "-b", "main")
        write_calc_project(root)
        yield root


class World:
    """What the model, the user and the engine's work do in one run, all drawn by hypothesis."""

    def __init__(self, data: st.DataObject, root: Path, stack: str) -> None:
        self.data = data
        self.root = root
        self.stack = stack
        self.clock = FakeClock(step=0.01)
        self.answers = 0
        self.red = False  # the engine accepted the implementer's red test

    # ---- engine work ------------------------------------------------------------------------------

    def tests(self, root: Path, state: dict[str, Any], params: dict[str, Any], clock: Any) -> dict[str, Any]:
        failing = self.data.draw(st.integers(0, 2), label="failures")
        failures = [
            {"runner": "pytest", "test_id": f"tests/test_calc.py::test_{n}", "kind": "test", "message": "x",
             "file": "tests/test_calc.py", "line": n + 1, "details": "E x", "suite": None}
            for n in range(failing)
        ]  # fmt: skip
        # Mostly what the implementer hopes for (a red test fails, the fix passes), any outcome at times.
        likely = {"red": ("failed",) * 3, "green": ("passed",) * 3}.get(str(params.get("purpose")), ())
        outcomes = [
            {"test": test, "outcome": self.data.draw(st.sampled_from(likely + OUTCOMES), label="outcome")}
            for test in params.get("tests") or []
        ]
        return {
            "purpose": params.get("purpose"),
            "status": "test_failed" if failures else "test_passed",
            "reason": None,
            "command": "pytest",
            "exit_code": 1 if failures else 0,
            "output_file": "out.log",
            "failures": failures,
            "outcomes": outcomes,
        }

    def verification(self, root: Path, state: dict[str, Any], params: dict[str, Any], clock: Any) -> Any:
        passed = self.data.draw(st.booleans(), label="verification passes")
        step = {"status": "passed" if passed else "failed", "duration_ms": 1, "exit_code": 0 if passed else 1}
        return {"tests": step, "lint": step, "typecheck": step, "status": step["status"], "passed": passed}

    # ---- agents -----------------------------------------------------------------------------------

    def document(self, agent: str) -> dict[str, Any]:
        draw = self.data.draw
        if agent == "failure-analyst":
            pool = (
                ALL_CATEGORIES
                if draw(st.integers(0, 4), label="any category") == 0
                else categories_for(self.stack)
            )
            category = draw(st.sampled_from(pool))
            return {
                "status": "success",
                "agent": agent,
                "failures": [{"test_id": "t", "category": category, "summary": "s"}],
            }
        if agent == "root-cause-analyst":
            scores = [draw(st.integers(0, 100), label=name) for name in ("clarity", "specificity", "context")]
            return root_cause(*scores, file=draw(st.sampled_from(["calc.py", "missing.py", None])))
        if agent == "fix-designer":
            return design()
        if agent == "implementer":
            fix_now = draw(st.booleans(), label="stage fix") if self.red else not draw(st.integers(0, 4))
            return implementer_fix() if fix_now else implementer_test()
        if agent in REVIEWER_AGENTS:
            count = draw(st.integers(0, 2), label="issues")
            found = [
                issue(f"X-{n}", n + 1, f"problem {n}", file="calc.py", auto_fixable=draw(st.booleans()))
                for n in range(count)
            ]
            return reviewer_doc(agent, found)
        if agent == "review-verifier":
            return verifier_doc(draw(st.integers(0, 100), label="quality"))
        return {"status": "success", "agent": agent, "results": [], "files_modified": []}

    def answer(self, agent: str) -> None:
        for _ in range(4):
            kind = self.data.draw(st.sampled_from(ANSWER_KINDS), label=agent)
            if kind == "silent":
                return
            if kind == "valid":
                text = json.dumps(self.document(agent))
            elif kind == "invalid":
                text = self.data.draw(
                    st.sampled_from(["no JSON", json.dumps({"status": "success", "agent": agent, "x": 1})])
                )
            else:
                error = {
                    "code": "TIMEOUT",
                    "message": "gave up",
                    "recoverable": self.data.draw(st.booleans()),
                }
                text = json.dumps({"status": "failed", "agent": agent, "error": error})
            path = self.root / ".claude" / "answers" / f"{self.answers:04d}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            self.answers += 1
            answer = intake.record_answer(
                self.root, self.run_id, str(path.relative_to(self.root)), agent, None, self.clock
            )
            if answer.get("continue"):
                self.red = True  # sent on with more to do: the agent answers again
            elif not answer.get("retry"):
                return

    def drive(self, run_id: str) -> tuple[int, dict[str, Any]]:
        self.run_id = run_id
        with mock.patch.dict(work.PERFORMERS, {"tests": self.tests, "verification": self.verification}):
            for calls in range(1, MAX_NEXT + 1):
                action = driver.next_action(self.root, run_id, self.clock)
                if action["action"] == "stop":
                    return calls, action
                if action["action"] == "ask_user":
                    labels = [option["label"] for option in action["options"]]
                    if self.data.draw(st.booleans(), label="take the default"):
                        driver.answer(self.root, run_id, None, True, self.clock)
                    else:
                        driver.answer(
                            self.root, run_id, self.data.draw(st.sampled_from(labels)), False, self.clock
                        )
                    continue
                for agent in agents_of(action):
                    self.answer(agent)
        raise AssertionError(f"run {run_id} did not end within {MAX_NEXT} next calls")


def check_run(root: Path, run_id: str, calls: int, stop: dict[str, Any]) -> None:
    state = lifecycle.load_run(root, run_id)
    assert calls <= MAX_NEXT and state["ended_at_ms"] is not None and stop["status"] == state["status"]
    assert state["open_phases"] == {}
    numbers = [int(str(result["phase"])[6:]) for result in state["phase_results"]]
    assert numbers == sorted(set(numbers)) and set(numbers) <= set(state["phases"])
    statuses = {str(result["status"]) for result in state["phase_results"]}
    final = str(state["status"])
    assert STATUS_RANK[final] <= STATUS_RANK[final_status(state)]
    if "failed" in statuses:
        assert final == "failed"
    events = read_events(state["logging"]["log_files"]["jsonl"])
    assert not [event for event in events if event["type"] == "ERROR" and event["code"] in FAULTS], events
    stopped = any(event["type"] == "CONFIDENCE_DECISION" and event["decision"] == "stop" for event in events)
    said_stop = any(
        item.get("context") == "low_confidence" and item.get("user_response") == "stop"
        for item in (state.get("flow") or {}).get("interactions") or []
    )
    if stopped or said_stop:
        assert final in ("failed", "user_cancelled"), final
    if final == "success":
        assert statuses <= {"success", "partial", "skipped"}


SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@SETTINGS
@given(
    data=st.data(),
    stack=st.sampled_from(["backend", "frontend", "e2e"]),
    phase=st.sampled_from(["all", "all", "0,1,2", "3,4", "4,5"]),
    dry_run=st.booleans(),
    description=st.sampled_from(["", "test_divide fails", "it is slow"]),
    config=st.fixed_dictionaries(
        {
            "questions": st.sampled_from(["default", "ask"]),
            "on_low_confidence": st.sampled_from(["continue", "stop"]),
            "max_review_iterations": st.integers(1, 2),
        }
    ),
)
def test_bugfix_runs_end_consistently(
    data: st.DataObject, stack: str, phase: str, dry_run: bool, description: str, config: dict[str, Any]
) -> None:
    with project() as root:
        world = World(data, root, stack)
        (root / ".claude").mkdir()
        (root / ".claude" / "fixloop.json").write_text(json.dumps({"test_command": "pytest", **config}))
        started = creation.start_run(
            "bugfix", root=root, stack=stack, phase=phase, dry_run=dry_run, free_text=description,
            claude_session_id="", clock=world.clock,
        )  # fmt: skip
        run_id = started["state"]["run_id"]
        calls, stop = world.drive(run_id)
        check_run(root, run_id, calls, stop)


@SETTINGS
@given(
    data=st.data(),
    dry_run=st.booleans(),
    config=st.fixed_dictionaries(
        {
            "questions": st.sampled_from(["default", "ask"]),
            "use_verifier": st.booleans(),
            "max_review_iterations": st.integers(1, 3),
            "min_required_agents": st.integers(1, 6),
        }
    ),
)
def test_review_runs_end_consistently(data: st.DataObject, dry_run: bool, config: dict[str, Any]) -> None:
    with project() as root:
        world = World(data, root, "mixed")
        (root / ".claude").mkdir()
        (root / ".claude" / "fixloop.json").write_text(json.dumps({"test_command": "pytest", **config}))
        started = creation.start_run(
            "review",
            root=root,
            dry_run=dry_run,
            changed_files=["calc.py"],
            claude_session_id="",
            clock=world.clock,
        )
        run_id = started["state"]["run_id"]
        calls, stop = world.drive(run_id)
        check_run(root, run_id, calls, stop)
