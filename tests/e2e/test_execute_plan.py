"""``/fixloop:execute-plan`` end to end: the real pinned Claude Code CLI, the real plugin and a scripted model
(tests/e2e/plan_model.py) on a copy of the sample project, whose own test, lint and type commands check
every batch.

A seven-task plan runs in three batches. The second batch stays red (the implementer's ``add_items``
replaces the count, and the plan's own test of it fails, on the retry too): the run stops there, with tasks
1-3 checked off in the plan file. The user fixes the line and runs the same command again, as the docs
say: the run resumes at task 4, never hands tasks 1-3 to an implementer again, reviews every change the
plan made, and ends with all seven tasks checked off.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from fixloop_model import Scenario, start_context
from fixloop_session import MakeRunner, Session, StartAPI, reply_tool_uses
from plan_model import (
    BROKEN_LINE,
    COMMAND,
    FIXED_LINE,
    PLAN,
    PLAN_TEXT,
    PREVIOUS_ATTEMPT,
    README_SECTION,
    TITLES,
    USER_FIX,
    apply,
    checked_tasks,
    implementer_batches,
    plan_session,
    task_implementer,
)

from fixloop.contracts.plan import TASK_IMPLEMENTER
from fixloop.core.agent_names import REVIEWER_AGENTS

GIVE_UP = "the plan does not say whether a delivery adds to the count or replaces it"
TEST_COMMAND = "python3 -m unittest discover -s tests"
FAILED_TEST = "test_a_delivery_adds_to_the_units_on_hand"
HEADLINE = 'Plan docs/plan.md ("Plan: receiving stock and a clearer report")'
PLAN_CHANGES = [
    "inventory/report.py",
    "inventory/stock.py",
    "tests/test_receiving.py",
    "tests/test_report.py",
]


def project_tests(project: Path) -> subprocess.CompletedProcess[str]:
    """The sample's own test command, run by the test."""
    return subprocess.run(
        TEST_COMMAND.split(), cwd=project, capture_output=True, text=True, timeout=120, check=False
    )


def plan_with_checked(tasks: list[int]) -> str:
    """The plan's text with exactly ``tasks`` checked off, every other byte as written."""
    lines = PLAN_TEXT.split("\n")
    items = [index for index, line in enumerate(lines) if line.startswith("- [ ] ")]
    for number in tasks:
        lines[items[number - 1]] = lines[items[number - 1]].replace("- [ ] ", "- [x] ", 1)
    return "\n".join(lines)


def phase_statuses(session: Session) -> list[tuple[str, str]]:
    return [(item["phase"], item["status"]) for item in session.run.state["phase_results"]]


def batch_steps(session: Session) -> list[tuple[str, str]]:
    return [(str(e["step"]), str(e["status"])) for e in session.run.of_type("STEP_END")]


def verification_runs(session: Session) -> list[str]:
    """The tests status of each verification the run logged, in order."""
    return [str(e["tests"]) for e in session.run.of_type("REVIEW_VERIFICATION_END")]


def implementer_edits(session: Session) -> list[list[str]]:
    """The Edit/Write calls of each task-implementer instance: tool name and file, relative to the project."""
    found = []
    for requests in session.instances(TASK_IMPLEMENTER):
        uses = [use for record in requests for use in reply_tool_uses(record)]
        found.append(
            [
                f"{use['name']} {Path(use['input']['file_path']).relative_to(session.project)}"
                for use in uses
                if use["name"] in ("Edit", "Write")
            ]
        )
    return found


