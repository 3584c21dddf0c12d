"""Parse a slash command's `$ARGUMENTS` string: the workflow flags plus free text.

Known flags: `--phase=ARG` / `--phase ARG`, `--dry-run`, `--log`, `--no-log`, `--verbose`,
`--level=info|debug` / `--level LEVEL`. A later flag overrides an earlier one (`--log --no-log` is no
log). `--` ends the flags: everything after it is free text. Any other `--word` is UNKNOWN_ARGUMENT.
Words that are not flags (including single-dash words such as `-1`) are returned, in order, as `rest`.

The phase value is returned as written; the caller validates it against the workflow (phases.parse_phases).
Text that shlex cannot split (an apostrophe as in "doesn't") is split on whitespace instead.
"""

from __future__ import annotations

import difflib
import shlex
from dataclasses import asdict, dataclass
from typing import Any

from fixloop.core.errors import FixloopError

VALUE_FLAGS: tuple[str, ...] = ("--phase", "--level")
BOOL_FLAGS: tuple[str, ...] = ("--dry-run", "--log", "--no-log", "--verbose")
KNOWN_FLAGS: tuple[str, ...] = (*VALUE_FLAGS, *BOOL_FLAGS)
LEVELS: tuple[str, ...] = ("info", "debug")


@dataclass(frozen=True)
class CommandArgs:
    phase: str | None = None  # None: not given (all phases)
    dry_run: bool = False
    log: bool | None = None  # None: not given (the caller's default applies)
    verbose: bool = False
    level: str | None = None  # None: not given
    rest: str = ""

    @property
    def effective_level(self) -> str:
        """debug when `--level debug` or `--verbose` was given, else info."""
        return "debug" if self.verbose or self.level == "debug" else "info"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def split_words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _unknown(word: str) -> FixloopError:
    name = word.split("=", 1)[0]
    close = difflib.get_close_matches(name, KNOWN_FLAGS, n=1, cutoff=0.6)
    hint = f"Did you mean {close[0]}?" if close else "Put free text after `--` if it starts with --."
    return FixloopError(
        "UNKNOWN_ARGUMENT",
        f"Unknown argument {name!r}.",
        received=word,
        valid_values=list(KNOWN_FLAGS),
        suggestion=hint,
    )


def parse_command_args(text: str | None) -> CommandArgs:
    words = split_words(text or "")
    values: dict[str, Any] = {}
    rest: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            rest.extend(words[index:])
            break
        if not word.startswith("--"):
            rest.append(word)
            continue
        name, has_value, value = word.partition("=")
        if name in VALUE_FLAGS:
            if not has_value:
                if index >= len(words) or words[index].startswith("--"):
                    raise FixloopError(
                        "MISSING_ARGUMENT_VALUE",
                        f"{name} needs a value.",
                        argument=name,
                        suggestion=f"Write {name}=VALUE or {name} VALUE.",
                    )
                value = words[index]
                index += 1
            value = value.strip()
            if not value:
                raise FixloopError(
                    "MISSING_ARGUMENT_VALUE",
                    f"{name} needs a value.",
                    argument=name,
                    suggestion=f"Write {name}=VALUE or {name} VALUE.",
                )
            if name == "--level" and value not in LEVELS:
                raise FixloopError(
                    "INVALID_ARGUMENT",
                    f"Invalid --level {value!r}.",
                    argument=name,
                    valid_values=list(LEVELS),
                    received=value,
                )
            values[name[2:]] = value
        elif name in BOOL_FLAGS:
            if has_value:
                raise FixloopError(
                    "INVALID_ARGUMENT",
                    f"{name} takes no value.",
                    argument=name,
                    received=word,
                    suggestion=f"Write {name} alone.",
                )
            if name == "--dry-run":
                values["dry_run"] = True
            elif name == "--verbose":
                values["verbose"] = True
            else:
                values["log"] = name == "--log"
        else:
            raise _unknown(word)
    return CommandArgs(rest=" ".join(rest), **values)
