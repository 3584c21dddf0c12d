"""Which merged findings of a round the engine drops, whatever the reviewers said, and why.

A finding is dropped for the first reason that applies, in this order: its file is outside the config's
path filters (`path_filter`), the project's baseline accepted it (`baseline`), an inline `fixloop: ignore`
mark that was there before the change covers it (`inline_ignore`; a mark the change added counts not, and
is named in `inline_marks_refused`), its category is turned off (`category_off`), it is less severe than
`min_severity` (`below_min_severity`). Of the rest, at most `max_findings` are kept, the most severe and
then the most confident first (`over_max_findings`). The round keeps a count per reason and a short record
of each dropped finding; dropped findings get no id, so they never become fixable nor remaining.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from fixloop.contracts.runconfig import RunConfig
from fixloop.review.identity import Candidate, NearbyFindings, normalize_file
from fixloop.review.inline_ignore import COUNTED, NEW, BaseMarks, SourceLines, category_key, inline_mark
from fixloop.review.state import Issue, Round
from fixloop.runs.baseline import BaselineEntry, load_baseline
from fixloop.runs.path_filters import PathFilter

SEVERITY_RANK: dict[str, int] = {"critical": 4, "high": 3, "medium": 2, "low": 1}
REASONS: tuple[str, ...] = (
    "path_filter",
    "baseline",
    "inline_ignore",
    "category_off",
    "below_min_severity",
    "over_max_findings",
)
Merged = tuple[Candidate, Issue]  # rounds.merge_issues gives one per finding


def path_filter_of(config: RunConfig) -> PathFilter:
    return PathFilter.of(config.review_include, config.review_exclude)


def categories_off(config: RunConfig) -> list[str]:
    """The categories the config turns off, as category_key writes them."""
    return sorted({category_key(name) for name, on in config.categories.items() if not on})


class Baseline:
    """The accepted findings. A finding is accepted when it has an entry's fingerprint, or is the same
    finding as an entry (review.identity: same file, category and names, close words, a line within
    LINE_TOLERANCE, since code moves when lines are added above it). Entries are matched by their file,
    line, category and description, so those written under an older fingerprint rule still match."""

    def __init__(self, entries: Sequence[BaselineEntry]) -> None:
        self.entries = list(entries)
        self.fingerprints = {entry["fingerprint"] for entry in self.entries}
        self.nearby: NearbyFindings[None] = NearbyFindings()
        for entry in self.entries:
            self.nearby.add(Candidate.of(entry), None)

    def accepts(self, candidate: Candidate) -> bool:
        return candidate.fingerprint in self.fingerprints or bool(self.nearby.matches(candidate))


@dataclass(frozen=True)
class FindingRules:
    """What decides the drops of a round: the config, the baseline and the project's files."""

    config: RunConfig
    baseline: Baseline
    project_dir: Path | None
    paths: PathFilter
    off: frozenset[str]
    base: str | None = None  # the review's base commit for inline marks (None: HEAD)

    @classmethod
    def of(
        cls,
        config: RunConfig,
        entries: Sequence[BaselineEntry],
        project_dir: Path | None,
        base: str | None = None,
    ) -> FindingRules:
        off = frozenset(categories_off(config))
        return cls(config, Baseline(entries), project_dir, path_filter_of(config), off, base)


def finding_rules(state: Mapping[str, Any], config: RunConfig) -> FindingRules:
    """The rules of the run in `state`, with the project's baseline read now (INVALID_BASELINE when the
    file is broken: better no review than one that fixes what the team accepted)."""
    project = state.get("project_dir")
    root = Path(project) if isinstance(project, str) and project else None
    return FindingRules.of(
        config, load_baseline(root) if root is not None else [], root, review_base_of(state)
    )


def review_base_of(state: Mapping[str, Any]) -> str | None:
    """The commit the run's change is compared with: its diff base, else its base_ref (None: HEAD)."""
    review_base = state.get("review_base")
    if isinstance(review_base, Mapping) and isinstance(review_base.get("diff_base"), str):
        return str(review_base["diff_base"]) or None
    base = state.get("base_ref")
    return base if isinstance(base, str) and base else None