def check_stopped(session: Session) -> None:
    run = session.run
    project = session.project
    # the run stopped in phase 3: no review, no report phase
    assert run.state["status"] == "failed"
    assert phase_statuses(session) == [
        ("phase_0", "success"), ("phase_1", "success"), ("phase_2", "success"), ("phase_3", "failed"),
    ]  # fmt: skip
    # three implementer instances: batch 1, then batch 2 and its one retry, which is told what failed
    assert implementer_batches(session) == [[1, 2, 3], [4, 5, 6], [4, 5, 6]]
    retry_task = start_context(session.instances(TASK_IMPLEMENTER)[2][0]["body"]) or ""
    assert PREVIOUS_ATTEMPT in retry_task and f"- tests failed: `{TEST_COMMAND}`" in retry_task
    assert FAILED_TEST in retry_task
    assert implementer_edits(session) == [
        ["Edit inventory/report.py", "Edit inventory/report.py", "Write tests/test_report.py"],
        ["Edit inventory/stock.py", "Write tests/test_receiving.py", "Edit inventory/stock.py"],
        [],
    ]
    # the log: each batch's step and the checks after each attempt, the error with where to resume
    assert batch_steps(session) == [("plan_batch_1", "success"), ("plan_batch_2", "failed")]
    assert verification_runs(session) == ["passed", "failed", "failed"]
    (error,) = run.of_type("ERROR")
    assert (error["code"], error["batch"], error["tasks"], error["failed_checks"], error["resume_at"]) == (
        "PLAN_BATCH_FAILED",
        2,
        [4, 5, 6],
        ["tests"],
        4,
    )
    assert [(e["code"], e["task_id"]) for e in run.of_type("WARNING")] == [
        ("PLAN_FILE_TO_CREATE", 3),
        ("PLAN_FILE_TO_CREATE", 5),
    ]
    assert len(run.of_type("AGENT_CALL", agent=TASK_IMPLEMENTER)) == 3
    (end,) = run.of_type("SESSION_END")
    assert end["summary"]["tasks"] == {"done": [1, 2, 3], "unverified": [5, 6], "failed": [4], "not_run": [7]}
    assert {key: value["status"] for key, value in run.state["plan"]["outcomes"].items()} == {
        "1": "done", "2": "done", "3": "done", "4": "failed", "5": "unverified", "6": "unverified",
        "7": "not_run",
    }  # fmt: skip
    # the plan on disk: exactly the done tasks checked, nothing else changed
    assert checked_tasks(project) == [1, 2, 3]
    assert (project / PLAN).read_text(encoding="utf-8") == plan_with_checked([1, 2, 3])
    # the batch's changes stay in place, and the project's tests fail on them
    assert BROKEN_LINE in (project / "inventory/stock.py").read_text(encoding="utf-8")
    assert project_tests(project).returncode != 0
    # the final message says what failed, what is done and what to do
    message = session.result.result_text or ""
    assert message.startswith(f"fixloop execute-plan {run.run_id}: failed (PLAN_BATCH_FAILED)\n")
    assert (
        "Error PLAN_BATCH_FAILED: Batch 2 of 3 (tasks 4, 5, 6) is not done after 2 attempt(s) of the task "
        f"implementer: task 4 failed ({GIVE_UP}); the checks failed (tests: `{TEST_COMMAND}`). Its changes "
        f"are still in place. Fix what fails, then run {COMMAND} again: it resumes at task 4."
    ) in message.splitlines()
    lines = message.splitlines()
    at = lines.index(f"{HEADLINE}: 3 of 7 task(s) done; 2 unverified, 1 failed, 1 not run.")
    assert lines[at + 1 : at + 8] == [
        f"- [x] 1. {TITLES[1]} (done, batch 1)",
        f"- [x] 2. {TITLES[2]} (done, batch 1)",
        f"- [x] 3. {TITLES[3]} (done, batch 1)",
        f"- [ ] 4. {TITLES[4]} (failed, batch 2: {GIVE_UP})",
        f"- [ ] 5. {TITLES[5]} (unverified, batch 2: the checks failed after its batch: tests)",
        f"- [ ] 6. {TITLES[6]} (unverified, batch 2: the checks failed after its batch: tests)",
        f"- [ ] 7. {TITLES[7]} (not run)",
    ]


