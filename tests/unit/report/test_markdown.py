"""The Markdown review report."""

from __future__ import annotations

from helpers_review import (
    two_rounds,
)

from fixloop.report.markdown import markdown


def test_markdown_sections() -> None:
    text = markdown(two_rounds().state)
    assert text.startswith("# fixloop review report — run abcd1234\n")
    for heading in (
        "## Summary",
        "## Iterations",
        "## Fixed issues",
        "## Introduced issues",
        "## Remaining issues",
    ):
        assert heading in text
    assert "| partial | running | 2 | 3 | 1 | 3 |" in text
    assert "| 1 | 6/6 | 3 | 2 | 2/2/0 | 0 | 0 | 0 |" in text
    assert (
        "| FL-001 | high | 90 | `src/app.py:10` | bug | Missing null check on `user` | code-reviewer, "
        in text
    )
    assert "- `src/app.py`" in text
    assert "- Clear names" in text
