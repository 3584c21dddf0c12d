"""A damaged review in a run's state fails once, by name, instead of in every later step."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers_review import two_rounds

from fixloop.cli import cli
from fixloop.review.state import Review
from fixloop.review.state_check import MAX_PROBLEMS, shape_problems
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
