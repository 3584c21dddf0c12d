"""Properties of the engine over whole execute-plan runs, with random plans (sizes, tasks already done,
dependencies, now and then one that cannot be read), an implementer that answers at random (each task done
or failed, invalid, failed or not at all), checks that pass or fail, and random answers to questions: phases
run in order and all end, the run's status never beats its phases, no phase faults, every run ends within
a bounded number of `next` calls, and the plan file agrees with the statuses the run kept."""

from __future__ import annotations

import hashlib
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
from workflows.plan.plan_helpers import AGENT, agents_of

from fixloop.core.agent_names import REVIEWER_AGENTS
from fixloop.plans import parse, resume_point
from fixloop.runs import creation, lifecycle
from fixloop.runs.phasebook import STATUS_RANK, final_status
from fixloop.workflows import driver, intake, work
from fixloop.workflows.plan.statuses import FINISHED

MAX_NEXT = 80
FAULTS = {"INTERNAL_ERROR", "STEP_LIMIT", "UNKNOWN_WORK", "WORKFLOW_NOT_AVAILABLE"}
PLAN = "docs/plan.md"
# Mostly valid answers, so that runs get far; each other kind often enough to show up in every run.
ANSWER_KINDS = ("valid",) * 6 + ("invalid", "wrong tasks", "failed", "silent")


@st.composite
def plan_texts(draw: st.DrawFn) -> str:
    """A plan of 1-8 tasks, each creating its module, some done, some depending on earlier ones; now and
    then a line that makes it unreadable."""
    count = draw(st.integers(1, 8), label="tasks")
    lines = ["# Plan: modules", ""]
    for task_id in range(1, count + 1):
        done = draw(st.integers(0, 4), label="done") == 4  # hypothesis favours 0: rare events are high
        lines.append(f"- [{'x' if done else ' '}] Create src/m{task_id}.py")
        lines.append(f"  files: src/m{task_id}.py")
        earlier = draw(st.lists(st.integers(1, task_id - 1), max_size=2, unique=True)) if task_id > 1 else []
        if earlier:
            lines.append(f"  depends: {', '.join(str(dep) for dep in earlier)}")
    if draw(st.integers(0, 9), label="unreadable") == 9:
        lines.append("- [ ]")
    return "\n".join(lines) + "\n"


