"""The line-level syntax of a plan: headings, code fences, task items and the per-task option lines."""

from __future__ import annotations

import re
from dataclasses import dataclass

TAB_WIDTH = 4
MAX_ITEM_INDENT = 3  # a task item starts within the first 4 columns; deeper items are text of the task above

HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
CHECKBOX_ITEM = re.compile(r"^([ \t]*)[-*+][ \t]+\[([ xX])\](?=[ \t]|$)[ \t]*(.*)$")
NUMBERED_ITEM = re.compile(r"^([ \t]*)(\d{1,9})[.)](?=[ \t]|$)[ \t]*(?:\[([ xX])\](?=[ \t]|$)[ \t]*)?(.*)$")
EXPLICIT_ID = re.compile(
    r"^(?:\(\s*T(\d{1,9})\s*\)|T(\d{1,9})\s*:|Task\s+(\d{1,9})\s*:)[ \t]*", re.IGNORECASE
)
OPTION = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*|__)?(files?|tests?|depends(?:[ _-]on)?|deps)(?:\*\*|__)?[ \t]*:"
    r"(?:\*\*|__)?[ \t]*(.*?)[ \t]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Item:
    """A task item line: its marker, its checkbox and where its text starts."""

    indent: int
    number: int | None  # the number of a numbered item
    mark_column: int | None  # column of the checkbox's mark character, None without a checkbox
    text_column: int
    done: bool
    text: str  # everything after the marker and the checkbox, stripped


def split_lines(text: str) -> list[str]:
    """The text's lines, split at "\\n" only (so line numbers match editors); each keeps any "\\r"."""
    return text.split("\n")


def content_of(raw_line: str) -> str:
    return raw_line[:-1] if raw_line.endswith("\r") else raw_line


def indent_width(line: str) -> int:
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += TAB_WIDTH - width % TAB_WIDTH
        else:
            break
    return width


def heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line (`## Text`, optional closing `#`s), else None."""
    match = HEADING.match(line)
    if match is None:
        return None
    text = CLOSING_HASHES.sub("", match.group(2) or "").strip()
    return len(match.group(1)), text


def fence_opening(line: str) -> str | None:
    """The fence marker (```, ~~~~, ...) a line opens a code block with, else None."""
    match = FENCE.match(line)
    if match is None:
        return None
    marker, info = match.group(1), match.group(2)
    if marker[0] == "`" and "`" in info:  # ```x``` is inline code, not a fence
        return None
    return marker


def closes_fence(line: str, marker: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(marker) and stripped == marker[0] * len(stripped)


def task_item(line: str) -> Item | None:
    """The task item a line starts (checkbox `- [ ]` or numbered `1.` / `2)`), else None."""
    match = CHECKBOX_ITEM.match(line)
    number: int | None = None
    if match is not None:
        mark_group, text_group = 2, 3
    else:
        match = NUMBERED_ITEM.match(line)
        if match is None:
            return None
        number = int(match.group(2))
        mark_group, text_group = 3, 4
    indent = indent_width(match.group(1))
    if indent > MAX_ITEM_INDENT:
        return None
    mark = match.group(mark_group)
    return Item(
        indent=indent,
        number=number,
        mark_column=match.start(mark_group) if mark is not None else None,
        text_column=match.start(text_group),
        done=mark is not None and mark in "xX",
        text=match.group(text_group).strip(),
    )


def explicit_id(text: str) -> tuple[int | None, str]:
    """(id, rest) for a text starting with `(T3)`, `T3:` or `Task 3:`; (None, text) otherwise."""
    match = EXPLICIT_ID.match(text)
    if match is None:
        return None, text
    number = next(group for group in match.groups() if group is not None)
    return int(number), text[match.end() :].strip()


def option(line: str) -> tuple[str, str] | None:
    """("files" | "test" | "depends", value) for an option line of a task, else None."""
    match = OPTION.match(line)
    if match is None:
        return None
    key = match.group(1).lower()
    name = "files" if key.startswith("file") else "test" if key.startswith("test") else "depends"
    return name, match.group(2)
