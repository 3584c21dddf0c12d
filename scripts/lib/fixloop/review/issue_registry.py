"""Stable issue ids across the rounds of a run: `FL-001`, `FL-002`, ... in first-seen order, never reused.

A finding of a new round keeps the id of the finding it is the same as (review.identity): first by exact
fingerprint, then the closest remembered finding by line and words. Everything is linear in the number of
findings (dictionaries, and identity.NearbyFindings for the close matches).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fixloop.review.identity import Candidate, NearbyFindings, format_id, id_number


@dataclass
class Known:
    """What the registry remembers of one stable id: where the finding was last seen and how it read."""

    id: str
    file: str  # normalized
    category: str  # normalized
    line: int
    text: str | None  # the last description; None for an entry of the older rule, matched by fingerprint
    fingerprints: list[str] = field(default_factory=list)
    first_seen_round: int = 1
    last_seen_round: int = 1

    def candidate(self) -> Candidate | None:
        if self.text is None:
            return None
        return Candidate.of(
            {"file": self.file, "category": self.category, "line": self.line, "description": self.text}
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "file": self.file,
            "category": self.category,
            "line": self.line,
            "text": self.text,
            "fingerprints": list(self.fingerprints),
            "first_seen_round": self.first_seen_round,
            "last_seen_round": self.last_seen_round,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Known:
        text = data.get("text")  # absent in a registry of the older rule, which kept a normalized description
        return cls(
            id=str(data["id"]),
            file=str(data["file"]),
            category=str(data["category"]),
            line=int(data["line"]),
            text=text if isinstance(text, str) else None,
            fingerprints=[str(item) for item in data.get("fingerprints", [])],
            first_seen_round=int(data.get("first_seen_round", 1)),
            last_seen_round=int(data.get("last_seen_round", 1)),
        )


class IssueRegistry:
    """Stable ids by identity. Serialized into the run state as {"next": n, "issues": [...]}."""

    def __init__(self, known: Iterable[Known] = (), next_number: int = 1) -> None:
        self.known: dict[str, Known] = {}
        self.by_fingerprint: dict[str, str] = {}
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
        number = id_number(entry.id)
        if number is not None and number >= self.next_number:
            self.next_number = number + 1

    def _exact(self, candidate: Candidate, with_legacy: bool) -> str | None:
        found = self.by_fingerprint.get(candidate.fingerprint)
        if found is None and with_legacy:
            legacy = self.by_fingerprint.get(candidate.legacy_fingerprint)
            if legacy is not None and self.known[legacy].text is None:
                found = legacy
        return found

    def assign(self, candidates: list[Candidate], round_number: int) -> list[str]:
        """A stable id for each candidate (same order). Each id goes to at most one candidate per call.

        Pass 1: exact fingerprint (or, for an entry of the older rule, its fingerprint). Pass 2: the same
        finding (identity.closeness), closest pairs first. Pass 3: a new id, in candidate order.
        """
        ids: list[str | None] = [None] * len(candidates)
        taken: set[str] = set()
        with_legacy = any(entry.text is None for entry in self.known.values())
        for index, candidate in enumerate(candidates):
            known_id = self._exact(candidate, with_legacy)
            if known_id is not None and known_id not in taken:
                ids[index] = known_id
                taken.add(known_id)

        if None in ids:
            nearby: NearbyFindings[str] = NearbyFindings()
            for entry in self.known.values():
                remembered = entry.candidate() if entry.id not in taken else None
                if remembered is not None:
                    nearby.add(remembered, entry.id)
            pairs: list[tuple[tuple[int, float], int, int, str]] = []
            for index, candidate in enumerate(candidates):
                if ids[index] is None:
                    for score, known_id in nearby.matches(candidate):
                        pairs.append((score, id_number(known_id) or 0, index, known_id))
            for _score, _number, index, known_id in sorted(pairs):
                if ids[index] is None and known_id not in taken:
                    ids[index] = known_id
                    taken.add(known_id)

        return [
            self._record(candidate, ids[index], round_number) for index, candidate in enumerate(candidates)
        ]

    def _record(self, candidate: Candidate, assigned: str | None, round_number: int) -> str:
        if assigned is None:
            assigned = format_id(self.next_number)
            entry = Known(
                assigned,
                candidate.file,
                candidate.category,
                candidate.line,
                candidate.description.text,
                [candidate.fingerprint],
                round_number,
                round_number,
            )
            self._index(entry)
            return assigned
        entry = self.known[assigned]
        entry.line = candidate.line
        entry.text = candidate.description.text
        entry.last_seen_round = round_number
        if candidate.fingerprint not in self.by_fingerprint:
            entry.fingerprints.append(candidate.fingerprint)
            self.by_fingerprint[candidate.fingerprint] = assigned
        return assigned
