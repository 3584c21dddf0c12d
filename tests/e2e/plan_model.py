"""``/fixloop:execute-plan`` end to end: a seven-task plan for the sample project, the task implementer that
carries it out with real Read/Edit/Write calls, and a session runner that can run the command again on the
same project (a resumed run).

The plan (:data:`PLAN_TEXT`) runs in three batches: tasks 1-3, 4-6, then 7. Each task's work is data
(:data:`WORK`): edits to the sample's files, each skipped when its ``marker`` is already in the file (the
work is there, as a model reading the file would see). With ``broken_receiving`` the implementer writes
``add_items`` so that it replaces the count instead of adding to it, which the test of task 5 catches; on
its retry it gives up on task 4 with a reason. :data:`USER_FIX` is the user's own fix of that line.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_runner import ClaudeRunner, git
from fixloop_model import CLI_PERMISSION_MODE, Act, Behaviour, FixloopModel, Scenario, Turn, start_context
from fixloop_session import MakeRunner, Session, StartAPI, approve_commands, read_run, run_engine, run_ids
from scripted_api import Block, tool_use

from fixloop.contracts.plan import TASK_IMPLEMENTER

JSON = dict[str, Any]
PLAN = "docs/plan.md"
COMMAND = f"/fixloop:execute-plan {PLAN}"
PLAN_TEXT = """# Plan: receiving stock and a clearer report

Deliveries now arrive at the shop. Plain bullets are notes, not tasks:

- quantities are whole units;
- only `inventory/stock.py` reads or writes files.

## Phase 1: the report

- [ ] Make `low_stock_summary` reuse `total_units`
  files: inventory/report.py
- [ ] Add `units_of(stock, sku)` to the report module
  files: inventory/report.py
  It gives 0 for an unknown SKU and never less than 0.
- [ ] Add tests of the report
  files: tests/test_report.py
  test: python3 -m unittest tests.test_report

## Phase 2: receiving stock

- [ ] Add `add_items(stock, sku, quantity)` to the stock module
  files: inventory/stock.py
  A delivery adds `quantity` units of `sku`; the input is left alone.
- [ ] Add tests of `add_items`
  files: tests/test_receiving.py
  test: python3 -m unittest tests.test_receiving
- [ ] Correct the comment in `remove_items`
  files: inventory/stock.py

## Phase 3: docs

- [ ] Document receiving stock in the README
  files: README.md
  depends: 4
"""
TITLES = {
    1: "Make `low_stock_summary` reuse `total_units`",
    2: "Add `units_of(stock, sku)` to the report module",
    3: "Add tests of the report",
    4: "Add `add_items(stock, sku, quantity)` to the stock module",
    5: "Add tests of `add_items`",
    6: "Correct the comment in `remove_items`",
    7: "Document receiving stock in the README",
}
BATCHES = ([1, 2, 3], [4, 5, 6], [7])


TASK_HEADING = re.compile(r"^### Task (\d+): ", re.MULTILINE)
PREVIOUS_ATTEMPT = "## The previous attempt"


# --------------------------------------------------------------------------------------------------
# The work of each task
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One edit of ``file`` (relative to the project): ``old`` -> ``new`` with Edit, or the whole file ``new``
    with Write when ``old`` is None. Already made when ``marker`` is in the file."""

    file: str
    old: str | None
    new: str
    marker: str


