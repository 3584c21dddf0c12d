"""When two review findings are the same finding: within a round (two reviewers report it) and across
rounds (a fix moved the code, the reviewer put it in other words).

A finding's identity has three parts, read from its file, line, category and description:
- where: the file and the category, normalized, and the line;
- names: what the description names exactly, which tells one finding from its neighbour: each
  `backticked`, "double-", 'single-' or “smart-”quoted span, each number, and each bare word that looks
  like code (`user_id`, `getUser`, `os.path`, `save()`, `src/app.py`, a one-letter `x`). Names are compared
  without case, call arguments, a trailing `:line` or surrounding punctuation, so `save()`, "save" and
  'Save' are one name. "line 12", "lines 3-5" and "L12" are locations, not names: a fix shifts them;
- words: the stems of the other words, less common short words, so that case, punctuation, whitespace and
  small wording changes ("is not validated" / "is never validated") do not matter.

Two findings are the same when they share file and category, their lines are at most LINE_TOLERANCE apart,
they name the same things (a name one of them quotes may stand bare in the other's text), and their words
overlap enough: a Dice coefficient of at least WORDS_MIN_OVERLAP. So "`user_id` is never validated" and
"`email` is never validated" stay two findings, and so do the same words 30 lines apart. Within a round,
two findings of one reviewer are never merged unless one repeats the other (see group_reports).

The fingerprint is a short stable label of one finding (a hash of file, line block of 10, category, names
and words). It is what baselines, SARIF and `fixloop baseline remove` carry; matching never needs it to be
equal. Baseline entries written before names were part of the identity carry a fingerprint of the older
rule; they still match through their file, line, category and description, which every entry keeps.

Everything stays linear in the number of findings: findings are indexed by (file, category, block of
LINE_TOLERANCE lines), a finding is compared with at most MAX_COMPARED indexed ones in its own and the two
neighbouring blocks, and only the first MAX_TEXT characters of a description are read.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

LINE_BUCKET = 10
LINE_TOLERANCE = 10
WORDS_MIN_OVERLAP = 0.5
MAX_COMPARED = 32
MAX_TEXT = 1000
MAX_NAMES_WRITTEN_BARE = 4  # names one side quotes and the other writes bare
ID_PREFIX = "FL-"
FINGERPRINT_CHARS = 20

_LINE_REFERENCE = re.compile(r"\b(?:lines?|l\.?)\s*#?\d+(?:\s*(?:-|\u2013|to|and|,)\s*\d+)*", re.IGNORECASE)
_QUOTED = re.compile(
    r"`([^`]*)`"
    r'|"([^"]*)"'
    r"|\u201c([^\u201d]*)\u201d"  # smart double quotes
    r"|\u2018([^\u2019]*)\u2019"  # smart single quotes
    r"|(?<![A-Za-z0-9])'([^']*)'(?![A-Za-z0-9])"  # not an apostrophe inside a word ("don't")
)
_NUMBER = re.compile(r"(?<![\w.:])(\d+(?:\.\d+)*)")
_CALL_ARGUMENTS = re.compile(r"\([^()]*\)$")
_LOCATION = re.compile(r":\d+(?::\d+)?$")
_EDGE_PUNCTUATION = " \t\n.,;:!?()[]{}<>"
_TOKEN_EDGES = ".,;:!?"
_SINGLE_LETTER = re.compile(r"[b-hj-zB-HJ-Z]")  # a variable such as x; not the words "a" and "I"
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
_JOINED = re.compile(r"\w(?:\.|::|->|/)\w")
_NOT_WORD = re.compile(r"[^a-z0-9_]+")
_SPACE = re.compile(r"\s+")
_STOP_TEXT = (
    "a an the is are was were be been being am it its this that these those there here of in on at to for by "
    "with from into onto as and or but so if when then than not no never may might can could should would "
    "will must shall do does did has have had which who what where while also any all some each every very "
    "too only just before after without within via per about see line lines"
)
_STOP_WORDS = frozenset(_STOP_TEXT.split())
_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "edly", "ed", "es", "ly", "s", "e")
STEM_CHARS = 6


def normalize_file(path: str) -> str:
    value = path.strip().replace("\\", "/")
    while value.startswith("./"):
        value = value[2:]
    return value


def normalize_category(category: str) -> str:
    return _SPACE.sub(" ", category.strip().lower())


def line_bucket(line: int) -> int:
    return (max(line, 1) - 1) // LINE_BUCKET


def _plain(text: str) -> str:
    """Lowercase words of letters, digits and underscores, one space apart."""
    return _NOT_WORD.sub(" ", text.lower()).strip()


def normalize_name(raw: str) -> str:
    """One spelling of a name: `Save(user)`, "save()" and ' save ' are all `save`."""
    if raw.isidentifier():
        return raw.lower()
    value = _SPACE.sub(" ", raw.strip()).lower()
    value = _LOCATION.sub("", _CALL_ARGUMENTS.sub("", value))
    return value.strip(_EDGE_PUNCTUATION)


def _looks_like_code(token: str) -> bool:
    if token.isalpha() and (token.islower() or token.istitle() or token.isupper()):
        return False  # a plain word, the common case
    if "_" in token or token.endswith(")") or _CAMEL.search(token):
        return True
    # dotted, scoped or path-like, but not an abbreviation such as e.g or i.e
    return bool(_JOINED.search(token)) and any(len(part) > 1 for part in re.split(r"[./:>-]+", token))


@functools.lru_cache(maxsize=4096)
def _stem(word: str) -> str:
    """A crude stem, enough for "close", "closes", "closed" and "closing", or "log" and "logged"."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            word = word[: -len(suffix)]
            if len(word) > 2 and word[-1] == word[-2]:
                word = word[:-1]
            break
    return word[:STEM_CHARS]


