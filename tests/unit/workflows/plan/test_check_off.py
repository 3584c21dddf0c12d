"""Checking tasks off in the plan file on disk, as phase 3 does after a green batch: the round trip parse ->
check off -> parse gives back the plan with exactly those tasks done, and nothing else in the file moves."""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from plans.plan_strategies import PROPERTIES, SPELLINGS, plans, spell

from fixloop.plans import Plan, mark_done, parse, render
from fixloop.workflows.context import PhaseContext
from fixloop.workflows.plan.changes import check_off

PLAN = "docs/plan.md"


def context(root: Path) -> PhaseContext:
    return PhaseContext({"project_dir": str(root), "run_id": "r1"}, 3, 0, None)


@PROPERTIES
@given(plans(acyclic=False), st.data())
def test_checking_off_on_disk_sets_exactly_those_tasks_done(plan: Plan, data: st.DataObject) -> None:
    spellings = data.draw(st.lists(SPELLINGS, min_size=len(plan.tasks), max_size=len(plan.tasks)))
    newline = data.draw(st.sampled_from(["\n", "\r\n"]))
    text = data.draw(st.sampled_from([render(plan), spell(plan, spellings, newline)]))
    ids = data.draw(st.lists(st.sampled_from([task.id for task in plan.tasks]), unique=True))
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        path = root / PLAN
        path.parent.mkdir()
        path.write_bytes(text.encode("utf-8"))
        os.chmod(path, 0o640)
        before = parse(path.read_text(encoding="utf-8"))
        ctx = context(root)

        assert check_off(ctx, {"path": PLAN}, ids)
        after = parse(path.read_bytes().decode("utf-8"))
        assert after.tasks == tuple(replace(task, done=task.done or task.id in ids) for task in before.tasks)
        assert after.title == before.title
        assert path.read_bytes() == mark_done(text, ids).encode("utf-8")
        assert os.stat(path).st_mode & 0o7777 == 0o640
        marked = path.read_bytes()
        assert check_off(ctx, {"path": PLAN}, ids) and path.read_bytes() == marked  # idempotent
        assert ctx.events == []


def test_a_plan_file_that_is_gone_is_a_warning_not_an_error(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    assert not check_off(ctx, {"path": PLAN}, [1, 2])
    (warning,) = ctx.flow["warnings"]
    assert (warning["code"], warning["task_ids"]) == ("PLAN_NOT_CHECKED_OFF", [1, 2])
    assert warning["message"].startswith(f"Task(s) 1, 2 are done, but could not be checked off in {PLAN}: ")
    assert check_off(ctx, {"path": PLAN}, [])  # nothing to check off: nothing read
