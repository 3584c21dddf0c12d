"""Stable identity of a review finding across reviewers and across rounds.

A fingerprint hashes (file, line bucket, category, normalized description). Two reports of the same finding
share it even when the wording differs in numbers, quoted strings, backticked identifiers, case or
whitespace. Across rounds a fix usually shifts lines, so `IssueRegistry.assign` first matches by exact
fingerprint, then by the same file, category and normalized description at the nearest line within
`LINE_TOLERANCE` lines. Ids (`FL-001`, `FL-002`, ...) are handed out in first-seen order and never reused.

Everything here is linear in the number of issues: lookups go through dictionaries, and the fuzzy match only
compares issues that share a (file, category, description) key.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

LINE_BUCKET = 10
LINE_TOLERANCE = 10
ID_PREFIX = "FL-"
FINGERPRINT_CHARS = 20

_BACKTICKED = re.compile(r"`[^`]*`")
_DOUBLE_QUOTED = re.compile(r'"[^"]*"')
# A single-quoted span, but not an apostrophe inside a word ("don't", "reviewer's").
_SINGLE_QUOTED = re.compile(r"(?<![A-Za-z0-9])'[^']*'(?![A-Za-z0-9])")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_SPACE = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s.;:,!]+$")


def normalize_description(text: str) -> str:
    """Lowercase; `identifiers` -> `id`; quoted strings -> "s"; numbers -> 0; whitespace collapsed."""
    value = _BACKTICKED.sub("`id`", text)
    value = _DOUBLE_QUOTED.sub('"s"', value)
    value = _SINGLE_QUOTED.sub('"s"', value)
    value = _NUMBER.sub("0", value.lower())
    value = _SPACE.sub(" ", value).strip()
    return _TRAILING.sub("", value)


def normalize_file(path: str) -> str:
    value = path.strip().replace("\\", "/")
    while value.startswith("./"):
        value = value[2:]
    return value


def normalize_category(category: str) -> str:
    return _SPACE.sub(" ", category.strip().lower())


def line_bucket(line: int) -> int:
    return (max(line, 1) - 1) // LINE_BUCKET


def identity_key(issue: Mapping[str, Any]) -> tuple[str, str, str]:
    """(file, category, normalized description): what must match for two findings to be the same."""
    return (
        normalize_file(str(issue.get("file", ""))),
        normalize_category(str(issue.get("category", ""))),
        normalize_description(str(issue.get("description", ""))),
    )


def fingerprint_of(file: str, line: int, category: str, normalized_description: str) -> str:
    material = "\x1f".join((file, str(line_bucket(line)), category, normalized_description))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:FINGERPRINT_CHARS]


def fingerprint(issue: Mapping[str, Any]) -> str:
    """The fingerprint of a reviewer issue (a dict with file, line, category, description)."""
    file, category, description = identity_key(issue)
    return fingerprint_of(file, _line(issue), category, description)


def _line(issue: Mapping[str, Any]) -> int:
    value = issue.get("line")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else 1


def format_id(number: int) -> str:
    return f"{ID_PREFIX}{number:03d}"


@dataclass
class Known:
    """What the registry remembers of one stable id."""

    id: str
    file: str
    category: str
    description: str  # normalized
    line: int
    fingerprints: list[str] = field(default_factory=list)
    first_seen_round: int = 1
    last_seen_round: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "file": self.file,
            "category": self.category,
            "description": self.description,
            "line": self.line,
            "fingerprints": list(self.fingerprints),
            "first_seen_round": self.first_seen_round,
            "last_seen_round": self.last_seen_round,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Known:
        return cls(
            id=str(data["id"]),
            file=str(data["file"]),
            category=str(data["category"]),
            description=str(data["description"]),
            line=int(data["line"]),
            fingerprints=[str(item) for item in data.get("fingerprints", [])],
            first_seen_round=int(data.get("first_seen_round", 1)),
            last_seen_round=int(data.get("last_seen_round", 1)),
        )


@dataclass(frozen=True)
class Candidate:
    """One finding of the current round to give a stable id to."""

    fingerprint: str
    file: str
    category: str
    description: str  # normalized
    line: int

    @classmethod
    def of(cls, issue: Mapping[str, Any]) -> Candidate:
        file, category, description = identity_key(issue)
        line = _line(issue)
        return cls(fingerprint_of(file, line, category, description), file, category, description, line)


class IssueRegistry:
    """Stable ids by fingerprint. Serialized into the run state as {"next": n, "issues": [...]}."""

    def __init__(self, known: Iterable[Known] = (), next_number: int = 1) -> None:
        self.known: dict[str, Known] = {}
        self.by_fingerprint: dict[str, str] = {}
        self.by_key: dict[tuple[str, str, str], list[str]] = {}
        self.next_number = next_number
        for entry in known:
            self._index(entry)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> IssueRegistry:
        if not data:
            return cls()
        return cls((Known.from_json(item) for item in data.get("issues", [])), int(data.get("next", 1)))

    def to_json(self) -> dict[str, Any]:
        return {"next": self.next_number, "issues": [entry.to_json() for entry in self.known.values()]}

    def _index(self, entry: Known) -> None:
        self.known[entry.id] = entry
        for value in entry.fingerprints:
            self.by_fingerprint.setdefault(value, entry.id)
        self.by_key.setdefault((entry.file, entry.category, entry.description), []).append(entry.id)
        number = _id_number(entry.id)
        if number is not None and number >= self.next_number:
            self.next_number = number + 1

    def assign(self, candidates: list[Candidate], round_number: int) -> list[str]:
        """A stable id for each candidate (same order). Each id goes to at most one candidate per call.

        Pass 1: exact fingerprint. Pass 2: same (file, category, description) and the nearest remembered
        line within LINE_TOLERANCE, closest pairs first. Pass 3: a new id, in candidate order.
        """
        ids: list[str | None] = [None] * len(candidates)
        taken: set[str] = set()
        for index, candidate in enumerate(candidates):
            known_id = self.by_fingerprint.get(candidate.fingerprint)
            if known_id is not None and known_id not in taken:
                ids[index] = known_id
                taken.add(known_id)

        pending: dict[tuple[str, str, str], list[int]] = {}
        for index, candidate in enumerate(candidates):
            if ids[index] is None:
                key = (candidate.file, candidate.category, candidate.description)
                if key in self.by_key:
                    pending.setdefault(key, []).append(index)
        for key, indexes in pending.items():
            pairs: list[tuple[int, int, int, str]] = []
            for index in indexes:
                for known_id in self.by_key[key]:
                    if known_id in taken:
                        continue
                    distance = abs(self.known[known_id].line - candidates[index].line)
                    if distance <= LINE_TOLERANCE:
                        pairs.append((distance, _id_number(known_id) or 0, index, known_id))
            for _distance, _number, index, known_id in sorted(pairs):
                if ids[index] is None and known_id not in taken:
                    ids[index] = known_id
                    taken.add(known_id)

        result: list[str] = []
        for index, candidate in enumerate(candidates):
            assigned = ids[index]
            if assigned is None:
                assigned = format_id(self.next_number)
                self._index(
                    Known(
                        assigned,
                        candidate.file,
                        candidate.category,
                        candidate.description,
                        candidate.line,
                        [candidate.fingerprint],
                        round_number,
                        round_number,
                    )
                )
            else:
                entry = self.known[assigned]
                entry.line = candidate.line
                entry.last_seen_round = round_number
                if candidate.fingerprint not in self.by_fingerprint:
                    entry.fingerprints.append(candidate.fingerprint)
                    self.by_fingerprint[candidate.fingerprint] = assigned
            result.append(assigned)
        return result


def _id_number(value: str) -> int | None:
    if value.startswith(ID_PREFIX) and value[len(ID_PREFIX) :].isdigit():
        return int(value[len(ID_PREFIX) :])
    return None


def issue_number(issue_id: str) -> int:
    """The number at the end of an issue id (FL-007 -> 7), 0 when there is none."""
    digits = issue_id.rsplit("-", 1)[-1]
    return int(digits) if digits.isdigit() else 0


def sorted_ids(ids: Iterable[str]) -> list[str]:
    """Distinct issue ids in number order (FL-2 before FL-10)."""
    return sorted(set(ids), key=lambda value: (issue_number(value), value))