SUMMARY_OLD = (
    "    total = 0\n    for quantity in stock.values():\n        if quantity > 0:\n"
    '            total += quantity\n    return f"{len(low)}'
)
SUMMARY_NEW = '    total = total_units(stock)\n    return f"{len(low)}'
SUMMARY_END = "{', '.join(low) or '-'}\"\n"
UNITS_OF = '''

def units_of(stock: dict[str, int], sku: str) -> int:
    """Units on hand of ``sku``: 0 for an unknown SKU, never less than 0."""
    return max(stock.get(sku, 0), 0)
'''
REPORT_TESTS = '''"""Tests of inventory.report."""

from __future__ import annotations

import unittest

from inventory.report import low_stock_summary, units_of


class ReportSummaryTests(unittest.TestCase):
    def test_low_stock_summary_names_the_low_skus(self) -> None:
        self.assertEqual(low_stock_summary({"a": 1, "b": 9, "c": -2}, 5), "2 low of 10 units: a, c")

    def test_units_of_an_unknown_or_negative_sku_is_zero(self) -> None:
        self.assertEqual((units_of({"a": 3}, "a"), units_of({}, "a"), units_of({"a": -1}, "a")), (3, 0, 0))
'''
REMOVE_END = "    return updated\n"
ADD_ITEMS = '''

def add_items(stock: dict[str, int], sku: str, quantity: int) -> dict[str, int]:
    """Return a copy of ``stock`` with ``quantity`` units of ``sku`` received."""
    updated = dict(stock)
    {line}
    return updated
'''
BROKEN_LINE = "updated[sku] = quantity"  # replaces the count: the test of task 5 fails
FIXED_LINE = "updated[sku] = updated.get(sku, 0) + quantity"
RECEIVING_TESTS = '''"""Tests of inventory.stock.add_items."""

from __future__ import annotations

import unittest

from inventory.stock import add_items


class ReceivingTests(unittest.TestCase):
    def test_a_delivery_adds_to_the_units_on_hand(self) -> None:
        self.assertEqual(add_items({"a": 2}, "a", 3), {"a": 5})

    def test_a_delivery_of_a_new_sku_starts_at_zero(self) -> None:
        stock = {"a": 2}
        self.assertEqual(add_items(stock, "b", 4), {"a": 2, "b": 4})
        self.assertEqual(stock, {"a": 2})
'''
COMMENT_OLD = "    # Raises KeyError when the SKU is not in stock.\n"
COMMENT_NEW = "    # An unknown SKU counts as 0 units; the result never goes below 0.\n"
README_END = "(or `python3 -m pytest -q`).\n"
README_SECTION = (
    "\n## Receiving stock\n\n`add_items(stock, sku, quantity)` returns the stock with a delivery added.\n"
)
# The user's fix after the run stopped: add_items adds the delivery to the count.
USER_FIX = Change("inventory/stock.py", BROKEN_LINE, FIXED_LINE, FIXED_LINE)


def task_work(broken_receiving: bool) -> dict[int, tuple[Change, ...]]:
    """Each task's changes; ``broken_receiving``: add_items replaces the count instead of adding to it."""
    add_items = ADD_ITEMS.format(line=BROKEN_LINE if broken_receiving else FIXED_LINE)
    return {
        1: (Change("inventory/report.py", SUMMARY_OLD, SUMMARY_NEW, SUMMARY_NEW),),
        2: (Change("inventory/report.py", SUMMARY_END, SUMMARY_END + UNITS_OF, "def units_of("),),
        3: (Change("tests/test_report.py", None, REPORT_TESTS, "class ReportSummaryTests"),),
        4: (Change("inventory/stock.py", REMOVE_END, REMOVE_END + add_items, "def add_items("),),
        5: (Change("tests/test_receiving.py", None, RECEIVING_TESTS, "class ReceivingTests"),),
        6: (Change("inventory/stock.py", COMMENT_OLD, COMMENT_NEW, COMMENT_NEW),),
        7: (Change("README.md", README_END, README_END + README_SECTION, "## Receiving stock"),),
    }


def made(project: Path, change: Change) -> bool:
    path = project / change.file
    return path.is_file() and change.marker in path.read_text(encoding="utf-8")


def apply(project: Path, change: Change) -> None:
    """Make ``change`` in ``project`` as the user would, in an editor."""
    path = project / change.file
    text = path.read_text(encoding="utf-8")
    assert change.old is not None and text.count(change.old) == 1, f"{change.file}: {change.old!r}"
    path.write_text(text.replace(change.old, change.new), encoding="utf-8")


# --------------------------------------------------------------------------------------------------
# The task implementer
# --------------------------------------------------------------------------------------------------


def batch_of(task: str) -> list[int]:
    """The ids of the tasks an implementer's task hands over, in order."""
    return [int(found) for found in TASK_HEADING.findall(task)]