@contextmanager
def project(plan: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        git(root, "init", "-q", "-b", "main")
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text("print('hi')\n")
        (root / "docs").mkdir()
        (root / PLAN).write_text(plan)
        git(root, "add", ".")
        git(root, "commit", "-q", "-m", "plan")
        yield root


def digest(root: Path) -> dict[str, str]:
    """sha256 of every project file outside .git and .claude."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not {".git", ".claude"} & set(path.relative_to(root).parts)
    }


class World:
    """What the model, the user and the engine's checks do in one run, all drawn by hypothesis."""

    def __init__(self, data: st.DataObject, root: Path) -> None:
        self.data = data
        self.root = root
        self.clock = FakeClock(step=0.01)
        self.answers = 0
        self.run_id = ""

    def verification(self, root: Path, state: dict[str, Any], params: dict[str, Any], clock: Any) -> Any:
        passed = self.data.draw(st.sampled_from([True, True, True, False]), label="checks pass")
        step = {"status": "passed" if passed else "failed", "duration_ms": 1, "exit_code": 0 if passed else 1}
        return {"tests": step, "lint": step, "typecheck": step, "status": step["status"], "passed": passed}

    def batch(self) -> list[int]:
        state = lifecycle.load_run(self.root, self.run_id)
        index = int(state["flow"]["phases"]["3"]["data"]["index"])
        return [int(task_id) for task_id in state["plan"]["batches"][index]]

    def implementer(self, kind: str) -> dict[str, Any]:
        tasks = self.batch()
        if kind == "wrong tasks":
            tasks = [*tasks[1:], 99]
        outcomes = []
        for task_id in tasks:
            if self.data.draw(st.integers(0, 5), label="task fails") == 5:
                outcomes.append({"task_id": task_id, "status": "failed", "reason": "blocked"})
                continue
            path = self.root / "src" / f"m{task_id}.py"
            path.write_text(f"print({task_id})\n")
            outcomes.append({"task_id": task_id, "status": "done", "files": [f"src/m{task_id}.py"]})
        return {"status": "success", "agent": AGENT, "tasks": outcomes}

    def document(self, agent: str, kind: str) -> dict[str, Any]:
        draw = self.data.draw
        if agent == AGENT:
            return self.implementer(kind)
        if agent in REVIEWER_AGENTS:
            count = draw(st.integers(0, 2), label="issues")
            found = [
                issue(f"X-{n}", 1, f"problem {n}", file="src/app.py", auto_fixable=draw(st.booleans()))
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
            if kind in ("valid", "wrong tasks"):
                text = json.dumps(self.document(agent, kind))
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
            path = self.root / ".claude" / "fixloop" / "answers" / f"{self.answers:04d}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            self.answers += 1
            result = intake.record_answer(
                self.root, self.run_id, str(path.relative_to(self.root)), agent, None, self.clock
            )
            if not result.get("retry"):
                return

    def drive(self, run_id: str) -> tuple[int, dict[str, Any]]:
        self.run_id = run_id
        with mock.patch.dict(work.PERFORMERS, {"verification": self.verification}):
            for calls in range(1, MAX_NEXT + 1):
                action = driver.next_action(self.root, run_id, self.clock)
                if action["action"] == "stop":
                    return calls, action
                if action["action"] == "ask_user":
                    labels = [option["label"] for option in action["options"]]
                    choice = self.data.draw(st.sampled_from([None, *labels]), label="answer")
                    driver.answer(self.root, run_id, choice, choice is None, self.clock)
                    continue
                for agent in agents_of(action):
                    self.answer(agent)
        raise AssertionError(f"run {run_id} did not end within {MAX_NEXT} next calls")


def check_run(root: Path, run_id: str, calls: int, stop: dict[str, Any], before: dict[str, str]) -> None:
    state = lifecycle.load_run(root, run_id)
    assert calls <= MAX_NEXT and state["ended_at_ms"] is not None and stop["status"] == state["status"]
    assert state["open_phases"] == {}
    numbers = [int(str(result["phase"])[6:]) for result in state["phase_results"]]
    assert numbers == sorted(set(numbers)) and set(numbers) <= set(state["phases"])
    statuses = {str(result["status"]) for result in state["phase_results"]}
    final = str(state["status"])
    assert STATUS_RANK[final] <= STATUS_RANK[final_status(state)]
    assert ("failed" in statuses) == (final == "failed") or final == "user_cancelled"
    events = read_events(state["logging"]["log_files"]["jsonl"])
    assert not [event for event in events if event["type"] == "ERROR" and event["code"] in FAULTS], events
    if state["dry_run"]:
        assert digest(root) == before
    record = state.get("plan") or {}
    if "tasks" not in record:
        return
    outcomes = {int(key): value["status"] for key, value in record["outcomes"].items()}
    on_disk = parse((root / PLAN).read_text())
    assert {task.id: task.done for task in on_disk.tasks} == {
        task_id: status in FINISHED for task_id, status in outcomes.items()
    }
    stopped = [event for event in events if event["type"] == "ERROR" and event["code"] == "PLAN_BATCH_FAILED"]
    if stopped:  # a run started again begins where this one says
        first = resume_point(on_disk)
        assert stopped[0]["resume_at"] == (first.id if first else None)
        assert first is not None
    depends = {int(item["id"]): item["depends"] for item in record["tasks"]}
    for task_id, status in outcomes.items():
        if status == "done":
            assert all(outcomes[dep] in FINISHED for dep in depends[task_id]), (task_id, outcomes)
    if final == "success" and 3 in state["phases"] and not state["dry_run"]:
        assert set(outcomes.values()) <= set(FINISHED)
    summary = stop["summary"]
    if "tasks" in summary:
        flat = {task_id: status for status, ids in summary["tasks"].items() for task_id in ids}
        assert flat == outcomes


SETTINGS = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@SETTINGS
@given(
    data=st.data(),
    plan=plan_texts(),
    phase=st.sampled_from(["all", "all", "all", "0,1,2", "3", "3,4,5", "4,5"]),
    dry_run=st.sampled_from([False, False, True]),
    trusted=st.sampled_from([True, True, True, False]),
    config=st.fixed_dictionaries(
        {
            "questions": st.sampled_from(["default", "ask"]),
            "use_verifier": st.booleans(),
            "max_review_iterations": st.integers(1, 2),
        }
    ),
)
def test_execute_plan_runs_end_consistently(
    data: st.DataObject, plan: str, phase: str, dry_run: bool, trusted: bool, config: dict[str, Any]
) -> None:
    with project(plan) as root:
        world = World(data, root)
        (root / ".claude").mkdir()
        (root / ".claude" / "fixloop.json").write_text(json.dumps({"test_command": "pytest", **config}))
        before = digest(root)
        started = creation.start_run(
            "execute-plan", root=root, phase=phase, dry_run=dry_run, inputs={"plan": PLAN},
            claude_session_id="", trust_config=trusted, clock=world.clock,
        )  # fmt: skip
        run_id = started["state"]["run_id"]
        calls, stop = world.drive(run_id)
        check_run(root, run_id, calls, stop, before)
