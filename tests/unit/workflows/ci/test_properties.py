"""Properties of whole fix-ci runs on the engine, with gh, the log, the local runs and the agents answering at
random (valid, invalid, failed or not at all), and random answers to questions: phases run in order and all
end, the run's status never beats its phases, no phase faults, every run ends within a bounded number of
`next` calls, no code is changed without red proven first and green after, flaky and infrastructure
failures are never fixed, and no task hands an agent more than a bounded text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import event, given
from hypothesis import strategies as st
from workflows.test_engine_properties import OUTCOMES, SETTINGS, World, check_run
from workflows.test_engine_properties import project as calc_project

from fixloop.contracts.ci import CI_CATEGORIES, FIXABLE_CATEGORIES
from fixloop.runs import creation, lifecycle, trust
from fixloop.workflows import driver, work
from fixloop.workflows.ci.logfailures import MAX_CHARS
from fixloop.workflows.ci.performers import CI_CHECKS, CI_LOG, CI_RUN

MAX_NEXT = 80
MAX_TASK_CHARS = MAX_CHARS + 20_000  # the failures, plus the instructions and the contract
GH_ERRORS = ("GH_UNAVAILABLE", "GH_AUTH_REQUIRED", "NO_GITHUB_REMOTE", "CI_RUN_NOT_FOUND", "CI_JOB_NOT_FOUND")
CHECK_STATUSES = ("passed", "failed", "timeout", "skipped")


class CiWorld(World):
    """World (test_engine_properties) with gh, the CI log and the local checks drawn too."""

    def data_of(self, number: int) -> dict[str, Any]:
        flow = lifecycle.load_run(self.root, self.run_id).get("flow") or {}
        slot = (flow.get("phases") or {}).get(str(number)) or {}
        return dict(slot.get("data") or {})

    # ---- engine work ------------------------------------------------------------------------------

    def find_run(self, root: Path, state: dict[str, Any], params: dict[str, Any], clock: Any) -> Any:
        draw = self.data.draw
        kind = draw(st.sampled_from(("ok",) * 6 + ("error", "none", "passed", "running")), label="gh")
        if kind == "error":
            code = draw(st.sampled_from(GH_ERRORS), label="gh error")
            return {"ok": False, "code": code, "message": f"{code}: run `gh auth login`", "details": {}}
        if kind == "none":
            return {"ok": True, "run": None, "job": None, "branch": "main", "local_head": "a" * 40}
        job = {"id": 7, "name": "test", "status": "completed", "conclusion": "failure", "url": "u",
               "failed_steps": ["pytest"]}  # fmt: skip
        run = {"id": 42, "url": "https://github.com/o/r/actions/runs/42", "workflow": "CI",
               "head_branch": "main", "head_sha": "a" * 40,
               "status": "in_progress" if kind == "running" else "completed",
               "conclusion": "success" if kind == "passed" else "failure", "jobs": [job]}  # fmt: skip
        local = draw(st.sampled_from(["a" * 40, "b" * 40, None]), label="local head")
        return {"ok": True, "run": run, "job": None, "branch": "main", "repository": None, "repo_args": [],
                "local_head": local}  # fmt: skip

    def fetch_log(self, root: Path, state: dict[str, Any], params: dict[str, Any], clock: Any) -> Any:
        draw = self.data.draw
        if draw(st.sampled_from((False,) * 9 + (True,)), label="log unavailable"):
            return {"ok": False, "code": "CI_LOG_UNAVAILABLE", "message": "gone", "details": {}}
        count = draw(st.sampled_from((1, 1, 2, 3, 0)), label="ci failures")
        kinds = st.sampled_from(["test", "lint", "type", "build", "error", "step"])
        failures = [
            {"id": f"F{n}", "runner": "pytest", "test_id": f"tests/test_calc.py::test_{n}",
             "kind": draw(kinds), "message": "boom", "file": "tests/test_calc.py", "line": n,
             "details": "E boom\n" * 300,
             "suite": None, "job": "test", "step": "pytest", "lines_dropped": 5}
            for n in range(1, count + 1)
        ]  # fmt: skip
        failed = bool(failures) or draw(st.booleans(), label="failed without failures")
        return {"ok": True, "path": "log", "bytes": 10, "lines_read": 1000, "lines_kept": 50, "notes": [],
                "failures": failures, "failures_dropped": 0, "failed": failed}  # fmt: skip

    def checks(self, root: Path, state: dict[str, Any], params: dict[str, Any], clock: Any) -> Any:
        draw = self.data.draw
        green = params.get("purpose") == "green"
        likely = ("passed",) * 3 if green else ("failed",) * 3
        tests = None
        if params.get("tests"):
            outcomes = [
                {"test": test, "outcome": draw(st.sampled_from(likely + OUTCOMES), label="outcome")}
                for test in params["tests"]
            ]
            tests = {"status": "test_failed", "reason": None, "command": "pytest x", "exit_code": 1,
                     "duration_ms": 1, "output_file": "o.log", "failures": [{"message": "boom"}],
                     "outcomes": outcomes}  # fmt: skip
        checks = {}
        for name in params.get("checks") or []:
            status = draw(st.sampled_from(likely + CHECK_STATUSES), label=f"check {name}")
            checks[name] = {"status": status, "command": name, "exit_code": 1, "duration_ms": 1,
                            "output_tail": "", "reason": None if status == "passed" else status}  # fmt: skip
        return {"purpose": params.get("purpose"), "tests": tests, "checks": checks}

    # ---- agents -----------------------------------------------------------------------------------

    def document(self, agent: str) -> dict[str, Any]:
        if agent != "ci-analyst":
            return super().document(agent)
        draw = self.data.draw
        given_ids = [str(item["id"]) for item in self.data_of(1).get("failures") or []] or ["F1"]
        if draw(st.sampled_from((False,) * 6 + (True,)), label="wrong ids"):
            given_ids = [*given_ids[1:], "F99"]
        entries = []
        for failure_id in given_ids:
            category = draw(st.sampled_from(CI_CATEGORIES), label="category")
            entry: dict[str, Any] = {"failure_id": failure_id, "category": category, "summary": "s",
                                     "confidence": draw(st.integers(0, 100), label="confidence")}  # fmt: skip
            if category == "test" and draw(st.booleans(), label="names a test"):
                entry["test"] = {"file": "tests/test_calc.py", "name": f"test_{failure_id}"}
            entries.append(entry)
        return {"status": "success", "agent": agent, "failures": entries}

    def drive(self, run_id: str) -> tuple[int, dict[str, Any]]:
        self.run_id = run_id
        performers = {CI_RUN: self.find_run, CI_LOG: self.fetch_log, CI_CHECKS: self.checks}
        with mock.patch.dict(work.PERFORMERS, performers):
            return self._drive_checking_tasks(run_id)

    def _drive_checking_tasks(self, run_id: str) -> tuple[int, dict[str, Any]]:
        original = driver.next_action

        def next_action(root: Path, run: str, clock: Any = None) -> dict[str, Any]:
            action = original(root, run, clock)
            for call in action.get("calls") or []:
                agent = call["subagent_type"].split(":", 1)[1]
                assert len(driver.task(root, run, agent)) <= MAX_TASK_CHARS, agent
            return action

        with mock.patch.object(driver, "next_action", next_action):
            return super().drive(run_id)


def check_ci_run(root: Path, run_id: str) -> None:
    state = lifecycle.load_run(root, run_id)
    phases = (state.get("flow") or {}).get("phases") or {}
    results = {str(item["phase"]): str(item["status"]) for item in state["phase_results"]}
    reproduction = (phases.get("3") or {}).get("data") or {}
    fixed = results.get("phase_4") == "success"
    if fixed:  # no change without red proven first and green after
        implemented = phases["4"]["data"]
        assert implemented.get("green") and implemented.get("red")
        reproduced = any(item["reproduced"] for item in reproduction.get("verdicts") or [])
        assert reproduced or reproduction.get("user_decision") == "write_a_test" or "3" not in phases
    items = reproduction.get("items") or []
    if items and not any(item["category"] in FIXABLE_CATEGORIES for item in items):
        assert results.get("phase_4") in (None, "skipped")  # flaky and infrastructure only: nothing fixed
    warnings = {item["code"] for item in (state.get("flow") or {}).get("warnings") or []}
    if "NO_FAILURE_FOUND" in warnings:
        assert state["status"] in ("success", "dry_run_complete") and not fixed
    if (state.get("flow") or {}).get("outcome", {}).get("reason") == "not_reproducible_locally":
        assert state["status"] == "partial" and not fixed


@SETTINGS
@given(
    data=st.data(),
    source=st.sampled_from(["github", "log_file"]),
    phase=st.sampled_from(["all", "all", "all", "0,1,2", "3,4", "4,5,6"]),
    dry_run=st.sampled_from([False, False, False, True]),
    config=st.fixed_dictionaries(
        {
            "questions": st.sampled_from(["default", "ask"]),
            "max_review_iterations": st.integers(1, 2),
            "lint_command": st.sampled_from(["ruff check .", None]),
        }
    ),
)
def test_ci_runs_end_consistently(
    data: st.DataObject, source: str, phase: str, dry_run: bool, config: dict[str, Any]
) -> None:
    with calc_project() as root:
        world = CiWorld(data, root, "mixed")
        settings = {"test_command": "pytest", "use_verifier": False, **config}
        (root / ".claude").mkdir()
        (root / ".claude" / "fixloop.json").write_text(json.dumps({k: v for k, v in settings.items() if v}))
        trust.approve(
            root, {"tests": "pytest", **({"lint": "ruff check ."} if config["lint_command"] else {})}
        )
        (root / "job.log").write_text("ERROR: Job failed: exit code 1\n")
        inputs = {"run": "42"} if source == "github" else {"log_file": "job.log"}
        started = creation.start_run(
            "ci-job", root=root, phase=phase, dry_run=dry_run, inputs=inputs, claude_session_id="",
            clock=world.clock,
        )  # fmt: skip
        run_id = started["state"]["run_id"]
        calls, stop = world.drive(run_id)
        assert calls <= MAX_NEXT
        check_run(root, run_id, calls, stop)
        check_ci_run(root, run_id)
        ended = lifecycle.load_run(root, run_id)
        event(f"{ended['status']}: {(ended['flow'].get('outcome') or {}).get('reason')}")