def task_implementer(
    project: Path,
    *,
    broken_receiving: bool = False,
    give_up_on_retry: Mapping[int, str] | None = None,
    done_without_edit: Collection[int] = (),
) -> Behaviour:
    """The implementer of ``project``: reads the files its batch edits, makes each change of its tasks that
    is not made yet (one Edit or Write call per turn), then answers every task done with the files it
    changed. On a retry (the task shows the previous attempt) a task of ``give_up_on_retry`` is failed with
    its reason. A task of ``done_without_edit`` is answered done, with its files, but never worked on."""
    gives_up = dict(give_up_on_retry or {})
    skipped = set(done_without_edit)

    def behave(turn: Turn) -> Act:
        batch = batch_of(turn.task)
        work = task_work(broken_receiving)
        changes = [change for task_id in batch if task_id not in skipped for change in work[task_id]]
        uses = turn.tool_uses
        read = {str(use.input.get("file_path")) for use in uses if use.name == "Read"}
        existing = {str(project / c.file) for c in changes if (project / c.file).is_file()}
        if existing - read:
            return [tool_use("Read", {"file_path": path}) for path in sorted(existing - read)]
        pending = [change for change in changes if not made(project, change)]
        if pending:
            return [edit_call(project, pending[0])]
        edited = {str(use.input.get("file_path")) for use in uses if use.name in ("Edit", "Write")}
        retry = PREVIOUS_ATTEMPT in turn.task
        outcomes: list[JSON] = []
        for task_id in batch:
            files = sorted(
                {c.file for c in work[task_id] if str(project / c.file) in edited or task_id in skipped}
            )
            if retry and task_id in gives_up:
                outcomes.append({"task_id": task_id, "status": "failed", "reason": gives_up[task_id]})
            else:
                outcomes.append({"task_id": task_id, "status": "done", "files": files})
        return {
            "status": "success",
            "agent": TASK_IMPLEMENTER,
            "tasks": outcomes,
            "files_modified": sorted({path for item in outcomes for path in item.get("files", [])}),
            "summary": f"Worked through tasks {', '.join(map(str, batch))}.",
        }

    return behave


def edit_call(project: Path, change: Change) -> Block:
    path = str(project / change.file)
    if change.old is None:
        return tool_use("Write", {"file_path": path, "content": change.new})
    return tool_use("Edit", {"file_path": path, "old_string": change.old, "new_string": change.new})


# --------------------------------------------------------------------------------------------------
# Sessions on one project
# --------------------------------------------------------------------------------------------------


def plan_project(runner: ClaudeRunner, plugin_data: Path) -> Path:
    """A copy of the sample project with the plan committed and its verification commands approved."""
    project = runner.new_project()
    (project / "docs").mkdir()
    (project / PLAN).write_text(PLAN_TEXT, encoding="utf-8")
    git(project, "add", PLAN)
    git(project, "commit", "-q", "-m", "the plan")
    approve_commands(project, plugin_data)
    return project


def plan_session(
    start_api: StartAPI,
    make_runner: MakeRunner,
    plugin_data: Path,
    scenario: Callable[[Path], Scenario],
    project: Path | None = None,
    *,
    prompt: str = COMMAND,
    timeout: float = 300.0,
) -> Session:
    """Run ``prompt`` in ``project`` (a new :func:`plan_project` when None) with the scripted model of
    ``scenario(project)``; the Session of the run it started. AssertionError when the CLI failed, the model
    met a problem, a request matched no sender, or the command started no run or several."""
    model = FixloopModel()
    api = start_api(model.script())
    runner = make_runner(api, shared_plugin_data=plugin_data, timeout=timeout)
    if project is None:
        project = plan_project(runner, plugin_data)
    model.scenario = scenario(project)
    before = set(run_ids(project))
    started = time.monotonic()
    result = runner.run(prompt, project_dir=project, permission_mode=CLI_PERMISSION_MODE)
    print(f"{prompt}: {time.monotonic() - started:.2f}s, {len(result.message_requests())} requests")
    failures = []
    if (result.exit_code, result.timed_out, result.is_error) != (0, False, False):
        failures.append(f"the CLI failed: {result.summary()}")
    failures += [f"scripted model: {problem}" for problem in model.problems]
    failures += [f"no sender for request {r.seq}" for r in api.unmatched]
    new = sorted(set(run_ids(project)) - before)
    if len(new) != 1:
        failures.append(f"expected the command to start one run, it started {new}")
    if failures:
        raise AssertionError("\n".join(failures))
    record = read_run(project, new[0])
    code, report = run_engine(project, "review", "report", record.run_id, plugin_data=plugin_data)
    assert code == 0, report
    return Session(result, api, model, project, plugin_data, record, report)


ITEM_STARTS = ("- [ ] ", "- [x] ")


def checked_tasks(project: Path) -> list[int]:
    """The tasks checked ``[x]`` in the plan file on disk (its items are numbered by their place)."""
    text = (project / PLAN).read_text(encoding="utf-8")
    items = [line for line in text.splitlines() if line.startswith(ITEM_STARTS)]
    return [number for number, line in enumerate(items, 1) if line.startswith("- [x] ")]


def implementer_batches(session: Session) -> list[list[int]]:
    """The tasks each task-implementer instance of the session was handed, instance by instance."""
    return [batch_of(start_context(group[0]["body"]) or "") for group in session.instances(TASK_IMPLEMENTER)]