def check_resumed(session: Session, stopped: Session) -> None:
    run = session.run
    project = session.project
    assert (run.state["status"], phase_statuses(session)) == (
        "success",
        [(f"phase_{number}", "success") for number in range(6)],
    )
    # tasks 1-3 are never handed out again: two implementer instances, batch 4-6 and batch 7
    assert implementer_batches(session) == [[4, 5, 6], [7]]
    for requests in session.instances(TASK_IMPLEMENTER):
        task = start_context(requests[0]["body"]) or ""
        assert not any(f"### Task {number}:" in task for number in (1, 2, 3))
    # tasks 4-6's work was in place (with the user's fix): the implementer only read; task 7 edits the README
    assert implementer_edits(session) == [[], ["Edit README.md"]]
    assert batch_steps(session) == [("plan_batch_1", "success"), ("plan_batch_2", "success")]
    (batches,) = run.of_type("ANALYSIS_RESULT", analysis_type="plan_batches")
    assert batches["result"] == {"batches": [[4, 5, 6], [7]], "tasks": 4, "resume_at": 4, "already_done": 3}
    # the review covers the plan's changes, those the stopped run left in place included
    (resumed,) = run.of_type("DATA_COLLECTED", data_type="resumed_changes")
    assert resumed["summary"] == {"run_ids": [stopped.run.run_id], "files": PLAN_CHANGES}
    assert run.state["changed_files"] == ["README.md", *PLAN_CHANGES]
    for reviewer in REVIEWER_AGENTS:
        assert len(session.instances(reviewer)) == 1
    (end,) = run.of_type("SESSION_END")
    assert end["summary"]["tasks"] == {"done": [4, 5, 6, 7], "already_done": [1, 2, 3]}
    # every task checked off, the README documents receiving, the project's tests pass
    assert checked_tasks(project) == [1, 2, 3, 4, 5, 6, 7]
    assert (project / PLAN).read_text(encoding="utf-8") == plan_with_checked([1, 2, 3, 4, 5, 6, 7])
    assert (project / "README.md").read_text(encoding="utf-8").endswith(README_SECTION)
    assert project_tests(project).returncode == 0
    lines = (session.result.result_text or "").splitlines()
    assert lines[0] == f"fixloop execute-plan {run.run_id}: success (no_fixable_issues)"
    at = lines.index(f"{HEADLINE}: 7 of 7 task(s) done.")
    assert lines[at + 1 : at + 8] == [
        f"- [x] 1. {TITLES[1]} (already done)",
        f"- [x] 2. {TITLES[2]} (already done)",
        f"- [x] 3. {TITLES[3]} (already done)",
        f"- [x] 4. {TITLES[4]} (done, batch 1)",
        f"- [x] 5. {TITLES[5]} (done, batch 1)",
        f"- [x] 6. {TITLES[6]} (done, batch 1)",
        f"- [x] 7. {TITLES[7]} (done, batch 2)",
    ]


def test_a_plan_stops_at_a_red_batch_and_resumes_after_the_user_fixes_it(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    def broken(project: Path) -> Scenario:
        behaviour = task_implementer(project, broken_receiving=True, give_up_on_retry={4: GIVE_UP})
        return Scenario(agents={TASK_IMPLEMENTER: behaviour})

    stopped = plan_session(start_api, make_runner, shared_plugin_data, broken)
    check_stopped(stopped)

    project = stopped.project
    apply(project, USER_FIX)  # the user fixes the line the tests point at
    assert FIXED_LINE in (project / "inventory/stock.py").read_text(encoding="utf-8")
    assert project_tests(project).returncode == 0

    def fixed(project: Path) -> Scenario:
        return Scenario(agents={TASK_IMPLEMENTER: task_implementer(project)})

    resumed = plan_session(start_api, make_runner, shared_plugin_data, fixed, project)
    check_resumed(resumed, stopped)


def test_a_task_said_done_without_an_edit_is_not_checked_off(
    start_api: StartAPI, make_runner: MakeRunner, shared_plugin_data: Path
) -> None:
    def claims(project: Path) -> Scenario:
        return Scenario(agents={TASK_IMPLEMENTER: task_implementer(project, done_without_edit={3})})

    session = plan_session(start_api, make_runner, shared_plugin_data, claims)
    run = session.run
    project = session.project
    # task 3 (the report's tests) is answered done twice, never written: the batch is not done
    assert implementer_batches(session) == [[1, 2, 3], [1, 2, 3]]
    assert implementer_edits(session) == [["Edit inventory/report.py", "Edit inventory/report.py"], []]
    assert not (project / "tests/test_report.py").exists()
    assert run.state["status"] == "failed"
    assert [(e["code"], e["task_ids"]) for e in run.of_type("WARNING") if e["code"] == "TASK_UNVERIFIED"] == [
        ("TASK_UNVERIFIED", [3]),
        ("TASK_UNVERIFIED", [3]),
    ]
    outcome = run.state["plan"]["outcomes"]["3"]
    assert (outcome["status"], outcome["code"]) == ("unverified", "TASK_UNVERIFIED")
    assert checked_tasks(project) == [1, 2]
    assert (project / PLAN).read_text(encoding="utf-8") == plan_with_checked([1, 2])
    lines = (session.result.result_text or "").splitlines()
    assert lines[0] == f"fixloop execute-plan {run.run_id}: failed (PLAN_BATCH_FAILED)"
    assert (
        "Task claims not verified: 3 (the task implementer said done, but no recorded edit changed their "
        "files): not done, not checked off."
    ) in lines