def _stems(text: str) -> set[str]:
    return {_stem(word) for word in _plain(text).split() if len(word) > 1 and word not in _STOP_WORDS}


@dataclass(frozen=True)
class Description:
    """What a description says, for matching: its names, its word stems, and its plain text."""

    text: str  # as written, cut at MAX_TEXT characters
    names: frozenset[str]
    words: frozenset[str]  # stems of the words that are not names
    name_words: frozenset[str]  # stems of the words inside names
    plain: str  # " word word ... ", padded, to look a name up as whole words

    @classmethod
    def of(cls, text: str) -> Description:
        text = text[:MAX_TEXT]
        names: set[str] = set()

        def keep(match: re.Match[str]) -> str:
            names.add(normalize_name(match.group(match.lastindex or 0)))
            return " "

        located = _LINE_REFERENCE.sub(" ", text)
        rest = _NUMBER.sub(keep, _QUOTED.sub(keep, located))
        prose: list[str] = []
        for raw in rest.split():
            token = raw.strip(_TOKEN_EDGES)
            if not ("(" in token and token.endswith(")")):  # keep the parentheses of a call
                token = token.strip(_EDGE_PUNCTUATION)
            if _looks_like_code(token) or _SINGLE_LETTER.fullmatch(token):
                names.add(normalize_name(token))
            else:
                prose.append(token)
        names.discard("")
        words = _stems(" ".join(prose).replace("'", "").replace("\u2019", ""))
        name_words = _stems(" ".join(names))
        return cls(text, frozenset(names), frozenset(words), frozenset(name_words), f" {_plain(located)} ")

    def mentions(self, name: str) -> bool:
        """Whether the text has `name` as whole words, quoted or not."""
        plain = _plain(name)
        return bool(plain) and f" {plain} " in self.plain


def _names_agree(a: Description, b: Description) -> bool:
    if len(a.names ^ b.names) > MAX_NAMES_WRITTEN_BARE:
        return False
    return all(b.mentions(name) for name in a.names - b.names) and all(
        a.mentions(name) for name in b.names - a.names
    )


def words_overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Dice coefficient of two sets of word stems (1.0 when both are empty)."""
    if not a and not b:
        return 1.0
    return 2 * len(a & b) / (len(a) + len(b))


@dataclass(frozen=True)
class Candidate:
    """One finding's identity: where it is and what its description says."""

    fingerprint: str
    file: str
    category: str
    line: int
    description: Description

    @classmethod
    def of(cls, issue: Mapping[str, Any]) -> Candidate:
        file = normalize_file(str(issue.get("file", "")))
        category = normalize_category(str(issue.get("category", "")))
        line = _line(issue)
        description = Description.of(str(issue.get("description", "")))
        return cls(fingerprint_of(file, line, category, description), file, category, line, description)

    @property
    def legacy_fingerprint(self) -> str:
        """What the older rule called this finding (see legacy_fingerprint)."""
        return legacy_fingerprint(self.file, self.line, self.category, self.description.text)

    @property
    def block(self) -> tuple[str, str, int]:
        return self.file, self.category, self.line // LINE_TOLERANCE


