"""The Markdown review report."""

from __future__ import annotations

import copy
from typing import Any, cast

from helpers_review import (
    two_rounds,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

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


# ---- agent text reads as written in a Markdown renderer --------------------------------------------

RENDERER = MarkdownIt("commonmark").enable("table")  # CommonMark with GitHub's tables; raw HTML allowed


def _with_description(description: str) -> dict[str, Any]:
    """The two-round state with the broad-except finding's description replaced."""

    def swap(value: Any) -> Any:
        if value == "Broad except hides errors":
            return description
        if isinstance(value, dict):
            return {key: swap(item) for key, item in value.items()}
        if isinstance(value, list):
            return [swap(item) for item in value]
        return value

    return cast("dict[str, Any]", swap(copy.deepcopy(two_rounds().state)))


def _description_cell(text: str, marker: str) -> list[Token]:
    """The inline tokens of the Description cell of the row whose Category is `marker`."""
    tokens = RENDERER.parse(text)
    cells: list[list[Token]] = []
    for token in tokens:
        if token.type == "tr_open":
            cells = []
        elif token.type == "inline" and token.children is not None:
            cells.append(token.children)
        elif token.type == "tr_close" and len(cells) == 7 and "".join(t.content for t in cells[4]) == marker:
            return cells[5]
    raise AssertionError(f"no table row of category {marker!r}")


def test_angle_brackets_and_ampersands_are_text_not_html() -> None:
    description = "Returns <empty> for `List<Item>` & R&amp;D | x"
    text = markdown(_with_description(description))
    assert "| Returns \\<empty\\> for `List<Item>` \\& R\\&amp;D \\| x |" in text
    html = RENDERER.render(text)
    assert "<empty>" not in html
    assert "Returns &lt;empty&gt; for <code>List&lt;Item&gt;</code> &amp; R&amp;amp;D | x</td>" in html


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab &;<>|`/\n", min_size=1, max_size=40).filter(lambda t: t.strip("\n ")))
def test_any_description_renders_as_its_own_text_in_one_cell(description: str) -> None:
    cell = _description_cell(markdown(_with_description(description)), "error-handling")
    assert [token.type for token in cell if token.type not in ("text", "code_inline", "softbreak")] == []
    shown = "".join(token.content for token in cell)
    # Code spans drop their backticks and may trim spaces; every other character is shown as written.
    assert "".join(shown.replace("`", "").split()) == "".join(description.replace("`", "").split())