def accepted_in_scope(rules: FindingRules, scope: Sequence[str]) -> list[BaselineEntry]:
    """The baseline's findings in the files a round reviews (what the reviewers are told to leave out)."""
    files = set(scope)
    return [entry for entry in rules.baseline.entries if normalize_file(entry["file"]) in files]


@dataclass
class Suppression:
    kept: list[Merged] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)  # a short record of each, with its reason
    new_marks: list[dict[str, Any]] = field(
        default_factory=list
    )  # kept findings under a mark the change added

    @property
    def counts(self) -> dict[str, int]:
        """Dropped findings per reason, in REASONS order, reasons with none left out."""
        found = [item["reason"] for item in self.dropped]
        return {reason: found.count(reason) for reason in REASONS if reason in found}


def _record(fingerprint: str, issue: Mapping[str, Any], reason: str) -> dict[str, Any]:
    return {
        "fingerprint": fingerprint,
        "file": issue.get("file"),
        "line": issue.get("line"),
        "category": issue.get("category"),
        "severity": issue.get("severity"),
        "confidence": issue.get("confidence"),
        "reason": reason,
    }


def _rule_reason(
    candidate: Candidate, issue: Mapping[str, Any], rules: FindingRules, marks: tuple[SourceLines, BaseMarks]
) -> str | None:
    if not rules.paths.keeps(str(issue.get("file") or "")):
        return "path_filter"
    if rules.baseline.accepts(candidate):
        return "baseline"
    mark = inline_mark(issue, *marks)
    if mark == COUNTED:
        return "inline_ignore"
    if mark == NEW:
        return NEW
    return _later_reason(issue, rules)


def _later_reason(issue: Mapping[str, Any], rules: FindingRules) -> str | None:
    """The reasons checked after inline marks, for a finding whose mark does not count."""
    if category_key(str(issue.get("category") or "")) in rules.off:
        return "category_off"
    if SEVERITY_RANK.get(str(issue.get("severity")), 0) < SEVERITY_RANK[rules.config.min_severity]:
        return "below_min_severity"
    return None


def _importance(issue: Mapping[str, Any]) -> tuple[int, int]:
    return SEVERITY_RANK.get(str(issue.get("severity")), 0), int(issue.get("confidence") or 0)


def suppress(merged: Sequence[Merged], rules: FindingRules) -> Suppression:
    """Split a round's merged findings into those kept (in their order) and those dropped."""
    marks = (SourceLines(rules.project_dir), BaseMarks(rules.project_dir, rules.base))
    result = Suppression()
    candidates: list[tuple[int, Merged]] = []
    for index, pair in enumerate(merged):
        candidate, issue = pair
        reason = _rule_reason(candidate, issue, rules, marks)
        if reason == NEW:
            result.new_marks.append(_record(candidate.fingerprint, issue, "inline_mark_new"))
            reason = _later_reason(issue, rules)
        if reason is None:
            candidates.append((index, pair))
        else:
            result.dropped.append(_record(candidate.fingerprint, issue, reason))
    limit = rules.config.max_findings
    if limit is not None and len(candidates) > limit:
        ranked = sorted(candidates, key=lambda item: (_importance(item[1][1]), -item[0]), reverse=True)
        over = {index for index, _pair in ranked[limit:]}
        for index, (candidate, issue) in candidates:
            if index in over:
                result.dropped.append(_record(candidate.fingerprint, issue, "over_max_findings"))
        candidates = [item for item in candidates if item[0] not in over]
    result.kept = [pair for _index, pair in candidates]
    return result


def record_suppression(rnd: Round, suppression: Suppression) -> None:
    """Keep the drops in the round: `suppressed` (count per reason) and `suppressed_findings`."""
    record = cast(dict[str, Any], rnd)  # both keys are optional parts of a round's record
    record["suppressed"] = suppression.counts
    record["suppressed_findings"] = suppression.dropped
    if suppression.new_marks:
        record["inline_marks_refused"] = suppression.new_marks


def suppressed_counts(rnd: Mapping[str, Any]) -> dict[str, int]:
    """A round's dropped findings per reason ({} for a round closed before the engine dropped any)."""
    counts = rnd.get("suppressed")
    if not isinstance(counts, dict):
        return {}
    return {str(key): int(value) for key, value in counts.items() if isinstance(value, int) and value > 0}
