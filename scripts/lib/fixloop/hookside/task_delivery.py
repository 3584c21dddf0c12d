"""An agent's task as SubagentStart context that Claude Code delivers whole, however long the task is.

Claude Code 2.1.328 delivers hook context only up to 10,000 characters; a longer text becomes a 2 KB
preview, and the output contract at the end of every task is lost. A task over `CONTEXT_BUDGET` is
therefore delivered as its head, a note naming a file that holds the whole task and the line ranges to
read it in with the Read tool, and the task's contract, so the agent always sees how to answer.

The file named is the task file itself when its lines are short enough for the Read tool (which cuts
lines over 2,000 characters); else a copy beside it whose long lines are split, each piece but the last
ending with `CONTINUED`. Each range stays well under the Read tool's size limit for one call.

Standard library only: this runs in the SubagentStart hook.
"""

from __future__ import annotations

import os

from fixloop.core.contract_opening import CONTRACT_OPENING
from fixloop.store.atomic import write_atomic

CONTEXT_LIMIT = 10_000  # what Claude Code 2.1.328 delivers whole, measured in the real CLI
CONTEXT_BUDGET = 9_000  # the most fixloop sends, leaving room below the limit
LINE_LIMIT = 1_000  # longest line the file named holds (the Read tool cuts lines over 2,000 characters)
PART_CHARS = 40_000  # most characters one Read call is asked for (the tool refuses about 100,000)
PART_LINES = 1_500  # most lines one Read call is asked for (the tool reads 2,000 by default)
CONTINUED = " ↩"
SPLIT_SUFFIX = ".lines.md"
TAIL_WITHOUT_CONTRACT = 2_000  # the end shown when a task has no contract to find
MAX_RANGES_TEXT = 3_000  # a longer list of ranges becomes one rule: calls of a fixed size


def context_for(text: str, task_file: str) -> str:
    """What the SubagentStart hook sends for the task `text` written at `task_file`: the text itself
    when it fits `CONTEXT_BUDGET`, else head + where to read the whole task + the contract."""
    if len(text) <= CONTEXT_BUDGET:
        return text
    lines = text.split("\n")
    readable = task_file
    if any(len(line) > LINE_LIMIT for line in lines):
        split = split_long_lines(lines)
        copy = task_file.removesuffix(".md") + SPLIT_SUFFIX
        try:
            write_atomic(copy, "\n".join(split).encode("utf-8"), durable=False)
            readable, lines = copy, split
        except OSError:  # the task file then, whose longest lines the Read tool may cut
            pass
    note = reading_note(os.path.abspath(readable), lines, readable != task_file)
    ending = tail_of(text)
    room = CONTEXT_BUDGET - len(note) - len(ending) - 4
    head = text[: max(room, 0)]
    head = head[: head.rfind("\n")] if "\n" in head else ""
    return "\n\n".join(part for part in (head, note, ending) if part)


def split_long_lines(lines: list[str]) -> list[str]:
    """Every line over `LINE_LIMIT` split in pieces of at most `LINE_LIMIT` characters (marker included),
    each piece but the last ending with `CONTINUED`."""
    width = LINE_LIMIT - len(CONTINUED)
    out: list[str] = []
    for line in lines:
        while len(line) > LINE_LIMIT:
            out.append(line[:width] + CONTINUED)
            line = line[width:]
        out.append(line)
    return out


def read_ranges(lines: list[str]) -> list[tuple[int, int]]:
    """1-based (offset, limit) pairs covering every line, each under `PART_CHARS` and `PART_LINES`."""
    ranges: list[tuple[int, int]] = []
    start, size = 1, 0
    for number, line in enumerate(lines, 1):
        cost = len(line) + 1
        if number > start and (size + cost > PART_CHARS or number - start >= PART_LINES):
            ranges.append((start, number - start))
            start, size = number, 0
        size += cost
    ranges.append((start, len(lines) + 1 - start))
    return ranges


def reading_note(path: str, lines: list[str], split: bool) -> str:
    """The note that replaces the middle of the task: the file, its line count, the ranges to read."""
    ranges = read_ranges(lines)
    listed = ", ".join(f"{offset}:{limit}" for offset, limit in ranges)
    if len(listed) <= MAX_RANGES_TEXT:
        how = f"in {len(ranges)} call(s), offset:limit = {listed}"
    else:  # one rule instead: calls of as many lines as the longest line allows
        step = max(1, min(PART_LINES, PART_CHARS // (max(map(len, lines)) + 1)))
        how = f"in calls of limit {step}, offset 1, {1 + step}, {1 + 2 * step} and so on"
    note = [
        f"[fixloop: this task is {sum(map(len, lines)) + len(lines) - 1} characters, too long to hand over "
        "here. Only its start (above) and its answer contract (below) are shown.]",
        f"READ THE WHOLE TASK FIRST: {path} ({len(lines)} lines). Read it with the Read tool {how}, "
        "up to its last line; then do the task it gives.",
    ]
    if split:
        note.append(f"A line ending with '{CONTINUED.strip()}' goes on in the next line (a long line split).")
    return "\n".join(note)


def tail_of(text: str) -> str:
    """The end of the task the agent must see here: its contract (from `CONTRACT_OPENING`'s line on, with
    the line before when it is a heading or a task id), else its last `TAIL_WITHOUT_CONTRACT` characters."""
    at = text.rfind(CONTRACT_OPENING)
    if at < 0:
        tail = text[-TAIL_WITHOUT_CONTRACT:]
        return tail[tail.find("\n") + 1 :] if "\n" in tail else tail
    start = text.rfind("\n", 0, at) + 1
    before = text.rfind("\n", 0, max(start - 1, 0)) + 1
    previous = text[before : max(start - 1, before)]
    if previous.startswith("#") or previous.startswith("Your task_id is"):
        start = before
    return text[start:]
