"""`fixloop: ignore` marks in any comment syntax, on the finding's line or the line above."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.review.inline_ignore import SourceLines, inline_ignored, marked_categories


@pytest.mark.parametrize(
    ("line", "covered"),
    [
        ("x = eval(s)  # fixloop: ignore", {"*"}),
        ("eval(s); // fixloop: ignore[security]", {"security"}),
        ("/* fixloop: ignore[security, style] */", {"security", "style"}),
        ("<!-- fixloop:ignore[a11y] -->", {"a11y"}),
        ("SELECT 1; -- fixloop: ignore[sql-injection]", {"sql-injection"}),
        ("; fixloop: ignore", {"*"}),
        ("x  # FixLoop: Ignore[Security]", {"security"}),
        ("x  # fixloop: ignore[logic error]", {"logic-error"}),  # one category, however it is written
        ("x  # fixloop: ignore[Logic_Error,  style ]", {"logic-error", "style"}),
        ("x  # fixloop: ignore[*]", {"*"}),
        ("x  # fixloop: ignore[]", set()),
        ("x  # fixloop: ignored", set()),
        ("x  # fixloop: ignore-me", set()),
        ("x  # fixloop ignore", set()),
        ("x = 1", set()),
    ],
)
def test_marks_in_any_comment_syntax(line: str, covered: set[str]) -> None:
    assert marked_categories(line) == covered


def test_a_mark_counts_on_the_line_or_the_line_above_and_for_any_reviewer_line(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("one\n# fixloop: ignore[bug]\nthree\nfour\nfive\n")
    sources = SourceLines(tmp_path)

    def ignored(line: int, category: str = "bug", *others: int) -> bool:
        issue = {"file": "a.py", "line": line, "category": category, "sources": [{"line": n} for n in others]}
        return inline_ignored(issue, sources)

    assert ignored(2) and ignored(3)
    assert not ignored(1) and not ignored(4)
    assert not ignored(3, "security")
    assert ignored(5, "bug", 3)  # another reviewer placed the same finding on line 3


def test_files_that_cannot_be_read_have_no_marks(tmp_path: Path) -> None:
    sources = SourceLines(tmp_path)
    assert sources.lines("missing.py") == []
    assert sources.lines("../outside.py") == []
    assert SourceLines(None).lines("a.py") == []


@pytest.mark.parametrize(
    ("mark", "category"), [("logic-error", "logic error"), ("logic error", "Logic_Error")]
)
def test_a_category_is_the_same_with_spaces_underscores_or_hyphens(
    tmp_path: Path, mark: str, category: str
) -> None:
    (tmp_path / "a.py").write_text(f"x = 1  # fixloop: ignore[{mark}]\n")
    assert inline_ignored({"file": "a.py", "line": 1, "category": category}, SourceLines(tmp_path))
    assert not inline_ignored({"file": "a.py", "line": 1, "category": "logic"}, SourceLines(tmp_path))
