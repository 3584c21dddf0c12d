"""The diagnosis confidence: the analyst's scores, the engine's measured reproducibility and its caps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixloop.workflows.bugfix.confidence import assess, names_a_failure, reproducibility


def answer(clarity: int, specificity: int, context: int, file: str | None = "src/app.py") -> dict[str, Any]:
    return {
        "root_cause": {"summary": "s", "file": file, "line": 1, "evidence": ["e"]},
        "factors": {"clarity": clarity, "specificity": specificity, "context": context},
    }


@pytest.mark.parametrize(
    ("collected", "expected"),
    [
        ({"reproduced": True, "description": ""}, (100, "reproduced")),
        (
            {"reproduced": False, "description": "tests/test_api.py::test_login fails"},
            (40, "named_not_reproduced"),
        ),
        ({"reproduced": False, "description": "it raises KeyError on save"}, (40, "named_not_reproduced")),
        ({"reproduced": False, "description": "the page is slow sometimes"}, (20, "description_only")),
        ({"reproduced": False}, (20, "description_only")),
    ],
)
def test_reproducibility_is_measured(collected: dict[str, Any], expected: tuple[int, str]) -> None:
    assert reproducibility(collected) == expected


def test_what_names_a_failure() -> None:
    assert names_a_failure("Checkout.test.tsx breaks")
    assert names_a_failure("expected 3 but got 4")
    assert not names_a_failure("login does not work")


@pytest.mark.parametrize(
    ("scores", "reproduced", "score", "decision"),
    [
        ((90, 90, 80), True, 90, "auto_continue"),
        ((60, 60, 59), False, 50, "ask_user"),  # (60 + 60 + 59 + 20) / 4 = 49.75 -> 50
        ((41, 40, 40), False, 35, "stop"),  # 35.25 -> 35
        ((40, 40, 40), True, 55, "ask_user"),
        ((20, 20, 21), True, 40, "ask_user"),  # 40.25 -> 40: the ask_user threshold itself
        ((20, 20, 19), True, 40, "ask_user"),  # 39.75 -> 40
        ((20, 19, 19), True, 40, "ask_user"),  # 39.5 rounds half up -> 40
        ((19, 19, 19), True, 39, "stop"),
        ((0, 0, 0), False, 5, "stop"),
        ((100, 100, 100), True, 100, "auto_continue"),
    ],
)
def test_score_is_the_rounded_mean(
    tmp_path: Path, scores: tuple[int, int, int], reproduced: bool, score: int, decision: str
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    result = assess(tmp_path, {"reproduced": reproduced, "description": ""}, answer(*scores))
    assert (result["confidence_score"], result["decision"]) == (score, decision)
    assert result["threshold"] == {"auto_continue": 60, "ask_user": 40, "stop": 0}
    assert result["measured"] == ["reproducibility"]


@pytest.mark.parametrize(
    ("file", "why"), [("src/missing.py", "file_not_found"), (None, "no_file"), ("../x.py", "file_not_found")]
)
def test_specificity_is_capped_without_an_existing_file(tmp_path: Path, file: str | None, why: str) -> None:
    result = assess(tmp_path, {"reproduced": True}, answer(80, 95, 80, file=file))
    assert result["factors"] == {"clarity": 80, "specificity": 40, "context": 80, "reproducibility": 100}
    assert result["reported"] == {"clarity": 80, "specificity": 95, "context": 80}
    assert result["adjustments"] == {"reproducibility": "reproduced", "specificity": why}
    assert result["confidence_score"] == 75


def test_a_low_specificity_is_not_raised_by_the_cap(tmp_path: Path) -> None:
    result = assess(tmp_path, {"reproduced": True}, answer(80, 10, 80, file=None))
    assert result["factors"]["specificity"] == 10
    assert "specificity" not in result["adjustments"]
