"""docs/plans.md: its example plan reads and batches as the page says."""

from __future__ import annotations

import re
from pathlib import Path

from fixloop.plans import batches, parse

DOC = Path(__file__).resolve().parents[4] / "docs" / "plans.md"


def test_the_example_plan_runs_in_the_batches_the_page_names() -> None:
    document = DOC.read_text(encoding="utf-8")
    match = re.search(r"^```markdown\n(.*?)^```$", document, re.MULTILINE | re.DOTALL)
    assert match is not None
    plan = parse(match.group(1))
    assert plan.title == "Plan: receiving stock and a clearer report"
    assert [task.id for task in plan.tasks] == [1, 2, 3, 4, 5, 6, 7]
    assert [[task.id for task in batch] for batch in batches(plan)] == [[1, 2, 3], [4, 5, 6], [7]]
    assert "It runs in three batches: tasks 1, 2, 3; tasks 4, 5, 6; task 7." in document
    assert plan.tasks[4].test == "python3 -m unittest tests.test_receiving"
    assert plan.tasks[6].depends == (4,)
