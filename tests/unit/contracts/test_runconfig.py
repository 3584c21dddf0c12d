"""contracts.runconfig reads a run's stored config as LoopConfig would, without pydantic when it can."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import typing
from typing import Any

import pytest
from helpers_imports import LIB
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from fixloop.contracts.coordinator import LoopConfig, Price, RoleModels
from fixloop.contracts.runconfig import (
    FIELD_NAMES,
    INT_BOUNDS,
    RunConfig,
    RunModels,
    RunPrice,
    _acceptable,
    _built,
    run_config,
)


def stored(**changes: Any) -> dict[str, Any]:
    """A config as a run stores it: LoopConfig's JSON dump."""
    return LoopConfig.model_validate(changes).model_dump(mode="json")


def from_model(config: LoopConfig) -> RunConfig:
    return _built(config.model_dump(mode="json"))


def test_the_fields_are_loopconfigs_with_the_same_defaults() -> None:
    assert tuple(LoopConfig.model_fields) == FIELD_NAMES
    assert RunConfig() == from_model(LoopConfig())
    assert tuple(f.name for f in dataclasses.fields(RunModels)) == tuple(RoleModels.model_fields)
    assert tuple(f.name for f in dataclasses.fields(RunPrice)) == tuple(Price.model_fields)


def test_the_allowed_values_and_bounds_are_loopconfigs() -> None:
    hints = typing.get_type_hints(RunConfig)
    for name, info in LoopConfig.model_fields.items():
        if typing.get_origin(info.annotation) is typing.Literal:
            assert typing.get_args(hints[name]) == typing.get_args(info.annotation), name
        bounds = {type(item).__name__: item for item in _metadata(info)}
        if "Ge" in bounds:
            highest = bounds["Le"].le if "Le" in bounds else None
            assert INT_BOUNDS[name] == (bounds["Ge"].ge, highest), name
    ints = {name for name, hint in hints.items() if hint in (int, int | None)}
    assert set(INT_BOUNDS) == ints


def _metadata(info: Any) -> list[Any]:
    items = list(info.metadata)
    for arg in typing.get_args(info.annotation):  # an optional bounded int: Annotated[int, ...] | None
        items += list(getattr(arg, "__metadata__", ()))
    return items


def test_a_stored_config_reads_as_loopconfig_reads_it() -> None:
    document = stored(
        test_command="pytest -q",
        max_cost=2,
        max_tokens=5000,
        models={"fixer": "opus"},
        prices={"my-model": {"input": 1, "output": 2, "cache_write": 0.5, "cache_read": 0.25}},
        categories={"style": False},
        review_exclude=["docs/**"],
        min_severity="medium",
    )
    assert _acceptable(document)
    config = run_config(document)
    assert config == from_model(LoopConfig.model_validate(document))
    assert config.models.fixer == "opus" and config.max_cost == 2.0
    assert config.prices["my-model"] == RunPrice(input=1.0, output=2.0, cache_write=0.5, cache_read=0.25)
    assert list(config.prices) == ["my-model"]  # load_config merges the list prices in before a run starts


def test_an_older_runs_config_gets_loopconfigs_defaults_for_missing_fields() -> None:
    document = stored(confidence_threshold=60)
    del document["review_shard_files"]
    assert not _acceptable(document)
    config = run_config(document)
    assert config.review_shard_files == 200 and config.confidence_threshold == 60
    assert run_config(None) == RunConfig() == run_config("not a dict")


@pytest.mark.parametrize(
    "change",
    [
        {"surprise": 1},
        {"max_review_iterations": 0},
        {"confidence_threshold": True},
        {"models": {"x": "opus"}},
    ],
)
def test_a_config_loopconfig_refuses_is_refused_as_before(change: dict[str, Any]) -> None:
    document = {**stored(), **change}
    assert not _acceptable(document)
    with pytest.raises(ValidationError):
        run_config(document)


def test_a_stored_config_is_read_without_loading_pydantic() -> None:
    code = (
        "import json, sys; from fixloop.contracts.runconfig import run_config; "
        "c = run_config(json.loads(sys.argv[1])); "
        "print(c.confidence_threshold, c.models.reviewers, 'pydantic' in sys.modules)"
    )
    document = json.dumps(stored(confidence_threshold=70))
    done = subprocess.run(
        [sys.executable, "-c", code, document],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(LIB)},
    )
    assert done.stdout.split() == ["70", "sonnet", "False"]


# Values near and past every field's limits, of the right type and of others.
ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-2, max_value=10_000_001),
    st.sampled_from([0.0, 1.5, -1.0, float("inf"), float("nan"), 2**60, 3.0]),
    st.sampled_from(
        ["", " ", "a", " a", "a ", "a\n", "src/**", "sonnet", "opus", "OWNER", "NONE", "x" * 513]
    ),
    st.sampled_from(["rollback", "continue", "manual", "stop", "auto", "ask", "default", "high", "low"]),
)
LISTS = st.lists(ANY_VALUE, max_size=3) | st.lists(st.sampled_from(["OWNER", "won't fix", "b/*"]), max_size=9)
CATEGORIES = st.dictionaries(
    st.sampled_from(["style", "a b", "-x", "", "Bug_1", "x" * 65]), ANY_VALUE, max_size=3
)
MODELS = st.fixed_dictionaries(
    {},
    optional={
        role: st.sampled_from(["haiku", "sonnet", "opus", "gpt", 1]) for role in RunModels.__annotations__
    },
)
PRICE = st.fixed_dictionaries(
    {
        part: st.sampled_from([0, 1, 2.5, -1, float("inf"), "3", True])
        for part in ("input", "output", "cache_write")
    },
    optional={"cache_read": st.sampled_from([0.1, 7]), "extra": st.just(1)},
)
PRICES = st.dictionaries(st.sampled_from(["haiku", "x-model"]), PRICE, max_size=2)


def field_values(name: str) -> st.SearchStrategy[Any]:
    if name == "models":
        return MODELS | ANY_VALUE
    if name == "prices":
        return PRICES | ANY_VALUE
    if name == "categories":
        return CATEGORIES | ANY_VALUE
    if name in ("pr_trusted_associations", "pr_dismissal_words", "review_include", "review_exclude"):
        return LISTS | ANY_VALUE
    return ANY_VALUE


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_whatever_the_fast_reader_accepts_loopconfig_accepts_with_the_same_values(
    data: st.DataObject,
) -> None:
    document = stored()
    for name in data.draw(st.lists(st.sampled_from(FIELD_NAMES), max_size=4, unique=True)):
        document[name] = data.draw(field_values(name), label=name)
    try:
        expected: RunConfig | None = from_model(LoopConfig.model_validate(document))
    except ValidationError:
        expected = None
    if _acceptable(document):
        assert expected is not None
        assert _built(document) == expected
    if expected is None:
        with pytest.raises(ValidationError):
            run_config(document)
    else:
        assert run_config(document) == expected
