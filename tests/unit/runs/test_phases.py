"""Each workflow's phases and the --phase argument."""

from __future__ import annotations

import pytest

from fixloop.core.errors import FixloopError
from fixloop.runs.phases import parse_phases


def test_a_single_phase_workflow_names_its_one_phase() -> None:
    with pytest.raises(FixloopError) as caught:
        parse_phases("review", "3")
    assert caught.value.code == "INVALID_PHASE"
    assert caught.value.details["suggestion"] == "This workflow has one phase: use 0 or 'all'."
    assert caught.value.details["valid_values"] == ["0", "all"]


def test_a_multi_phase_workflow_names_its_range() -> None:
    with pytest.raises(FixloopError) as caught:
        parse_phases("bugfix", "9")
    assert caught.value.details["suggestion"] == (
        "Use numbers 0-5 or 'all'; separate several with commas, e.g. 0,1."
    )
