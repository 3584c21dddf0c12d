"""A change does not silence its own review: an inline `fixloop: ignore` counts only where it already was
at the review's base; a mark the change added keeps its finding, and both kinds are named in the final
message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers_review import CR, Loop, issue, make_state
from helpers_runs import git

from fixloop.workflows.gaps import gap_lines

BASE = [
    "import os",
    "old = eval(a)  # fixloop: ignore[security] reviewed in 2024",
    "value = eval(data)",
    "print(value)",
]
OLD = issue("O", 2, "eval of a", category="security", severity="critical")


def write(root: Path, name: str, lines: list[str]) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def reviewed(
    root: Path, findings: list[dict[str, Any]], changed: tuple[str, ...] = ("src/app.py",), **state: Any
) -> Loop:
    """A review run of `changed` in `root` whose code-reviewer reports `findings` in round 1."""
    loop = Loop({**make_state(changed, use_verifier=False), "project_dir": str(root), **state})
    loop.next()
    loop.verify(True)
    loop.next()
    loop.review({CR: findings})
    return loop


def round_one(loop: Loop) -> dict[str, Any]:
    rnd: dict[str, Any] = loop.review_doc["rounds"][0]
    return rnd


def test_a_mark_the_change_added_keeps_its_finding_and_both_kinds_are_named(git_project: Path) -> None:
    write(git_project, "src/app.py", BASE)
    commit(git_project, "app")
    write(git_project, "src/app.py", [*BASE[:2], "# fixloop: ignore", *BASE[2:]])
    new = issue("E", 4, "eval of user data", category="security", severity="critical")
    loop = reviewed(git_project, [OLD, new])
    fix = loop.next()
    assert [(item["line"], item["description"]) for item in fix["issues"]] == [(4, "eval of user data")]
    rnd = round_one(loop)
    assert rnd["suppressed"] == {"inline_ignore": 1}
    assert [(item["file"], item["line"], item["reason"]) for item in rnd["suppressed_findings"]] == [
        ("src/app.py", 2, "inline_ignore")
    ]
    assert [(item["file"], item["line"], item["reason"]) for item in rnd["inline_marks_refused"]] == [
        ("src/app.py", 4, "inline_mark_new")
    ]
    (warning,) = [event for event in loop.of_type("WARNING") if event["code"] == "INLINE_IGNORE_NOT_COUNTED"]
    assert warning["message"] == (
        "The `fixloop: ignore` mark at src/app.py:4 is new in this change, so its security finding is kept: "
        "a change does not silence its own review."
    )
    lines = gap_lines(loop.state)
    assert "Suppressed by a `fixloop: ignore` already in the code: src/app.py:2 (security)." in lines
    assert (
        "Not suppressed: the `fixloop: ignore` at src/app.py:4 (security) is new in this change (a change "
        "does not silence its own review). To accept the finding, add its issue to the baseline (`fixloop "
        "baseline add RUN ISSUE`), or commit the mark before the review."
    ) in lines


def test_a_marked_line_the_change_edited_counts_no_more(git_project: Path) -> None:
    write(git_project, "src/app.py", BASE)
    commit(git_project, "app")
    write(git_project, "src/app.py", [BASE[0], BASE[1].replace("eval(a)", "eval(a + b)"), *BASE[2:]])
    loop = reviewed(git_project, [OLD])
    assert [item["line"] for item in loop.next()["issues"]] == [2]
    assert round_one(loop)["suppressed"] == {}
    assert [item["line"] for item in round_one(loop)["inline_marks_refused"]] == [2]


def test_a_mark_in_a_new_file_does_not_count(git_project: Path) -> None:
    write(git_project, "src/new.py", ["x = eval(y)  # fixloop: ignore"])
    finding = issue("N", 1, "eval of y", file="src/new.py", category="security")
    loop = reviewed(git_project, [finding], ("src/new.py",))
    assert [item["file"] for item in loop.next()["issues"]] == ["src/new.py"]
    assert round_one(loop)["suppressed"] == {}


def test_a_mark_committed_after_the_reviews_base_is_part_of_the_change(git_project: Path) -> None:
    write(git_project, "src/app.py", BASE[:1] + BASE[2:])
    base = commit(git_project, "app without the old line")
    write(git_project, "src/app.py", BASE)
    commit(git_project, "the change: a suppressed eval")
    since_base = {"review_base": {"diff_base": base, "reason": "since"}}
    loop = reviewed(git_project, [OLD], **since_base)
    assert [item["line"] for item in loop.next()["issues"]] == [2]
    # The same mark, reviewed against HEAD (where it already is), counts.
    again = reviewed(git_project, [OLD])
    again.next()
    assert round_one(again)["suppressed"] == {"inline_ignore": 1}


def test_outside_a_git_repository_marks_count_as_written(tmp_path: Path) -> None:
    write(tmp_path, "src/app.py", BASE)
    loop = reviewed(tmp_path, [OLD])
    loop.next()
    assert round_one(loop)["suppressed"] == {"inline_ignore": 1}
    assert "inline_marks_refused" not in round_one(loop)
