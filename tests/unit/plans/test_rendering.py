from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from plans.plan_strategies import PROPERTIES, SPELLINGS, plans, spell, without_lines

from fixloop.core.errors import FixloopError
from fixloop.plans import Plan, Task, parse, render


def test_the_canonical_form() -> None:
    plan = Plan(
        title="Ship it",
        tasks=(
            Task(id=1, title="Add the parser", section=("Phase 1",), files=("src/a.py", "my dir/b.py")),
            Task(
                id=2,
                title="T9: looks like an id",
                section=("Phase 1",),
                done=True,
                test="pytest -q",
                depends=(1,),
            ),
            Task(id=5, title="Wire it", section=("Phase 2", "CLI"), body="First this.\n\n- then that"),
        ),
    )
    assert render(plan) == (
        "# Ship it\n"
        "\n"
        "## Phase 1\n"
        "\n"
        "1. [ ] Add the parser\n"
        "    files: src/a.py, `my dir/b.py`\n"
        "2. [x] (T2) T9: looks like an id\n"
        "    test: pytest -q\n"
        "    depends: 1\n"
        "\n"
        "## Phase 2\n"
        "\n"
        "### CLI\n"
        "\n"
        "5. [ ] Wire it\n"
        "    First this.\n"
        "\n"
        "    - then that\n"
    )


def test_a_section_that_comes_back_is_opened_again() -> None:
    text = "## A\n### B\n- [ ] one\n## A\n- [ ] two\n"
    plan = parse(text)
    assert [task.section for task in plan.tasks] == [("A", "B"), ("A",)]
    assert without_lines(parse(render(plan))) == without_lines(plan)


def test_a_plan_that_no_headings_can_produce_is_refused() -> None:
    plan = Plan(title=None, tasks=(Task(id=1, title="a", section=("A",)), Task(id=2, title="b")))
    with pytest.raises(FixloopError) as caught:
        render(plan)
    assert (caught.value.code, caught.value.message) == ("PLAN_INVALID", "task 2's section cannot be written")


@PROPERTIES
@given(plans(acyclic=False))
def test_render_then_parse_gives_the_plan_back(plan: Plan) -> None:
    text = render(plan)
    parsed = parse(text)
    assert without_lines(parsed) == plan
    lines = text.split("\n")
    for task in parsed.tasks:
        assert lines[task.line - 1].startswith(f"{task.id}. [")


@PROPERTIES
@given(plans(acyclic=False), st.data())
def test_every_accepted_spelling_parses_to_the_same_plan(plan: Plan, data: st.DataObject) -> None:
    spellings = data.draw(st.lists(SPELLINGS, min_size=len(plan.tasks), max_size=len(plan.tasks)))
    newline = data.draw(st.sampled_from(["\n", "\r\n"]))
    parsed = parse(spell(plan, spellings, newline))
    assert without_lines(parsed) == plan
    assert without_lines(parse(render(parsed))) == plan
