"""Text helpers every parser shares: terminal noise removal, block trimming, and the never-raise wrapper."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TypeVar

from fixloop.core.redact import redact
from fixloop.failures.model import Failure, Parsed

ANGLE = "\u203a"  # Jest and Playwright join test names with this right-pointing angle quote

# CSI sequences (colours, cursor moves, erase), OSC/APC/DCS strings (titles, links, Buildkite timestamps)
# and the remaining two-character escapes.
_ANSI = re.compile(
    r"\x1b\[[0-9;:?<=>]*[ -/]*[@-~]"
    r"|\x1b[\]_P^X][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x9b[0-9;?]*[ -/]*[@-~]"
)


def strip_ansi(text: str) -> str:
    if "\x1b" not in text and "\x9b" not in text:
        return text
    return _ANSI.sub("", text)


def resolve_carriage_returns(line: str) -> str:
    """What a terminal shows for a line that a progress bar rewrote with \\r: its last non-empty state."""
    line = line.rstrip("\r")
    if "\r" not in line:
        return line
    for part in reversed(line.split("\r")):
        if strip_ansi(part).strip():
            return part
    return ""


def clean_line(line: str) -> str:
    return strip_ansi(resolve_carriage_returns(line))


def clean_lines(text: str) -> list[str]:
    """The text's lines as a terminal would show them: no colour codes, no overwritten progress."""
    return [clean_line(line) for line in text.split("\n")]


def trim_blank(lines: Sequence[str]) -> list[str]:
    """The lines without the blank lines that lead or trail them."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return list(lines[start:end])


def block(lines: Sequence[str]) -> str:
    """Lines joined as an error block: blank edges trimmed, the common indentation removed."""
    kept = trim_blank(lines)
    indents = [len(line) - len(line.lstrip(" ")) for line in kept if line.strip()]
    cut = min(indents, default=0)
    return "\n".join(line[cut:].rstrip() for line in kept)


def first_line(lines: Iterable[str]) -> str:
    for line in lines:
        if line.strip():
            return line.strip()
    return ""


def to_int(text: str | None) -> int | None:
    if text is None or not text.isdigit() or len(text) > 9:
        return None
    return int(text)


def same_file(path: str, file: str) -> bool:
    """Whether `path` (often absolute) names `file` (often relative to the project)."""
    path, file = path.replace("\\", "/"), file.replace("\\", "/").lstrip("./")
    return bool(file) and (path == file or path.endswith("/" + file))


_COUNT = re.compile(
    r"(?<!\d)(\d+) (passed|failed|skipped|errors?|ignored|pending|todo|flaky|xfailed|xpassed)\b"
)


def counted(text: str) -> dict[str, int]:
    """`3 failed, 1 skipped | 2 passed` -> {"failed": 3, "skipped": 1, "passed": 2} (first of each word)."""
    found: dict[str, int] = {}
    for number, word in _COUNT.findall(text):
        word = "errors" if word.startswith("error") else word
        found.setdefault(word, int(number[-9:]))
    return found


def redacted(failure: Failure) -> Failure:
    return replace(failure, message=redact(failure.message), details=redact(failure.details))


Text = TypeVar("Text")


def tolerant(runner: str) -> Callable[[Callable[[Text], Parsed]], Callable[[Text], Parsed]]:
    """Make a parser total: any exception gives an empty result with a note; secrets are masked;
    an output where the parser recognised nothing gets a note saying so."""

    def wrap(parser: Callable[[Text], Parsed]) -> Callable[[Text], Parsed]:
        @functools.wraps(parser)
        def parse(text: Text) -> Parsed:
            try:
                parsed = parser(text)
            except Exception as error:  # a parser bug on odd input must not stop the workflow
                note = f"could not read the {runner} output ({type(error).__name__})"
                return Parsed(runner=runner, notes=(note,))
            failures = tuple(redacted(failure) for failure in parsed.failures)
            notes = parsed.notes
            if not parsed.found_anything():
                notes = (*notes, f"no {runner} results found in the output")
            return replace(parsed, failures=failures, notes=notes)

        return parse

    return wrap


def unique(failures: Iterable[Failure]) -> tuple[Failure, ...]:
    """Failures in order, each (suite, test id, kind) once: the first one printed wins."""
    seen: set[tuple[str | None, str, str]] = set()
    kept: list[Failure] = []
    for failure in failures:
        key = (failure.suite, failure.test_id, failure.kind)
        if key not in seen:
            seen.add(key)
            kept.append(failure)
    return tuple(kept)