def closeness(a: Candidate, b: Candidate) -> tuple[int, float] | None:
    """(line distance, 1 - words overlap) when `a` and `b` are the same finding, else None."""
    if a.file != b.file or a.category != b.category:
        return None
    distance = abs(a.line - b.line)
    if distance > LINE_TOLERANCE:
        return None
    # A name that one side quotes and the other writes bare is a name on both sides, not a word.
    named = a.description.name_words | b.description.name_words
    overlap = words_overlap(a.description.words - named, b.description.words - named)
    if overlap < WORDS_MIN_OVERLAP or not _names_agree(a.description, b.description):
        return None
    return distance, 1.0 - overlap


def same_finding(a: Candidate, b: Candidate) -> bool:
    return closeness(a, b) is not None


def fingerprint_of(file: str, line: int, category: str, description: Description) -> str:
    names = "\x1e".join(sorted(description.names))
    words = " ".join(sorted(description.words))
    material = "\x1f".join((file, str(line_bucket(line)), category, names, words))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:FINGERPRINT_CHARS]


def fingerprint(issue: Mapping[str, Any]) -> str:
    """The fingerprint of a reviewer issue (a dict with file, line, category, description)."""
    return Candidate.of(issue).fingerprint


def _line(issue: Mapping[str, Any]) -> int:
    value = issue.get("line")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else 1


T = TypeVar("T")


class NearbyFindings(Generic[T]):
    """Findings indexed by file, category and block of lines, each with a value (an id, an index)."""

    def __init__(self) -> None:
        self.blocks: dict[tuple[str, str, int], list[tuple[Candidate, T]]] = {}

    def add(self, candidate: Candidate, value: T) -> None:
        self.blocks.setdefault(candidate.block, []).append((candidate, value))

    def matches(self, candidate: Candidate) -> list[tuple[tuple[int, float], T]]:
        """(closeness, value) of each indexed finding that is the same as `candidate`, among the first
        MAX_COMPARED in its block and the neighbouring ones."""
        file, category, block = candidate.block
        found: list[tuple[tuple[int, float], T]] = []
        compared = 0
        for number in (block, block - 1, block + 1):
            for known, value in self.blocks.get((file, category, number), ()):
                if compared == MAX_COMPARED:
                    return found
                compared += 1
                score = closeness(candidate, known)
                if score is not None:
                    found.append((score, value))
        return found


def group_reports(reports: Sequence[tuple[str, Candidate]]) -> list[int]:
    """For each (agent, finding) of one round, the index of its group, groups numbered in first-seen order.

    A report joins the closest group (nearest line, then most words shared, then the earliest) whose first
    report is the same finding and that has no report of the same agent yet: an agent that lists two
    findings meant two. Only a report identical to one of its agent's (same line and fingerprint) joins it.
    """
    index: NearbyFindings[int] = NearbyFindings()
    agents: list[set[str]] = []
    exact: dict[tuple[str, str, int], int] = {}
    groups: list[int] = []
    for agent, candidate in reports:
        key = (agent, candidate.fingerprint, candidate.line)
        group = exact.get(key)
        if group is None:
            options = [
                (score, number) for score, number in index.matches(candidate) if agent not in agents[number]
            ]
            if options:
                group = min(options)[1]
            else:
                group = len(agents)
                agents.append(set())
                index.add(candidate, group)
        agents[group].add(agent)
        exact.setdefault(key, group)
        groups.append(group)
    return groups


# ---- the rule before names were part of the identity (to read older registries) --------------------

_LEGACY_BACKTICKED = re.compile(r"`[^`]*`")
_LEGACY_DOUBLE_QUOTED = re.compile(r'"[^"]*"')
_LEGACY_SINGLE_QUOTED = re.compile(r"(?<![A-Za-z0-9])'[^']*'(?![A-Za-z0-9])")
_LEGACY_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_LEGACY_TRAILING = re.compile(r"[\s.;:,!]+$")


def legacy_fingerprint(file: str, line: int, category: str, description: str) -> str:
    """The fingerprint the older rule gave (file and category normalized): backticked names, quoted strings
    and numbers replaced by placeholders, so it could not tell `user_id` from `email`."""
    value = _LEGACY_BACKTICKED.sub("`id`", description)
    value = _LEGACY_DOUBLE_QUOTED.sub('"s"', value)
    value = _LEGACY_SINGLE_QUOTED.sub('"s"', value)
    value = _LEGACY_NUMBER.sub("0", value.lower())
    value = _LEGACY_TRAILING.sub("", _SPACE.sub(" ", value).strip())
    material = "\x1f".join((file, str(line_bucket(line)), category, value))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:FINGERPRINT_CHARS]


# ---- issue ids ----------------------------------------------------------------------------------------


def format_id(number: int) -> str:
    return f"{ID_PREFIX}{number:03d}"


def id_number(value: str) -> int | None:
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
