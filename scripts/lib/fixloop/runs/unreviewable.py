"""Changed files no reviewer can read as code: binary content, and files their own header marks as
generated (Go's `// Code generated ... DO NOT EDIT.` line, the `@generated` marker). They are left out of
the review and named in its coverage (runs.coverage), never handed to a reviewer unsaid."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

SNIFF_BYTES = 8_192  # git's own binary test looks at as much
HEADER_LINES = 5
GENERATED_HEADER = re.compile(rb"^\W*Code generated .* DO NOT EDIT\.|@generated\b", re.MULTILINE)
BINARY = "binary"
GENERATED = "generated"
REASONS = {
    BINARY: "binary content: there is no text to review",
    GENERATED: "its header marks it as generated: review its source instead",
}


def content_kind(path: Path) -> str | None:
    """BINARY, GENERATED, or None for a text file to review (also when it cannot be read: a deleted
    file's change is still the reviewers' to see in the diff)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return None
    if b"\0" in head:
        return BINARY
    header = b"\n".join(head.split(b"\n")[:HEADER_LINES])
    return GENERATED if GENERATED_HEADER.search(header) else None


def split_unreviewable(root: Path, files: Sequence[str]) -> tuple[list[str], list[dict[str, str]]]:
    """(to review, left out): each file left out as {"file", "code", "reason"}."""
    kept: list[str] = []
    left_out: list[dict[str, str]] = []
    for name in files:
        kind = content_kind(root / name)
        if kind is None:
            kept.append(name)
        else:
            left_out.append({"file": name, "code": kind, "reason": REASONS[kind]})
    return kept, left_out
