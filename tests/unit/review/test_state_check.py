"""A damaged review in a run's state fails once, by name, instead of in every later step."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers_review import two_rounds
from hypothesis import given, settings
from hypothesis import strategies as st

from fixloop.cli import cli
from fixloop.review.state import Review
from fixloop.review.state_check import MAX_PROBLEMS, _check, shape_problems
from fixloop.runs import creation
from fixloop.store import layout


def test_a_real_review_has_its_declared_shape() -> None:
    assert shape_problems(two_rounds().state["review"], Review) == []


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda r: r.update(rounds="oops"), "review.rounds: expected an array, got str"),
        (lambda r: r["rounds"].append(5), "review.rounds[2]: expected an object, got int"),
        (
            lambda r: r["rounds"][0]["issues"][0].update(line="12"),
            "review.rounds[0].issues[0].line: expected int, got str",
        ),
        (lambda r: r.update(trend=["a"]), "review.trend[0]: expected int, got str"),
        (lambda r: r.update(question=5), "review.question: unexpected int"),
        (lambda r: r["rounds"][0].update(closed="yes"), "review.rounds[0].closed: expected bool, got str"),
        (
            lambda r: r.update(consecutive_no_improvement=True),
            "review.consecutive_no_improvement: expected int, got bool",
        ),
    ],
)
def test_damage_is_named(damage: Any, problem: str) -> None:
    review = copy.deepcopy(two_rounds().state["review"])
    damage(review)
    assert problem in shape_problems(review, Review)


def _containers(value: Any) -> list[Any]:
    """Every dict and list inside `value`, itself included."""
    found = [value]
    children = value.values() if isinstance(value, dict) else value
    for child in children:
        if isinstance(child, dict | list):
            found.extend(_containers(child))
    return found


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=5,
)


@settings(max_examples=300, deadline=None)
@given(where=st.integers(min_value=0), key=st.integers(min_value=0), replacement=JSON_VALUES)
def test_the_quick_shape_check_agrees_with_the_walk(where: int, key: int, replacement: Any) -> None:
    """shape_problems answers [] without walking only for exactly the reviews the walk finds nothing in."""
    review = copy.deepcopy(two_rounds().state["review"])
    containers = _containers(review)
    target = containers[where % len(containers)]
    if isinstance(target, dict) and target:
        target[sorted(target)[key % len(target)]] = replacement
    elif isinstance(target, list) and target:
        target[key % len(target)] = replacement
    walked: list[str] = []
    _check(review, Review, "review", walked)
    assert shape_problems(review, Review) == walked


def test_the_list_of_problems_is_bounded() -> None:
    review = copy.deepcopy(two_rounds().state["review"])
    review["trend"] = ["x"] * 1000
    assert len(shape_problems(review, Review)) == MAX_PROBLEMS


def test_commands_on_a_damaged_review_answer_state_corrupt(git_project: Path) -> None:
    (git_project / "src" / "app.py").write_text("print('changed')\n")
    run_id = creation.start_run("review", root=git_project, git_base="")["state"]["run_id"]
    runner = CliRunner()
    assert runner.invoke(cli, ["next", run_id]).exit_code == 0
    path = Path(layout.state_path(git_project, run_id))
    state = json.loads(path.read_text())
    state["review"]["rounds"] = "oops"
    path.write_text(json.dumps(state))
    for args in (["next", run_id], ["review", "status", run_id], ["review", "report", run_id]):
        result = runner.invoke(cli, args)
        error = json.loads(result.output)["error"]
        assert (result.exit_code, error["code"]) == (2, "STATE_CORRUPT"), args
        assert error["problems"] == ["review.rounds: expected an array, got str"]
    assert json.loads(path.read_text())["error_count"] == 0  # refused, not counted as the run's errors
