"""Reading the run state: the review object (created on first use), its rounds, the run's config and id."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from fixloop.contracts.runconfig import RunConfig, run_config
from fixloop.core.errors import FixloopError
from fixloop.review.state import STATE_VERSION, Review, Round, RunState, new_review
from fixloop.review.state_check import shape_problems


def started_review(state: Mapping[str, Any]) -> Review | None:
    """The run's review object, or None before the loop has started it."""
    review = state.get("review")
    if isinstance(review, dict) and review.get("version") == STATE_VERSION:
        problems = shape_problems(review, Review)
        if problems:
            raise FixloopError(
                "STATE_CORRUPT",
                f"The review of run {state.get('run_id')} is damaged: {'; '.join(problems)}.",
                run_id=state.get("run_id"),
                problems=problems,
            )
        return cast(Review, review)
    return None


def review_of(state: RunState, now_ms: int) -> Review:
    """The run's review object, created on first use (runs.lifecycle starts it as {})."""
    review = started_review(state)
    if review is None:
        review = new_review(now_ms)
        state["review"] = review
    return review


def config_of(state: Mapping[str, Any]) -> RunConfig:
    """The run's config, read without pydantic when it is as the run stored it (contracts.runconfig)."""
    return run_config(state.get("config"))


def run_id_of(state: Mapping[str, Any]) -> str:
    return str(state.get("run_id") or "")


def current_round(review: Review) -> Round | None:
    rounds = review.get("rounds") or []
    return rounds[-1] if rounds else None


def previous_round(review: Review, rnd: Mapping[str, Any]) -> Round | None:
    rounds = review["rounds"]
    index = next(i for i, item in enumerate(rounds) if item["iteration"] == rnd["iteration"])
    return rounds[index - 1] if index > 0 else None
