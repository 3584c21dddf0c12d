"""A task handed over as SubagentStart context: whole under the budget; past it, head + the file to read whole
+ the contract, never over Claude Code's 10,000-character limit; the file readable whole with Read."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fixloop.contracts.prompt_text import contract_text
from fixloop.hookside import task_delivery
from fixloop.hookside.task_delivery import (
    CONTEXT_BUDGET,
    CONTEXT_LIMIT,
    CONTINUED,
    LINE_LIMIT,
    PART_CHARS,
    PART_LINES,
)

READ_TOOL_LINE_CUT = 2_000  # the Read tool cuts longer lines


def reviewer_task(files: int, pad: int = 0) -> str:
    lines = ["fixloop run r1: review round 1.", "Working directory: /p", "", "Review these changed files:"]
    lines += [f"- src/module_{n:05d}.py" for n in range(files)]
    lines += ["x" * 49] * (pad // 50) + (
        ["x" * (pad % 50 - 1)] if pad % 50 else []
    )  # pad: lines and newlines
    return "\n".join([*lines, "", "Task document:", "{}", "", contract_text("reviewer")])


def verifier_task(findings: int, description_chars: int) -> str:
    issues = [
        {"id": f"CR-{n:04d}", "file": f"src/m{n}.py", "line": n, "description": "d" * description_chars}
        for n in range(findings)
    ]
    return "\n".join(
        [
            "fixloop run r1: verify the findings.",
            "",
            "Issues:",
            json.dumps(issues, indent=1),
            "",
            'Your task_id is "r1-r1".',
            contract_text("verifier"),
        ]
    )


def read_tool(path: Path, offset: int, limit: int) -> list[str]:
    """What the Read tool gives for one call: lines offset..offset+limit-1, each cut at 2,000 characters."""
    lines = path.read_text(encoding="utf-8").split("\n")
    return [line[:READ_TOOL_LINE_CUT] for line in lines[offset - 1 : offset - 1 + limit]]


def read_as_told(context: str) -> str:
    """The task an agent gets by following the context's note: every range it names, joined, split lines
    put back together."""
    match = re.search(r"READ THE WHOLE TASK FIRST: (\S+) \((\d+) lines\)", context)
    assert match is not None, context
    path, total = Path(match[1]), int(match[2])
    listed = re.search(r"offset:limit = ([\d:, ]+)", context)
    if listed is not None:
        ranges = [(int(o), int(n)) for o, n in re.findall(r"(\d+):(\d+)", listed[1])]
    else:
        step = int(re.findall(r"in calls of limit (\d+), offset 1, ", context)[0])
        ranges = [(offset, step) for offset in range(1, total + 1, step)]
    got: list[str] = []
    for offset, limit in ranges:
        assert offset == len(got) + 1  # contiguous, in order
        got += read_tool(path, offset, limit)
    assert len(got) == total
    text = "\n".join(got)
    return text.replace(CONTINUED + "\n", "")


def test_a_task_within_the_budget_is_handed_over_as_it_is(tmp_path: Path) -> None:
    base = reviewer_task(10)
    exact = base + "y" * (CONTEXT_BUDGET - len(base))
    assert len(exact) == CONTEXT_BUDGET
    assert task_delivery.context_for(exact, str(tmp_path / "code-reviewer.md")) == exact
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("files", [0, 1, 300, 5_000])
def test_past_the_budget_the_context_names_the_file_and_ends_with_the_whole_contract(
    tmp_path: Path, files: int
) -> None:
    base = reviewer_task(files)
    text = base if len(base) > CONTEXT_BUDGET else reviewer_task(files, CONTEXT_BUDGET + 1 - len(base))
    assert len(text) == CONTEXT_BUDGET + 1 or files >= 300  # one past the budget, or far past it
    task_file = tmp_path / "code-reviewer.md"
    task_file.write_text(text, encoding="utf-8")
    context = task_delivery.context_for(text, str(task_file))
    assert len(context) <= CONTEXT_BUDGET < CONTEXT_LIMIT
    assert context.endswith("\n" + contract_text("reviewer"))
    assert context.startswith("fixloop run r1: review round 1.\nWorking directory: /p\n")
    assert f"READ THE WHOLE TASK FIRST: {task_file} (" in context  # the task file itself: no long line
    assert read_as_told(context) == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["code-reviewer.md"]


def test_far_past_the_limit_long_lines_are_split_in_a_copy_the_read_tool_shows_whole(tmp_path: Path) -> None:
    text = verifier_task(3_000, 2_500)  # about 8 MB, every description longer than the Read tool shows
    task_file = tmp_path / "review-verifier.md"
    task_file.write_text(text, encoding="utf-8")
    context = task_delivery.context_for(text, str(task_file))
    assert len(context) <= CONTEXT_BUDGET
    assert context.endswith('\nYour task_id is "r1-r1".\n' + contract_text("verifier"))
    copy = tmp_path / "review-verifier.lines.md"
    assert f"READ THE WHOLE TASK FIRST: {copy} (" in context
    assert f"A line ending with '{CONTINUED.strip()}' goes on in the next line" in context
    lines = copy.read_text(encoding="utf-8").split("\n")
    assert max(map(len, lines)) <= LINE_LIMIT
    assert read_as_told(context) == text
    assert task_file.read_text(encoding="utf-8") == text  # the task file is left as the driver wrote it


def test_each_range_stays_within_one_read_call() -> None:
    lines = ["a" * 999] * 130 + ["b"] * 4_000
    ranges = task_delivery.read_ranges(lines)
    covered = [n for offset, limit in ranges for n in range(offset, offset + limit)]
    assert covered == list(range(1, len(lines) + 1))
    for offset, limit in ranges:
        assert limit <= PART_LINES
        assert sum(len(line) + 1 for line in lines[offset - 1 : offset - 1 + limit]) <= PART_CHARS


def test_too_many_ranges_to_list_become_one_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_delivery, "MAX_RANGES_TEXT", 100)
    text = verifier_task(2_000, 900)  # ~2 MB of lines under the limit: about 50 ranges
    context = task_delivery.context_for(text, str(tmp_path / "review-verifier.md"))
    assert len(context) <= CONTEXT_BUDGET
    step = PART_CHARS // (max(map(len, text.split("\n"))) + 1)
    assert (
        f"in calls of limit {step}, offset 1, {1 + step}, {1 + 2 * step} and so on, up to its last" in context
    )
    (tmp_path / "review-verifier.md").write_text(text)
    assert read_as_told(context) == text
    assert context.endswith(contract_text("verifier"))


def test_a_task_without_a_contract_keeps_its_end(tmp_path: Path) -> None:
    text = "\n".join(f"line {n}" for n in range(3_000)) + "\nEND MARK"
    context = task_delivery.context_for(text, str(tmp_path / "x.md"))
    assert len(context) <= CONTEXT_BUDGET
    assert context.endswith("line 2999\nEND MARK")


def test_a_split_copy_that_cannot_be_written_names_the_task_file(tmp_path: Path) -> None:
    task_file = tmp_path / "review-fixer.md"
    text = "Fix.\nIssues:\n" + ("z" * 3_000 + "\n") * 5 + contract_text("fixer")
    task_file.write_text(text)
    (tmp_path / "review-fixer.lines.md").mkdir()  # in the way of the copy
    context = task_delivery.context_for(text, str(task_file))
    assert f"READ THE WHOLE TASK FIRST: {task_file} (" in context
    assert "goes on in the next line" not in context
    assert context.endswith(contract_text("fixer"))
