"""A failed import is the environment's fault only when it is a dependency's."""

from __future__ import annotations

import pytest

from fixloop.core.broken_env import is_dependency_failure


@pytest.mark.parametrize(
    ("error", "dependency"),
    [
        (ModuleNotFoundError("No module named 'pydantic'", name="pydantic"), True),
        (
            ModuleNotFoundError(
                "No module named 'pydantic_core._pydantic_core'", name="pydantic_core._pydantic_core"
            ),
            True,
        ),
        (ImportError("corrupt click", name="click"), True),
        (ImportError("corrupt"), True),
        (
            ModuleNotFoundError("No module named 'fixloop.workflows.gone'", name="fixloop.workflows.gone"),
            False,
        ),
        (
            ImportError("cannot import name 'x' from 'fixloop.review.state'", name="fixloop.review.state"),
            False,
        ),
    ],
)
def test_which_import_failures_are_the_environment_s(error: ImportError, dependency: bool) -> None:
    assert is_dependency_failure(error) is dependency
