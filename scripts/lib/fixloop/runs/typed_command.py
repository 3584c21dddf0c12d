"""A fixloop slash command as the user typed it: which workflow, its flags, and the rest of the words, exact.

The text after the command name is read as whole-word flags (`--phase=0,1`, `--phase 0,1`, `--dry-run`,
...) wherever they stand, and free text, kept exactly as typed (quotes, backticks, `$`, new lines, any
script) except for the flag words taken out. `--` ends the flags. Nothing here is ever given to a shell.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from fixloop.core.errors import FixloopError
from fixloop.runs.phases import COMMAND_WORKFLOWS

COMMANDS = COMMAND_WORKFLOWS  # command -> (workflow, stack)
PREFIX = "/fixloop:"
VALUE_FLAGS: tuple[str, ...] = ("--phase", "--level", "--since", "--log-file", "--job", "--config")
BOOL_FLAGS: tuple[str, ...] = ("--dry-run", "--log", "--no-log", "--verbose", "--trust-config", "--no-gate")
# A flag whose value may be left out: `--pr` (the current branch's pull request), `--pr 7`, `--pr=URL`.
OPTIONAL_VALUE_FLAGS: tuple[str, ...] = ("--pr",)
FLAGS = (*VALUE_FLAGS, *BOOL_FLAGS, *OPTIONAL_VALUE_FLAGS)
_PR_VALUE = re.compile(r"#?[1-9][0-9]{0,9}|https?://\S+/pull/[1-9][0-9]{0,9}\S*")
LEVELS = ("info", "debug")
_QUOTES = "\"'"


@dataclass(frozen=True)
class TypedCommand:
    command: str
    workflow: str
    stack: str | None
    text: str  # the free text, exact
    options: dict[str, Any] = field(
        default_factory=dict
    )  # flag name without dashes -> value (True for a bool)

    @property
    def level(self) -> str:
        return "debug" if self.options.get("verbose") or self.options.get("level") == "debug" else "info"


def _words(text: str) -> list[tuple[int, int]]:
    """(start, end) of each run of non-white-space characters."""
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(text):
        if text[index].isspace():
            index += 1
            continue
        start = index
        while index < len(text) and not text[index].isspace():
            index += 1
        spans.append((start, index))
    return spans


def _unknown(word: str) -> FixloopError:
    name = word.split("=", 1)[0]
    close = difflib.get_close_matches(name, FLAGS, n=1, cutoff=0.6)
    return FixloopError(
        "UNKNOWN_ARGUMENT",
        f"Unknown argument {name!r}." + (f" Did you mean {close[0]}?" if close else ""),
        received=word,
        valid_values=list(FLAGS),
        suggestion=f"Did you mean {close[0]}?" if close else "Put free text after `--` if it starts with --.",
    )


def _value(text: str, spans: list[tuple[int, int]], position: int, flag: str) -> tuple[str, int, int]:
    """The value after a value flag (a quoted value may hold spaces): (value, next word index, end offset)."""
    if position >= len(spans):
        raise FixloopError("MISSING_ARGUMENT_VALUE", f"{flag} needs a value.", argument=flag)
    start, end = spans[position]
    if text[start] in _QUOTES:
        closing = text.find(text[start], start + 1)
        if closing != -1:
            after = position
            while after < len(spans) and spans[after][0] <= closing:
                after += 1
            return text[start + 1 : closing], after, closing + 1
    return text[start:end], position + 1, end


def parse_options(text: str) -> tuple[dict[str, Any], str]:
    """(flags, free text): flags taken out wherever they stand, the rest of `text` kept as it is."""
    spans = _words(text)
    options: dict[str, Any] = {}
    removed: list[tuple[int, int]] = []
    position = 0
    while position < len(spans):
        start, end = spans[position]
        word = text[start:end]
        if word == "--":
            removed.append((start, end))
            break
        if not word.startswith("--"):
            position += 1
            continue
        name, has_value, value = word.partition("=")
        if name in OPTIONAL_VALUE_FLAGS:
            last = end
            if not has_value and position + 1 < len(spans):
                following = text[spans[position + 1][0] : spans[position + 1][1]]
                if _PR_VALUE.fullmatch(following):
                    value, last = following, spans[position + 1][1]
                    position += 1
            options[name[2:]] = value.strip()
            removed.append((start, last))
            position += 1
        elif name in BOOL_FLAGS and not has_value:
            options[name[2:].replace("-", "_")] = True
            removed.append((start, end))
            position += 1
        elif name in VALUE_FLAGS:
            last = end
            if has_value:
                position += 1
            else:
                value, position, last = _value(text, spans, position + 1, name)
            if not value.strip():
                raise FixloopError("MISSING_ARGUMENT_VALUE", f"{name} needs a value.", argument=name)
            options[name[2:].replace("-", "_")] = value.strip()
            removed.append((start, last))
        else:
            raise _unknown(word)
    level = options.get("level")
    if level is not None and level not in LEVELS:
        raise FixloopError("INVALID_ARGUMENT", f"Invalid --level {level!r}.", valid_values=list(LEVELS))
    if options.pop("no_log", False):
        options["log"] = False
    return options, _without(text, removed)


def _without(text: str, removed: list[tuple[int, int]]) -> str:
    """`text` minus the removed spans and the white space right after each; outer white space trimmed."""
    kept: list[str] = []
    cursor = 0
    for start, end in removed:
        kept.append(text[cursor:start])
        cursor = end
        while cursor < len(text) and text[cursor] in " \t":
            cursor += 1
    kept.append(text[cursor:])
    return "".join(kept).strip()


def parse_typed_command(prompt: str, command: str) -> TypedCommand:
    """The command `/fixloop:<command> ...` in `prompt`; PROMPT_MISMATCH when the prompt is another one."""
    if command not in COMMANDS:
        raise FixloopError("UNKNOWN_COMMAND", f"Unknown command {command!r}.", valid_values=sorted(COMMANDS))
    typed = prompt.lstrip()
    head = PREFIX + command
    rest = typed[len(head) :]
    if not typed.startswith(head) or (rest and not rest[0].isspace()):
        raise FixloopError(
            "PROMPT_MISMATCH",
            f"The prompt stored for this session is not /fixloop:{command}.",
            expected=head,
        )
    options, free = parse_options(rest)
    workflow, stack = COMMANDS[command]
    return TypedCommand(command, workflow, stack, free, options)
